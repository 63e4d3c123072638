"""Rewrite a zip with members changed, added or removed: the tamperer's tool."""

from __future__ import annotations

import zipfile
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey


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


def rewrite_canonical(src: Path, dst: Path, members: Mapping[str, bytes]) -> Path:
    """`members` written as the writer lays a bundle out (paths sorted, the metadata last,
    stored, dated 1980): what a key holder's own tool makes, which the canonical check
    accepts."""
    from copeca_action.bundle._canonical import canonical_info
    from copeca_action.bundle._layout import METADATA

    order = sorted(n for n in members if n not in METADATA) + [
        n for n in METADATA if n in members]
    with zipfile.ZipFile(dst, "w") as archive:
        for name in order:
            archive.writestr(canonical_info(name), members[name])
    return dst


def resign(src: Path, dst: Path, edit: Mapping[str, bytes | None],
           key: Ed25519PrivateKey) -> Path:
    """`src` with `edit` made (bytes: replace or add, None: remove), its manifest and
    statement made again and signed by `key`: what a maker with their own writer signs,
    past any check the writer makes."""
    import hashlib
    import json

    from copeca_action.bundle._layout import ENVELOPE, MANIFEST, METADATA, STATEMENT
    from copeca_action.bundle._sign import sign_envelope
    from copeca_action.bundle._write import pretty_json

    members = read_all(src)
    for name, change in edit.items():
        if change is None:
            members.pop(name)
        else:
            members[name] = change
    manifest = json.loads(members[MANIFEST])
    manifest["files"] = [{"path": p, "size": len(d), "sha256": hashlib.sha256(d).hexdigest()}
                         for p, d in sorted(members.items()) if p not in METADATA]
    members[MANIFEST] = pretty_json(manifest)
    statement = json.loads(members[STATEMENT])
    statement["subject"] = [{"name": MANIFEST, "digest": {
        "sha256": hashlib.sha256(members[MANIFEST]).hexdigest()}}]
    members[STATEMENT] = pretty_json(statement)
    members[ENVELOPE] = pretty_json(sign_envelope(members[STATEMENT], key).model_dump(
        mode="json", by_alias=True))
    return rewrite_canonical(src, dst, members)
