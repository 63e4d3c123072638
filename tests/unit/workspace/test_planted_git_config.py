"""An agent (or the tool beside it) writes its worktree's git data and, through git, the
snapshot's repository: whatever command it plants there (`core.fsmonitor`, a hook, a
`filter` driver named by `.gitattributes`, `diff.external`, a `commondir` leading to a
repository of its own) must never run in the harness's git calls, the patch must still be
the agent's real change, and the next run in the same pooled worktree must start clean."""

from __future__ import annotations

from pathlib import Path

import pytest
from workspace_helpers import sh

from copeca_action.workspace import (
    Worktree,
    WorktreePool,
    add_worktree,
    capture_patch,
    clean_tree,
    files_in_tree,
    head_of,
    read_file_at,
    remove_worktree,
)


@pytest.fixture()
def store(tmp_path: Path) -> tuple[Path, str]:
    """A small bare repository (its own: these tests poison it) and its commit."""
    src = tmp_path / "src"
    src.mkdir()
    sh("git", "init", "-q", "-b", "main", cwd=src)
    (src / "app.py").write_text("def answer():\n    return 41\n")
    (src / ".gitattributes").write_text("*.py filter=lfs diff=py\n")  # a driver it names
    sh("git", "add", ".", cwd=src)
    sh("git", "commit", "-q", "-m", "first", cwd=src)
    bare = tmp_path / "store.git"
    sh("git", "clone", "-q", "--bare", str(src), str(bare))
    return bare, sh("git", "rev-parse", "HEAD", cwd=src)


def evil(tmp_path: Path, what: str) -> str:
    """A command that leaves `escaped-<what>` beside the test's files when it runs."""
    script = tmp_path / f"evil-{what}.sh"
    script.write_text(f"#!/bin/sh\ntouch {tmp_path}/escaped-{what}\ncat\n")
    script.chmod(0o755)
    return str(script)


def poison_config(config: Path, tmp_path: Path, tag: str) -> None:
    """Every command-running key we know of, each with its own marker."""
    with config.open("a") as fh:
        fh.write(f"""[core]
\tfsmonitor = {evil(tmp_path, tag + "-fsmonitor")}
\thooksPath = {tmp_path / "hooks"}
\tpager = {evil(tmp_path, tag + "-pager")}
[filter "lfs"]
\tclean = {evil(tmp_path, tag + "-clean")}
\tsmudge = {evil(tmp_path, tag + "-smudge")}
\trequired = true
[diff]
\texternal = {evil(tmp_path, tag + "-external")}
[diff "py"]
\ttextconv = {evil(tmp_path, tag + "-textconv")}
""")


def poison_hooks(hooks: Path, tmp_path: Path) -> None:
    hooks.mkdir(parents=True, exist_ok=True)
    for name in ("post-checkout", "pre-commit", "post-index-change", "reference-transaction",
                 "pre-auto-gc", "post-commit"):
        hook = hooks / name
        hook.write_text(f"#!/bin/sh\ntouch {tmp_path}/escaped-hook-{name}\n")
        hook.chmod(0o755)


def escaped(tmp_path: Path) -> list[str]:
    return sorted(p.name for p in tmp_path.glob("escaped-*"))


def _changed_checkout(bare: Path, commit: str,
                      tmp_path: Path) -> tuple[WorktreePool, Worktree, Path]:
    """A pooled checkout of the store at `commit` with the agent's change to app.py."""
    pool = WorktreePool(tmp_path / "pool")
    wt = pool.acquire(bare, commit)
    path = Path(wt.path)
    (path / "app.py").write_text("def answer():\n    return 42\n")
    return pool, wt, path


def test_a_replaced_dot_git_is_never_obeyed_and_the_patch_is_the_agents(
        store: tuple[Path, str], tmp_path: Path) -> None:
    bare, commit = store
    pool, wt, path = _changed_checkout(bare, commit, tmp_path)
    # then its own repository in place of .git
    (path / "new.py").write_text("x = 1\n")
    (path / ".git").unlink()
    sh("git", "init", "-q", cwd=path)
    poison_config(path / ".git" / "config", tmp_path, "dotgit")
    poison_hooks(path / ".git" / "hooks", tmp_path)
    poison_hooks(tmp_path / "hooks", tmp_path)
    (path / ".gitattributes").write_text("* filter=lfs diff=py\n")
    nested = path / "vendor"
    nested.mkdir()
    sh("git", "init", "-q", cwd=nested)  # a fake nested repository
    (nested / "lib.py").write_text("y = 2\n")
    sh("git", "add", ".", cwd=nested)
    sh("git", "commit", "-q", "-m", "vendored", cwd=nested)
    poison_config(nested / ".git" / "config", tmp_path, "nested")
    poison_hooks(nested / ".git" / "hooks", tmp_path)

    patch = capture_patch(path, wt.commit, bare)
    assert head_of(path, bare) == commit
    assert escaped(tmp_path) == []
    assert "+    return 42" in patch and "new.py" in patch
    assert "filter=lfs diff=py" in patch  # the edited .gitattributes, as a change
    assert "escaped" not in patch

    pool.release(wt)
    again = pool.acquire(bare, commit)
    assert again.path == wt.path and pool.reused == 1
    assert escaped(tmp_path) == []
    # the next run finds a clean checkout and a working git of its own
    assert (path / ".git").is_file() and not nested.exists()
    assert (path / "app.py").read_text() == "def answer():\n    return 41\n"
    assert sh("git", "status", "--porcelain", "--ignored", cwd=path) == ""
    assert sh("git", "rev-parse", "HEAD", cwd=path) == commit
    pool.close()
    assert escaped(tmp_path) == []


def test_a_poisoned_store_and_a_rewritten_commondir_are_never_obeyed(
        store: tuple[Path, str], tmp_path: Path) -> None:
    bare, commit = store
    pool, wt, path = _changed_checkout(bare, commit, tmp_path)
    # the store's own config and hooks, and a commondir leading to the agent's repository
    poison_config(bare / "config", tmp_path, "store")
    poison_hooks(bare / "hooks", tmp_path)
    fake = tmp_path / "fake-common"
    sh("git", "init", "-q", "--bare", str(fake))
    poison_config(fake / "config", tmp_path, "commondir")
    admin = Path((path / ".git").read_text().removeprefix("gitdir: ").strip())
    (admin / "commondir").write_text(f"{fake}\n")
    (admin / "config.worktree").write_text(f"[core]\n\tfsmonitor = {evil(tmp_path, 'wt')}\n")

    patch = capture_patch(path, wt.commit, bare)
    assert "+    return 42" in patch
    pool.release(wt)
    again = pool.acquire(bare, commit)  # checkout, clean, status through the views
    other = add_worktree(bare, commit, tmp_path / "fresh")  # a new checkout from the store
    assert read_file_at(bare, commit, "app.py") == "def answer():\n    return 41\n"
    assert files_in_tree(bare, commit, {"a": (path / "app.py", "app.py")}) == {"a": "app.py"}
    exported = clean_tree(bare, commit, tmp_path / "clean")
    assert (exported / "app.py").read_text() == "def answer():\n    return 41\n"
    assert escaped(tmp_path) == []
    # the agent's git is pointed at the real repository again
    assert (admin / "commondir").read_text() == "../..\n"
    assert not (admin / "config.worktree").exists()
    assert sh("git", "rev-parse", "HEAD", cwd=Path(again.path)) == commit
    remove_worktree(bare, Path(other.path))
    pool.close()
    assert escaped(tmp_path) == []


def test_a_worktree_replaced_by_a_link_is_not_followed(store: tuple[Path, str],
                                                       tmp_path: Path) -> None:
    """The agent's folder swapped for a link to the harness's files: the reset must not
    clean where it leads, and the pool makes a new worktree instead."""
    bare, commit = store
    precious = tmp_path / "precious"
    precious.mkdir()
    (precious / "keep.txt").write_text("mine\n")
    pool = WorktreePool(tmp_path / "pool")
    wt = pool.acquire(bare, commit)
    path = Path(wt.path)
    remove_worktree(bare, path)
    path.symlink_to(precious)
    pool.release(wt)
    again = pool.acquire(bare, commit)
    assert (precious / "keep.txt").read_text() == "mine\n"
    assert Path(again.path).is_dir() and not Path(again.path).is_symlink()
    pool.close()
    assert (precious / "keep.txt").exists()
