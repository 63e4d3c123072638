from __future__ import annotations

from pathlib import Path

import pytest
from workspace_helpers import FASTAPI_SNAPSHOT_COMMIT, sh

from copeca_action.errors import WorkspaceError
from copeca_action.scenario import Mutation
from copeca_action.workspace import (
    Snapshot,
    add_worktree,
    capture_patch,
    check_mutations,
    instruction_files,
    prune_worktrees,
    read_file_at,
    remove_worktree,
)

BUG = Mutation(file="fastapi/utils.py",
               search='operation_id = f"{operation_id}_{list(route.methods)[0].lower()}"',
               replace='operation_id = f"{operation_id}_{list(route.methods)[0]}"')


def test_worktree_is_detached_at_the_pinned_commit(fastapi_snapshot: Snapshot,
                                                    tmp_path: Path) -> None:
    wt = add_worktree(Path(fastapi_snapshot.git_dir), fastapi_snapshot.commit, tmp_path / "r1")
    path = Path(wt.path)
    assert wt.commit == wt.snapshot_commit == FASTAPI_SNAPSHOT_COMMIT
    assert sh("git", "rev-parse", "HEAD", cwd=path) == FASTAPI_SNAPSHOT_COMMIT
    assert sh("git", "status", "--porcelain", cwd=path) == ""
    assert sh("git", "branch", "--show-current", cwd=path) == ""  # detached
    remove_worktree(Path(wt.git_dir), path)
    assert not path.exists()
    assert str(path) not in sh("git", "--git-dir", wt.git_dir, "worktree", "list")


def test_mutation_is_committed_so_diff_and_log_do_not_reveal_it(fastapi_snapshot: Snapshot,
                                                                tmp_path: Path) -> None:
    wt = add_worktree(Path(fastapi_snapshot.git_dir), fastapi_snapshot.commit, tmp_path / "r2",
                      [BUG])
    path = Path(wt.path)
    assert wt.commit != FASTAPI_SNAPSHOT_COMMIT
    assert BUG.replace in (path / "fastapi/utils.py").read_text()
    assert sh("git", "diff", "HEAD", cwd=path) == ""
    assert sh("git", "status", "--porcelain", cwd=path) == ""
    log = sh("git", "log", "--format=%an|%ad|%s", cwd=path)
    orig = sh("git", "--git-dir", wt.git_dir, "log", "--format=%an|%ad|%s", wt.snapshot_commit)
    assert log == orig  # same single commit as far as history shows
    # the agent's edit is what the patch shows, against the mutated HEAD
    text = (path / "fastapi/utils.py").read_text().replace(BUG.replace, BUG.search)
    (path / "fastapi/utils.py").write_text(text)
    (path / "new_file.py").write_text("x = 1\n")
    patch = capture_patch(path, wt.commit, Path(wt.git_dir))
    assert ".lower()" in patch and "new_file.py" in patch
    remove_worktree(Path(wt.git_dir), path)


def test_mutation_preflight_and_plant_errors(fastapi_snapshot: Snapshot, tmp_path: Path) -> None:
    gd = Path(fastapi_snapshot.git_dir)
    text = read_file_at(gd, fastapi_snapshot.commit, "fastapi/utils.py")
    assert text is not None
    assert check_mutations({"fastapi/utils.py": text}, [BUG]) == []
    twice = Mutation(file="fastapi/utils.py", search="def ", replace="def  ")
    missing = Mutation(file="nope.py", search="a", replace="b")
    problems = check_mutations({"fastapi/utils.py": text}, [twice, missing])
    assert "must occur exactly once" in problems[0] and "does not exist" in problems[1]
    with pytest.raises(WorkspaceError, match="exactly once"):
        add_worktree(gd, fastapi_snapshot.commit, tmp_path / "r3", [twice])
    remove_worktree(gd, tmp_path / "r3")


def test_prune_removes_leftovers_of_a_crash(fastapi_snapshot: Snapshot, tmp_path: Path) -> None:
    gd = Path(fastapi_snapshot.git_dir)
    base = tmp_path / "work"
    add_worktree(gd, fastapi_snapshot.commit, base / "crashed")
    assert str(base / "crashed") in sh("git", "--git-dir", str(gd), "worktree", "list")
    assert prune_worktrees(gd, base) == 1
    assert not any(base.iterdir())
    assert str(base / "crashed") not in sh("git", "--git-dir", str(gd), "worktree", "list")


def test_instruction_files_are_found(tmp_path: Path) -> None:
    (tmp_path / "AGENTS.md").write_text("be brief\n")
    assert instruction_files(tmp_path) == ["AGENTS.md"]


def test_pool_reuses_a_worktree_reset_to_a_clean_checkout(fastapi_snapshot: Snapshot,
                                                           tmp_path: Path) -> None:
    from copeca_action.workspace import WorktreePool

    gd = Path(fastapi_snapshot.git_dir)
    pool = WorktreePool(tmp_path / "pool")
    first = pool.acquire(gd, fastapi_snapshot.commit, [BUG])
    path = Path(first.path)
    (path / "fastapi/utils.py").write_text("broken\n")
    (path / "notes.txt").write_text("agent notes\n")
    (path / "fastapi/__pycache__").mkdir(exist_ok=True)
    (path / "fastapi/__pycache__/x.pyc").write_bytes(b"\0")
    (path / "nested").mkdir()
    sh("git", "init", "-q", cwd=path / "nested")
    capture_patch(path, first.commit, gd)  # stages everything, as the engine does
    pool.release(first)
    second = pool.acquire(gd, fastapi_snapshot.commit)
    assert second.path == first.path and pool.reused == 1
    assert second.commit == FASTAPI_SNAPSHOT_COMMIT
    assert sh("git", "status", "--porcelain", "--ignored", cwd=path) == ""
    assert BUG.search in (path / "fastapi/utils.py").read_text()
    assert not (path / "notes.txt").exists() and not (path / "nested").exists()
    third = pool.acquire(gd, fastapi_snapshot.commit, [BUG])  # a second, fresh one
    assert third.path != second.path and BUG.replace in (
        Path(third.path) / "fastapi/utils.py").read_text()
    pool.release(second)
    pool.release(third)
    pool.close()
    assert not path.exists() and not Path(third.path).exists()
    assert "pool" not in sh("git", "--git-dir", str(gd), "worktree", "list")
