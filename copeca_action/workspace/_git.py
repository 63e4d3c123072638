"""Running git: one place, a fixed environment, errors that say which command failed."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path

from copeca_action.errors import WorkspaceError

SNAPSHOT_IDENTITY = {
    "GIT_AUTHOR_NAME": "copeca-action",
    "GIT_AUTHOR_EMAIL": "snapshots@copeca-action.invalid",
    "GIT_AUTHOR_DATE": "2000-01-01T00:00:00+0000",
    "GIT_COMMITTER_NAME": "copeca-action",
    "GIT_COMMITTER_EMAIL": "snapshots@copeca-action.invalid",
    "GIT_COMMITTER_DATE": "2000-01-01T00:00:00+0000",
}
"""Fixed identity and date: the same files always give the same snapshot commit id."""

_BASE_CONFIG = ("-c", "core.autocrlf=false", "-c", "core.safecrlf=false",
                "-c", "core.filemode=true", "-c", "core.symlinks=true",
                "-c", "gc.auto=0", "-c", "advice.detachedHead=false",
                "-c", "init.defaultBranch=main", "-c", "commit.gpgsign=false")


def git_env(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The host env minus the user's git config and any GIT_* that would redirect git."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update({"GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull,
                "GIT_TERMINAL_PROMPT": "0", "LC_ALL": "C"})
    env.update(extra or {})
    return env


def git(args: Sequence[str], *, cwd: Path | None = None, git_dir: Path | None = None,
        env: Mapping[str, str] | None = None, input_text: str | None = None,
        check: bool = True) -> subprocess.CompletedProcess[str]:
    """Run `git ARGS`; a failure raises WorkspaceError quoting the command and its stderr."""
    argv = ["git", *_BASE_CONFIG]
    if git_dir is not None:
        argv += ["--git-dir", str(git_dir)]
    argv += list(args)
    try:
        proc = subprocess.run(argv, cwd=cwd, env=git_env(env), input=input_text,
                              capture_output=True, text=True, check=False,
                              stdin=None if input_text is not None else subprocess.DEVNULL)
    except FileNotFoundError as exc:
        raise WorkspaceError("git is not installed (it is needed for snapshots and "
                             "worktrees; e.g. `apt-get install git`)") from exc
    if check and proc.returncode != 0:
        shown = " ".join(args)
        raise WorkspaceError(f"`git {shown}` failed (exit {proc.returncode}): "
                             f"{proc.stderr.strip() or proc.stdout.strip()}")
    return proc


def has_commit(git_dir: Path, commit: str) -> bool:
    return git(["cat-file", "-e", f"{commit}^{{commit}}"], git_dir=git_dir,
               check=False).returncode == 0


def rev_parse(ref: str, *, cwd: Path | None = None, git_dir: Path | None = None) -> str:
    return git(["rev-parse", "--verify", f"{ref}^{{commit}}"], cwd=cwd,
               git_dir=git_dir).stdout.strip()
