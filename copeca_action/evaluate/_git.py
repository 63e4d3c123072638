"""The git plumbing evaluation needs: a base commit for any checkout, private clones, commits.

Evaluation never writes into the user's repository: every tree is a private clone whose
objects are borrowed read-only through alternates, in a temporary folder.

The graded code (the repository's tests, the agent's code they import) runs over the tree and
may write all of it. So the tree holds no `.git`: its git data is a folder of the harness's
own beside it (`<tree>.git`: the harness's config, HEAD, index, alternates), and every git
call on the tree names it (`GIT_DIR`, `GIT_WORK_TREE`), so a `.git`, a config, hooks or
attributes planted in the tree are never read by the harness (a planted `.git` is just a file
of the tree, which git never tracks). The sandbox shows that folder to no graded code
(`bwrap` blanks the temporary folders and the output folder; a container gets only the tree),
or read-only (`unshare`'s mounts, `harness-ro`); whatever the level it is checked before
every git call and after every graded run: a change is a harness error of that evaluation
(`GitDataTampered`), never the agent's wrong answer, and git is not run over it.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import shutil
import subprocess
import tempfile
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from copeca_action.errors import InfraError, WorkspaceError
from copeca_action.workspace._git import HARDENING, git_env

IDENTITY = {"GIT_AUTHOR_NAME": "copeca-eval", "GIT_AUTHOR_EMAIL": "eval@copeca.invalid",
            "GIT_COMMITTER_NAME": "copeca-eval", "GIT_COMMITTER_EMAIL": "eval@copeca.invalid",
            "GIT_AUTHOR_DATE": "2000-01-01T00:00:00Z",
            "GIT_COMMITTER_DATE": "2000-01-01T00:00:00Z"}
"""Fixed identity and dates: the same inputs give the same commit ids."""


EVAL_HARDENING = ("-c", "diff.ignoreSubmodules=all")
"""Besides `HARDENING`: a gitlink's folder (a nested repository the graded code made) is never
entered (git would run `git status` there, under that repository's own config)."""


class GitDataTampered(InfraError):
    """An evaluation clone's git data (the harness's own, beside the tree) was changed."""


@dataclass(frozen=True)
class _Clone:
    """A tree's private git data, and what the harness wrote there."""

    git_dir: Path
    written: dict[str, bytes]
    """Files the harness wrote (relative to `git_dir`) and their bytes."""


_CLONES: dict[Path, _Clone] = {}
_UNION = b"* merge=union\n"
_MERGING: set[Path] = set()
_FORBIDDEN = ("hooks", "commondir", "gitdir", "config.worktree", "info/attributes",
              "objects/info/http-alternates")
"""Files the harness never writes in a clone's git data (`info/attributes` only for the
moment of a union merge, see `union_attributes`): any of them present is tampering."""
_FORMAT = re.compile(r"^\s*objectformat\s*=\s*(sha1|sha256)\s*$", re.I | re.M)


def git(cwd: Path, *argv: str, check: bool = True, stdin: str | None = None,
        env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """Run git with a fixed identity, no user config, no hooks or fsmonitor (`HARDENING`)
    and the allow-listed environment of the workspace's git (`git_env`: no API key, no
    token reaches git or a program it starts). In an evaluation tree (`clone_tree`) git
    reads only the tree's private git data, checked first (`verify_tree`)."""
    extra = {**IDENTITY, **(env or {})}
    clone = _CLONES.get(cwd)
    if clone is not None:
        verify_tree(cwd)
        extra.update(GIT_DIR=str(clone.git_dir), GIT_WORK_TREE=str(cwd))
    full_env = git_env(extra)
    proc = subprocess.run(["git", *HARDENING, *EVAL_HARDENING, "-c", "core.autocrlf=false",
                           "-c", "commit.gpgsign=false", *argv], cwd=cwd, env=full_env,
                          input=stdin, capture_output=True, encoding="utf-8",
                          errors="replace", check=False,
                          stdin=subprocess.DEVNULL if stdin is None else None)
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
    """A private working tree at the base commit under `parent`, sharing the base's objects;
    its git data is `<tree>.git` beside it, written by the harness alone (see the module's
    doc), so the tree holds no `.git`. Both go when `parent` is removed."""
    dest = Path(tempfile.mkdtemp(prefix="tree-", dir=_mkdir(parent))).resolve()
    git_dir = dest.with_name(dest.name + ".git")
    git_dir.mkdir()
    objects = _objects_dir(base.path)
    fmt = "sha1"
    with contextlib.suppress(OSError):
        found = _FORMAT.search((objects.parent / "config").read_text(errors="replace"))
        fmt = found.group(1).lower() if found else fmt
    config = ("[core]\n\trepositoryformatversion = 0\n\tbare = false\n"
              "\tlogallrefupdates = false\n" if fmt == "sha1" else
              "[core]\n\trepositoryformatversion = 1\n\tbare = false\n"
              "\tlogallrefupdates = false\n[extensions]\n\tobjectformat = sha256\n")
    written = {"config": config.encode(), "objects/info/alternates": f"{objects}\n".encode()}
    for rel in ("objects/info", "objects/pack", "refs/heads", "refs/tags"):
        (git_dir / rel).mkdir(parents=True, exist_ok=True)
    (git_dir / "HEAD").write_text("ref: refs/heads/main\n")
    for rel, data in written.items():
        (git_dir / rel).write_bytes(data)
    with _LOCK:
        _CLONES[dest] = _Clone(git_dir, written)
    git(dest, "checkout", "-q", "--detach", base.commit)
    return dest


def _objects_dir(repo: Path) -> Path:
    """The object folder of `repo` (a bare repository, or a checkout's `.git` folder or the
    common folder its `gitdir:` file names), found without git."""
    if (repo / "objects").is_dir() and (repo / "HEAD").is_file():
        return (repo / "objects").resolve()
    dotgit = repo / ".git"
    git_dir = dotgit
    if dotgit.is_file():
        text = dotgit.read_text(errors="replace")
        git_dir = (repo / text.removeprefix("gitdir: ").strip()).resolve()
    with contextlib.suppress(OSError):
        git_dir = (git_dir / (git_dir / "commondir").read_text().strip()).resolve()
    if not (git_dir / "objects").is_dir():
        raise InfraError(f"{repo}: no git objects found (at {git_dir / 'objects'})")
    return (git_dir / "objects").resolve()


def tree_git_dir(tree: Path) -> Path:
    """The private git data of an evaluation tree made by `clone_tree`."""
    return _CLONES[tree].git_dir


def verify_tree(tree: Path) -> None:
    """Check an evaluation tree's git data is as the harness left it: its config and
    alternates unchanged, no hooks, no `commondir`, no attributes, and still a real folder.

    Raises:
        GitDataTampered: what changed; git must not run over it (a config can name programs).
    """
    clone = _CLONES[tree]
    changed: list[str] = []
    if clone.git_dir.is_symlink() or not clone.git_dir.is_dir():
        changed.append("the folder itself")
    else:
        for rel, data in clone.written.items():
            path = clone.git_dir / rel
            if _read(path) != data:
                changed.append(rel)
        changed += [rel for rel in _FORBIDDEN if os.path.lexists(clone.git_dir / rel)
                    and not (rel == "info/attributes" and tree in _MERGING
                             and _read(clone.git_dir / rel) == _UNION)]
    if changed:
        raise GitDataTampered(
            f"the evaluation clone's git data ({clone.git_dir}) was changed: "
            f"{', '.join(changed)}; only the graded code (the tests, the code they ran) could "
            "have, so git was not run over it (a planted config or attribute would run its "
            "programs in the harness): a harness error of this evaluation, not the agent's "
            "answer")


@contextlib.contextmanager
def union_attributes(tree: Path) -> Iterator[None]:
    """`* merge=union` in the tree's private `info/attributes` for one merge (it wins over
    any `.gitattributes` of the tree), removed afterwards."""
    clone = _CLONES[tree]
    attributes = clone.git_dir / "info" / "attributes"
    attributes.parent.mkdir(exist_ok=True)
    attributes.write_bytes(_UNION)
    _MERGING.add(tree)
    try:
        yield
    finally:
        _MERGING.discard(tree)
        attributes.unlink(missing_ok=True)


def _read(path: Path) -> bytes | None:
    try:
        return None if path.is_symlink() else path.read_bytes()
    except OSError:
        return None


def commit_all(tree: Path, message: str) -> str:
    """Commit everything in the tree (new files included); the new commit id."""
    git(tree, "add", "-A", "-f", ".")
    git(tree, "commit", "-q", "--allow-empty", "--no-verify", "-m", message)
    return git(tree, "rev-parse", "HEAD").stdout.strip()


def reset_tree(tree: Path, commit: str) -> None:
    """Back to `commit` exactly: tracked changes undone, untracked and ignored files gone."""
    git(tree, "reset", "-q", "--hard", commit)
    git(tree, "clean", "-q", "-f", "-d", "-x")
