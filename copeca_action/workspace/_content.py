"""The identity of a folder's content (the tool under test), for reuse fingerprints.

A git checkout whose tracked files are unchanged is named by its tree id at HEAD (cheap and
what a reviewer can look up); edited tracked files are hashed as they are. Untracked files
(build outputs, downloaded artifacts, the action's own output folder) are not part of the
tool's identity. A folder outside git, or inside a repository that tracks none of its files,
is hashed whole, `.git` and the folders the harness writes in (the output folder, when it lies
inside the tool's) aside.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Sequence
from pathlib import Path

from copeca_action.workspace._git import git

_SAFE = ("-c", "safe.directory=*")
"""A checkout owned by another user (a container on a runner's workspace) is still read."""


def folder_content_id(folder: Path, exclude: Sequence[Path] = ()) -> str:
    """`tree:<id>` (clean git checkout), `files:<sha256>` (edited or not in git).
    `exclude`: folders that are not the tool's (the run's output folder, which grows as the
    runs are recorded) when they lie inside a `folder` outside git; in git, untracked."""
    folder = folder.resolve()
    skip = {p.resolve() for p in exclude}
    inside = git([*_SAFE, "rev-parse", "--is-inside-work-tree"], cwd=folder, check=False)
    if inside.returncode != 0 or inside.stdout.strip() != "true":
        return "files:" + _hash_files(folder, _walk(folder, skip))
    status = git([*_SAFE, "status", "--porcelain", "--untracked-files=no", "--", "."],
                 cwd=folder, check=False)
    if status.returncode == 0 and not status.stdout.strip():
        tree = git([*_SAFE, "rev-parse", "HEAD:./"], cwd=folder, check=False)
        if tree.returncode == 0 and tree.stdout.strip():
            return "tree:" + tree.stdout.strip()
    listed = git([*_SAFE, "ls-files", "-z", "--", "."], cwd=folder, check=False)
    names = sorted(n for n in listed.stdout.split("\0") if n) if listed.returncode == 0 else []
    if not names:  # inside some other repository that tracks none of it: not a checkout of
        # the tool, so every file counts (else any content would have one id: "nothing")
        names = _walk(folder, skip)
    return "files:" + _hash_files(folder, names)


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
