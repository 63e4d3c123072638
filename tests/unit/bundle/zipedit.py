"""Rewrite a zip with members changed, added or removed: the tamperer's tool."""

from __future__ import annotations

import zipfile
from collections.abc import Callable, Mapping
from pathlib import Path


def read_all(path: Path) -> dict[str, bytes]:
    with zipfile.ZipFile(path) as archive:
        return {i.filename: archive.read(i) for i in archive.infolist()}


def rewrite(src: Path, dst: Path,
            edit: Mapping[str, bytes | Callable[[bytes], bytes] | None]) -> Path:
    """Copy `src` to `dst`; `edit[name]` replaces (bytes), transforms (callable), removes
    (None) or adds a member."""
    members = read_all(src)
    for name, change in edit.items():
        if change is None:
            members.pop(name)
        elif callable(change):
            members[name] = change(members[name])
        else:
            members[name] = change
    with zipfile.ZipFile(dst, "w") as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return dst
