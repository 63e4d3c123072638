from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest
from workspace_helpers import FASTAPI_SNAPSHOT_COMMIT, git_spec, sh

from copeca_action.errors import WorkspaceError
from copeca_action.scenario import RepoSpec, load_repos
from copeca_action.workspace import Snapshot, SnapshotStore


def test_fastapi_sdist_unpacks_to_one_deterministic_commit(fastapi_snapshot: Snapshot,
                                                          tmp_path: Path,
                                                          corpus_root: Path) -> None:
    assert fastapi_snapshot.origin == "sdist"
    assert fastapi_snapshot.commit == FASTAPI_SNAPSHOT_COMMIT
    gd = Path(fastapi_snapshot.git_dir)
    assert sh("git", "--git-dir", str(gd), "rev-list", "--count", "HEAD") == "1"
    files = sh("git", "--git-dir", str(gd), "ls-tree", "-r", "--name-only", "HEAD").splitlines()
    assert "fastapi/utils.py" in files and "tests/test_generate_unique_id_function.py" in files
    # a second, independent cache derives the very same commit id
    again = SnapshotStore(tmp_path / "other", load_repos(corpus_root / "repos.yaml"))
    assert again.fetch("fastapi", network=False).commit == FASTAPI_SNAPSHOT_COMMIT


def test_fetch_is_idempotent_and_listed(fastapi_store: SnapshotStore,
                                        fastapi_snapshot: Snapshot) -> None:
    assert fastapi_store.fetch("fastapi", network=False) == fastapi_snapshot
    assert [s.repo for s in fastapi_store.snapshots()] == ["fastapi"]
    assert fastapi_store.verify(fastapi_snapshot) == []


def test_sdist_with_wrong_sha256_is_refused_before_unpacking(tmp_path: Path,
                                                             corpus_root: Path) -> None:
    fake = tmp_path / "dl"
    fake.mkdir()
    shutil.copy(corpus_root / "snapshots" / "fastapi-0.115.6.tar.gz", fake)
    spec = RepoSpec.model_validate({"language": "python", "sdist": {
        "name": "fastapi", "version": "0.115.6", "sha256": "0" * 64}})
    store = SnapshotStore(tmp_path / "cache", {"fastapi": spec}, sdist_dirs=[fake])
    with pytest.raises(WorkspaceError, match="is not in"):
        store.fetch("fastapi", network=False)
    assert not (tmp_path / "cache" / "repos" / "fastapi.sdist.git").exists()


def test_missing_snapshot_names_the_fetch_command(tmp_path: Path) -> None:
    spec = RepoSpec.model_validate({"language": "python", "sdist": {
        "name": "nosuchproject", "version": "1.0", "sha256": "1" * 64}})
    store = SnapshotStore(tmp_path, {"nope": spec})
    with pytest.raises(WorkspaceError, match="snapshot fetch nope"):
        store.get("nope")


def test_git_pin_mirrors_a_local_origin(tmp_path: Path,
                                        origin_repo: tuple[Path, list[str]]) -> None:
    repo, (first, second) = origin_repo
    store = SnapshotStore(tmp_path / "cache", {"app": git_spec(str(repo), second)})
    snap = store.fetch("app")
    assert (snap.origin, snap.commit) == ("git", second)
    assert store.get("app", commit_override=first).commit == first
    assert store.verify(snap) == []


def test_commit_not_in_mirror_is_a_clear_error(tmp_path: Path,
                                               origin_repo: tuple[Path, list[str]]) -> None:
    repo, _ = origin_repo
    store = SnapshotStore(tmp_path / "cache", {"app": git_spec(str(repo), "ab" * 20)})
    with pytest.raises(WorkspaceError, match="not in the mirror"):
        store.fetch("app")
    good = SnapshotStore(tmp_path / "c2", {"app": git_spec(str(repo), origin_repo[1][1])})
    good.fetch("app")
    with pytest.raises(WorkspaceError, match="is not in the git snapshot"):
        good.get("app", commit_override="cd" * 20)


def test_local_pin_records_head_and_follows_it_on_refresh(
        tmp_path: Path, origin_repo: tuple[Path, list[str]]) -> None:
    repo, (_, second) = origin_repo
    spec = RepoSpec.model_validate({"language": "python", "local": {"path": str(repo)}})
    store = SnapshotStore(tmp_path / "cache", {"app": spec})
    assert store.fetch("app").commit == second
    (repo / "new.txt").write_text("x\n")
    sh("git", "add", ".", cwd=repo)
    sh("git", "commit", "-q", "-m", "third", cwd=repo)
    third = sh("git", "rev-parse", "HEAD", cwd=repo)
    assert store.fetch("app").commit == second  # cached until refreshed
    assert store.fetch("app", refresh=True).commit == third


def test_setup_runs_once_per_snapshot(tmp_path: Path,
                                      origin_repo: tuple[Path, list[str]]) -> None:
    repo, (_, second) = origin_repo
    counter = tmp_path / "count"
    cmd = [sys.executable, "-c", f"open({str(counter)!r}, 'a').write('x')"]
    store = SnapshotStore(tmp_path / "cache", {"app": git_spec(str(repo), second)})
    snap = store.fetch("app")
    env = {"PATH": "/usr/bin:/bin"}
    first = store.ensure_setup(snap, [cmd], env)
    second_call = store.ensure_setup(snap, [cmd], env)
    assert first == second_call and first is not None and (first / "app.py").is_file()
    assert counter.read_text() == "x"
    assert store.ensure_setup(snap, [], env) is None


def test_failing_setup_raises_and_is_retried(tmp_path: Path,
                                             origin_repo: tuple[Path, list[str]]) -> None:
    repo, (_, second) = origin_repo
    store = SnapshotStore(tmp_path / "cache", {"app": git_spec(str(repo), second)})
    snap = store.fetch("app")
    with pytest.raises(WorkspaceError, match=r"set-up command .* failed"):
        store.ensure_setup(snap, [["false"]], {"PATH": "/usr/bin:/bin"})
    with pytest.raises(WorkspaceError):  # no stamp was written: it runs again
        store.ensure_setup(snap, [["false"]], {"PATH": "/usr/bin:/bin"})


def test_verify_notices_a_changed_pin(tmp_path: Path,
                                      origin_repo: tuple[Path, list[str]]) -> None:
    repo, (first, second) = origin_repo
    store = SnapshotStore(tmp_path / "cache", {"app": git_spec(str(repo), second)})
    snap = store.fetch("app")
    changed = SnapshotStore(tmp_path / "cache", {"app": git_spec(str(repo), first)})
    assert any("pin changed" in p for p in changed.verify(snap))
