"""The Debian origin: a pinned `.orig.tar.gz` becomes one deterministic commit, checked first."""

from __future__ import annotations

import hashlib
import io
import shutil
import tarfile
from pathlib import Path

import pytest
from workspace_helpers import sh

from copeca_action.errors import WorkspaceError
from copeca_action.scenario import RepoSpec, load_repos
from copeca_action.workspace import SnapshotStore, origin_of
from copeca_action.workspace._debian import download_orig


def _orig(folder: Path, members: dict[str, bytes], name: str = "demo_1.0.orig.tar.gz") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    with tarfile.open(path, "w:gz") as tf:
        for member, data in members.items():
            info = tarfile.TarInfo(member)
            info.size = len(data)
            info.mtime = 1
            tf.addfile(info, io.BytesIO(data))
    return path


def _spec(archive: Path, **extra: object) -> RepoSpec:
    digest = hashlib.sha256(archive.read_bytes()).hexdigest()
    return RepoSpec.model_validate({"language": "python", "debian": {
        "package": "demo", "version": "1.0", "sha256": digest,
        "upstream_commit": "0" * 40}, **extra})


FILES = {"demo-1.0/app.py": b"print(1)\n", "demo-1.0/pkg/mod.py": b"X = 2\n"}


def test_debian_tarball_becomes_one_deterministic_commit(tmp_path: Path) -> None:
    archive = _orig(tmp_path / "dl", FILES)
    spec = _spec(archive)
    store = SnapshotStore(tmp_path / "a", {"demo": spec}, sdist_dirs=[tmp_path / "dl"])
    snap = store.fetch("demo", network=False)
    assert snap.origin == "debian" and archive.name in snap.source
    files = sh("git", "--git-dir", snap.git_dir, "ls-tree", "-r", "--name-only", snap.commit)
    assert files.splitlines() == ["app.py", "pkg/mod.py"]  # top folder stripped
    assert sh("git", "--git-dir", snap.git_dir, "rev-list", "--count", snap.commit) == "1"
    other = SnapshotStore(tmp_path / "b", {"demo": spec}, sdist_dirs=[tmp_path / "dl"])
    assert other.fetch("demo", network=False).commit == snap.commit
    assert store.verify(snap) == []
    assert store.get("demo").commit == snap.commit


def test_debian_comes_after_sdist_and_before_local_and_git(tmp_path: Path) -> None:
    spec = _spec(_orig(tmp_path, FILES),
                 git={"url": "https://example.invalid/x", "commit": "0" * 40},
                 local={"path": str(tmp_path)})
    assert origin_of(spec) == "debian"
    assert origin_of(spec, "1" * 40) == "local"


def test_wrong_sha256_is_ignored_offline_and_verify_sees_a_changed_file(tmp_path: Path) -> None:
    archive = _orig(tmp_path / "dl", FILES)
    spec = _spec(archive)
    bad = spec.model_copy(update={"debian": spec.debian.model_copy(  # type: ignore[union-attr]
        update={"sha256": "f" * 64})})
    store = SnapshotStore(tmp_path / "c", {"demo": bad}, sdist_dirs=[tmp_path / "dl"])
    with pytest.raises(WorkspaceError, match="not in"):
        store.fetch("demo", network=False)
    good = SnapshotStore(tmp_path / "d", {"demo": spec}, sdist_dirs=[tmp_path / "dl"])
    snap = good.fetch("demo", network=False)
    _orig(tmp_path / "dl", {"demo-1.0/app.py": b"tampered\n"})
    assert "gone from the cache" in good.verify(snap)[0]


def test_escaping_member_is_refused(tmp_path: Path) -> None:
    archive = _orig(tmp_path / "dl", {"demo-1.0/ok.py": b"", "../evil.py": b"x"})
    store = SnapshotStore(tmp_path / "e", {"demo": _spec(archive)},
                          sdist_dirs=[tmp_path / "dl"])
    with pytest.raises((WorkspaceError, tarfile.TarError)):
        store.fetch("demo", network=False)
    assert not (tmp_path / "evil.py").exists()


def test_real_express_tarball_from_apt(tmp_path: Path, corpus_root: Path) -> None:
    if shutil.which("apt-get") is None:
        pytest.skip("no apt-get on this machine")
    spec = load_repos(corpus_root / "repos.yaml")["express"]
    assert spec.debian is not None
    try:
        archive = download_orig(spec.debian, tmp_path / "dl")
    except WorkspaceError as exc:
        pytest.skip(f"apt cannot fetch {spec.debian.filename}: {exc}")
    store = SnapshotStore(tmp_path / "s", {"express": spec}, sdist_dirs=[archive.parent])
    snap = store.fetch("express", network=False)
    assert snap.origin == "debian"
    files = sh("git", "--git-dir", snap.git_dir, "ls-tree", "-r", "--name-only", snap.commit)
    assert "lib/express.js" in files.splitlines()
    assert store.verify(snap) == []


def test_an_xz_tarball_without_upstream_commit_is_an_origin(tmp_path: Path) -> None:
    """Repacked Java tarballs are `.orig.tar.xz` and do not record the tag's commit."""
    folder = tmp_path / "dl"
    folder.mkdir()
    archive = folder / "demo_1.0.orig.tar.xz"
    with tarfile.open(archive, "w:xz") as tf:
        for member, data in FILES.items():
            info = tarfile.TarInfo(member)
            info.size = len(data)
            info.mtime = 1
            tf.addfile(info, io.BytesIO(data))
    digest = hashlib.sha256(archive.read_bytes()).hexdigest()
    spec = RepoSpec.model_validate({"language": "java", "debian": {
        "package": "demo", "version": "1.0", "sha256": digest, "compression": "xz",
        "upstream_tag": "demo-1.0"}})
    assert spec.debian is not None and spec.debian.filename == archive.name
    snap = SnapshotStore(tmp_path / "s", {"demo": spec}, sdist_dirs=[folder]).fetch(
        "demo", network=False)
    files = sh("git", "--git-dir", snap.git_dir, "ls-tree", "-r", "--name-only", snap.commit)
    assert files.splitlines() == ["app.py", "pkg/mod.py"]


def test_a_missing_component_tarball_does_not_lose_the_main_one(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """apt exits 100 when a component (`.orig-types-yargs`) is gone from the mirror after the
    main tarball arrived; the main tarball is still used (its sha256 is checked after)."""
    archive = _orig(tmp_path / "src", FILES)
    spec = _spec(archive)
    assert spec.debian is not None

    class Proc:
        returncode = 100
        stdout = ""
        stderr = "E: Failed to fetch demo_1.0.orig-types.tar.gz  404  Not Found"

    def fake_run(argv: list[str], cwd: Path, **_: object) -> Proc:
        shutil.copy(archive, Path(cwd) / archive.name)
        return Proc()

    monkeypatch.setattr("copeca_action.workspace._debian.subprocess.run", fake_run)
    got = download_orig(spec.debian, tmp_path / "dl")
    assert got.name == archive.name

    def failing_run(argv: list[str], cwd: Path, **_: object) -> Proc:
        return Proc()

    monkeypatch.setattr("copeca_action.workspace._debian.subprocess.run", failing_run)
    with pytest.raises(WorkspaceError, match="exit 100"):
        download_orig(spec.debian, tmp_path / "dl2")
