"""Reusing worktrees: making a checkout writes every file of the repository, resetting one
writes only what the last run changed. A released worktree is reset (forced checkout of the
next commit, then `git clean -ffdx`, both through the harness's view, never the worktree's
`.git`) and its `.git` and admin folder written afresh before another run gets it; if a
reset fails it is removed and a fresh one made."""

from __future__ import annotations

import functools
import threading
from collections.abc import Sequence
from pathlib import Path

from copeca_action.errors import WorkspaceError
from copeca_action.scenario import Mutation
from copeca_action.workspace._git import git, worktree_view
from copeca_action.workspace._worktree import (
    Worktree,
    add_worktree,
    plant,
    publish,
    remove_worktree,
)


def reset_worktree(path: Path, commit: str, git_dir: Path) -> None:
    """Make `path` exactly `commit`: tracked files restored, everything else deleted (nested
    repositories too), the agent's `.git` and admin folder written afresh. A folder that is
    no longer a folder (a link left in its place) or that this process did not make is
    refused (WorkspaceError): the pool then removes it and makes a new one."""
    if path.is_symlink() or not path.is_dir() or not (worktree_view(path) / "HEAD").is_file():
        raise WorkspaceError(f"worktree {path} is not one this process made")
    at = functools.partial(git, git_dir=git_dir, work_tree=path)
    at(["checkout", "--quiet", "--force", "--detach", commit])
    at(["clean", "-ffdxq"])
    dirty = at(["status", "--porcelain", "--ignored", "--ignore-submodules=all"]).stdout.strip()
    if dirty:
        raise WorkspaceError(f"worktree {path} is not clean after a reset: {dirty[:200]}")
    publish(git_dir, path)


class WorktreePool:
    """Worktrees under `root`, handed out per run and taken back after it."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._idle: dict[str, list[Path]] = {}
        self._all: dict[Path, Path] = {}
        self._lock = threading.Lock()
        self._count = 0
        self.reused = 0

    def acquire(self, git_dir: Path, commit: str,
                mutations: Sequence[Mutation] = ()) -> Worktree:
        with self._lock:
            idle = self._idle.get(str(git_dir))
            path = idle.pop() if idle else None
            if path is None:
                self._count += 1
                path = self.root / f"wt-{self._count:04d}"
        if path.exists() or path.is_symlink():
            try:
                reset_worktree(path, commit, git_dir)
                head = plant(path, mutations, git_dir) if mutations else commit
                with self._lock:
                    self.reused += 1
                return Worktree(path=str(path), git_dir=str(git_dir), snapshot_commit=commit,
                                commit=head)
            except (WorkspaceError, OSError):
                remove_worktree(git_dir, path)
        wt = add_worktree(git_dir, commit, path, mutations)
        with self._lock:
            self._all[path] = git_dir
        return wt

    def release(self, wt: Worktree) -> None:
        with self._lock:
            self._idle.setdefault(wt.git_dir, []).append(Path(wt.path))

    def discard(self, wt: Worktree) -> None:
        """Remove a worktree that must not be reused."""
        with self._lock:
            self._all.pop(Path(wt.path), None)
        remove_worktree(Path(wt.git_dir), Path(wt.path))

    def close(self) -> None:
        """Remove every worktree the pool made."""
        with self._lock:
            items = list(self._all.items())
            self._all.clear()
            self._idle.clear()
        for path, git_dir in items:
            remove_worktree(git_dir, path)
