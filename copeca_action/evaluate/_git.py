"""The git plumbing evaluation needs: a base commit for any checkout, private clones, commits.

Evaluation never writes into the user's repository: every tree is a `--shared` clone (objects
borrowed read-only through alternates) in a temporary folder.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path

from copeca_action.errors import InfraError, WorkspaceError
from copeca_action.workspace._git import HARDENING, git_env

IDENTITY = {"GIT_AUTHOR_NAME": "copeca-eval", "GIT_AUTHOR_EMAIL": "eval@copeca.invalid",
            "GIT_COMMITTER_NAME": "copeca-eval", "GIT_COMMITTER_EMAIL": "eval@copeca.invalid",
            "GIT_AUTHOR_DATE": "2000-01-01T00:00:00Z",
            "GIT_COMMITTER_DATE": "2000-01-01T00:00:00Z"}
"""Fixed identity and dates: the same inputs give the same commit ids."""


def git(cwd: Path, *argv: str, check: bool = True, stdin: str | None = None,
        env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """Run git with a fixed identity, no user config, no hooks or fsmonitor (`HARDENING`)
    and the allow-listed environment of the workspace's git (`git_env`: no API key, no
    token reaches git or a program it starts)."""
    full_env = git_env({**IDENTITY, **(env or {})})
    proc = subprocess.run(["git", *HARDENING, "-c", "core.autocrlf=false",
                           "-c", "commit.gpgsign=false", *argv], cwd=cwd, env=full_env,
                          input=stdin, capture_output=True, encoding="utf-8",
                          errors="replace", check=False)
    if check and proc.returncode != 0:
        raise InfraError(f"git {' '.join(argv)} failed in {cwd}: "
                         f"{(proc.stderr or proc.stdout).strip()}")
    return proc


@dataclass(frozen=True)
class BaseRepo:
    """A git repository and the commit every evaluation tree starts from."""

    path: Path
    commit: str


_LOCK = threading.Lock()
_IMPORTED: dict[tuple[str, str], BaseRepo] = {}


def base_repo(checkout: Path, commit: str | None = None, cache_dir: Path | None = None) -> BaseRepo:
    """The base for `checkout`: the repository itself when it is a git checkout (at `commit`
    or HEAD), else a one-commit repository made from its files (an unpacked sdist), cached
    per content so repeated evaluations reuse it."""
    checkout = checkout.resolve()
    if not checkout.is_dir():
        raise WorkspaceError(f"--repo-dir {checkout}: no such directory")
    top = git(checkout, "rev-parse", "--show-toplevel", check=False)
    if top.returncode == 0 and Path(top.stdout.strip()).resolve() == checkout:
        rev = git(checkout, "rev-parse", "--verify", f"{commit or 'HEAD'}^{{commit}}", check=False)
        if rev.returncode != 0:
            raise WorkspaceError(f"{checkout}: commit {commit or 'HEAD'} not found")
        return BaseRepo(checkout, rev.stdout.strip())
    if commit:
        raise WorkspaceError(f"{checkout} is not a git checkout, so commit {commit} cannot be had")
    return _import_tree(checkout, cache_dir)


def _import_tree(checkout: Path, cache_dir: Path | None) -> BaseRepo:
    key = (str(checkout), _tree_stamp(checkout))
    with _LOCK:
        if key in _IMPORTED and _IMPORTED[key].path.is_dir():
            return _IMPORTED[key]
        root = cache_dir or Path(tempfile.gettempdir()) / "copeca-eval-bases"
        dest = root / hashlib.sha256("\0".join(key).encode()).hexdigest()[:16]
        if not (dest / ".git").is_dir():
            tmp = Path(tempfile.mkdtemp(prefix="import-", dir=_mkdir(root)))
            shutil.copytree(checkout, tmp, dirs_exist_ok=True, symlinks=True,
                            ignore=shutil.ignore_patterns(".git"))
            git(tmp, "init", "-q", "-b", "base")
            git(tmp, "add", "-A", "-f", ".")
            git(tmp, "commit", "-q", "--allow-empty", "-m", f"snapshot of {checkout.name}")
            try:
                tmp.rename(dest)
            except OSError:  # another process made it first: theirs is as good as ours
                shutil.rmtree(tmp, ignore_errors=True)
        commit = git(dest, "rev-parse", "HEAD").stdout.strip()
        _IMPORTED[key] = BaseRepo(dest, commit)
        return _IMPORTED[key]


def _mkdir(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    return path


def _tree_stamp(checkout: Path) -> str:
    """Cheap change detector: names, sizes and mtimes of every file."""
    digest = hashlib.sha256()
    for dirpath, dirnames, filenames in os.walk(checkout):
        dirnames[:] = sorted(d for d in dirnames if d != ".git")
        for name in sorted(filenames):
            st = os.lstat(os.path.join(dirpath, name))
            digest.update(f"{dirpath}/{name}:{st.st_size}:{st.st_mtime_ns}\n".encode())
    return digest.hexdigest()


def clone_tree(base: BaseRepo, parent: Path) -> Path:
    """A private working tree at the base commit, sharing the base's objects."""
    dest = Path(tempfile.mkdtemp(prefix="tree-", dir=_mkdir(parent)))
    git(parent, "clone", "-q", "--shared", "--no-checkout", str(base.path), str(dest))
    git(dest, "checkout", "-q", "--detach", base.commit)
    return dest


def commit_all(tree: Path, message: str) -> str:
    """Commit everything in the tree (new files included); the new commit id."""
    git(tree, "add", "-A", "-f", ".")
    git(tree, "commit", "-q", "--allow-empty", "--no-verify", "-m", message)
    return git(tree, "rev-parse", "HEAD").stdout.strip()


def reset_tree(tree: Path, commit: str) -> None:
    """Back to `commit` exactly: tracked changes undone, untracked and ignored files gone."""
    git(tree, "reset", "-q", "--hard", commit)
    git(tree, "clean", "-q", "-f", "-d", "-x")
