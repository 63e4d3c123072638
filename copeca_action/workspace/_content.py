"""The identity of a folder's content (the tool under test), for reuse fingerprints.

A git checkout whose tracked files are unchanged is named by its tree id at HEAD (cheap and
what a reviewer can look up); edited tracked files are hashed as they are. Untracked files
(build outputs, downloaded artifacts, the action's own output folder) are not part of the
tool's identity. A folder outside git, or inside a repository that tracks none of its files,
is hashed whole, `.git` and the folders the harness writes in (the output folder, when it lies
inside the tool's) aside.

The checkout is writable to agents, its `.git` too: git never reads that `.git`'s config
(a `filter` driver, an fsmonitor, hooks, an include planted there would run in the harness).
The repository is found without git (a `.git` folder or `gitdir:` file, walking up) and read
through a private view like the snapshots' (`copeca_action.workspace._git`): a config the
harness wrote, a copy of HEAD and the index, links to `objects`, `refs` and `packed-refs`.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import shutil
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path

from copeca_action.workspace._git import git, views_root

_SAFE = ("-c", "safe.directory=*")
"""A checkout owned by another user (a container on a runner's workspace) is still read."""


def folder_content_id(folder: Path, exclude: Sequence[Path] = ()) -> str:
    """`tree:<id>` (clean git checkout), `files:<sha256>` (edited or not in git).
    `exclude`: folders that are not the tool's (the run's output folder, which grows as the
    runs are recorded) when they lie inside a `folder` outside git; in git, untracked."""
    folder = folder.resolve()
    skip = {p.resolve() for p in exclude}
    found = find_checkout(folder)
    if found is None:
        return "files:" + _hash_files(folder, _walk(folder, skip))
    top, git_dir, common_dir = found
    with checkout_view(git_dir, common_dir) as view:
        env = {"GIT_DIR": str(view), "GIT_WORK_TREE": str(top)}
        status = git([*_SAFE, "status", "--porcelain", "--untracked-files=no",
                      "--ignore-submodules=all", "--", "."], cwd=folder, env=env, check=False)
        if status.returncode == 0 and not status.stdout.strip():
            tree = git([*_SAFE, "rev-parse", "HEAD:./"], cwd=folder, env=env, check=False)
            if tree.returncode == 0 and tree.stdout.strip():
                return "tree:" + tree.stdout.strip()
        listed = git([*_SAFE, "ls-files", "-z", "--", "."], cwd=folder, env=env, check=False)
    names = sorted(n for n in listed.stdout.split("\0") if n) if listed.returncode == 0 else []
    if not names:  # inside some other repository that tracks none of it: not a checkout of
        # the tool, so every file counts (else any content would have one id: "nothing")
        names = _walk(folder, skip)
    return "files:" + _hash_files(folder, names)


def find_checkout(folder: Path) -> tuple[Path, Path, Path] | None:
    """The work tree, git dir and common dir of the checkout holding `folder`, found as git
    finds them (the nearest `.git` folder, or `.git` file naming one, and its `commondir`)
    but without running git; None outside git."""
    for top in (folder, *folder.parents):
        dotgit = top / ".git"
        if dotgit.is_dir() and not dotgit.is_symlink():
            git_dir = dotgit
        elif dotgit.is_file():
            try:
                text = dotgit.read_text(errors="replace")
            except OSError:
                return None
            if not text.startswith("gitdir: "):
                return None
            git_dir = (top / text[len("gitdir: "):].strip()).resolve()
        else:
            continue
        if not (git_dir / "HEAD").is_file():
            return None
        common = git_dir
        with contextlib.suppress(OSError):
            common = (git_dir / (git_dir / "commondir").read_text().strip()).resolve()
        return top, git_dir, common
    return None


_HEAD = re.compile(r"(ref: refs/[^\s]+|[0-9a-f]{40}|[0-9a-f]{64})\n?")
_FORMAT = re.compile(r"^\s*objectformat\s*=\s*(sha1|sha256)\s*$", re.I | re.M)


@contextlib.contextmanager
def checkout_view(git_dir: Path, common_dir: Path) -> Iterator[Path]:
    """A private GIT_DIR for the checkout: its objects, refs and packed-refs through links,
    HEAD and the index copied, the config the harness's own (the object format is the only
    setting taken over; read as text, never by git)."""
    view = Path(tempfile.mkdtemp(prefix="tool-", dir=views_root()))
    try:
        for name in ("objects", "refs", "packed-refs"):
            (view / name).symlink_to(common_dir / name)
        head = (git_dir / "HEAD").read_text(errors="replace")
        (view / "HEAD").write_text(head if _HEAD.fullmatch(head) else "")
        for name in ("index", *(p.name for p in git_dir.glob("sharedindex.*"))):
            if (git_dir / name).is_file() and not (git_dir / name).is_symlink():
                shutil.copyfile(git_dir / name, view / name)
        config = "[core]\n\trepositoryformatversion = 0\n"
        with contextlib.suppress(OSError):
            found = _FORMAT.search((common_dir / "config").read_text(errors="replace"))
            if found and found.group(1).lower() == "sha256":
                config = ("[core]\n\trepositoryformatversion = 1\n"
                          "[extensions]\n\tobjectformat = sha256\n")
        (view / "config").write_text(config)
        yield view
    finally:
        shutil.rmtree(view, ignore_errors=True)


def _walk(folder: Path, exclude: set[Path]) -> list[str]:
    found = []
    for top, dirs, names in os.walk(folder, followlinks=False):
        dirs[:] = sorted(d for d in dirs if d != ".git" and Path(top) / d not in exclude)
        found += [(Path(top) / n).relative_to(folder).as_posix() for n in names]
    return sorted(found)


def _hash_files(folder: Path, names: list[str]) -> str:
    """Names and bytes (a link: its target text; a deleted tracked file: absent)."""
    digest = hashlib.sha256()
    for name in names:
        path = folder / name
        if path.is_symlink():
            body = b"link:" + os.readlink(path).encode()
        elif path.is_file():
            body = hashlib.sha256(path.read_bytes()).hexdigest().encode()
        else:
            continue
        digest.update(name.encode() + b"\0" + body + b"\n")
    return digest.hexdigest()
