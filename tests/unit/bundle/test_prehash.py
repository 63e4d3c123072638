"""Member hashing started ahead of verification gives the manifest's sizes and digests, and a
started hashing of a file that is not a zip fails only when it is asked for."""

from __future__ import annotations

import hashlib
import zipfile
from pathlib import Path

import pytest
from bundle_support import Build

from copeca_action.bundle._layout import METADATA
from copeca_action.bundle._prehash import MemberHashes
from copeca_action.errors import VerificationError


def test_every_member_but_the_metadata_is_hashed(build: Build) -> None:
    path = build("h.copeca")
    hashes = MemberHashes(path)
    with zipfile.ZipFile(path) as archive:
        names = [n for n in archive.namelist() if n not in METADATA]
        for name in names:
            data = archive.read(name)
            assert hashes.digest(name) == (len(data), hashlib.sha256(data).hexdigest())
        assert hashes.crcs() == {n: archive.getinfo(n).CRC for n in names}
    with pytest.raises(KeyError):
        hashes.digest(METADATA[0])


def test_a_file_that_is_not_a_zip_fails_when_asked(tmp_path: Path) -> None:
    path = tmp_path / "x.copeca"
    path.write_bytes(b"not a zip at all" * 100)
    hashes = MemberHashes(path)
    with pytest.raises(VerificationError) as caught:
        hashes.digest("anything")
    assert caught.value.kind == "corrupt"
