"""Member hashing started ahead of verification gives the manifest's sizes and digests, and a
started hashing of a file that is not a zip fails only when it is asked for."""

from __future__ import annotations

import hashlib
import zipfile
from pathlib import Path

import pytest
from bundle_support import Build

from copeca_action.bundle._layout import METADATA
from copeca_action.bundle._prehash import ForkedMemberHashes, MemberHashes
from copeca_action.errors import VerificationError


@pytest.mark.parametrize("kind", [MemberHashes, ForkedMemberHashes])
def test_every_member_but_the_metadata_is_hashed(build: Build, kind: type[MemberHashes]
                                                 ) -> None:
    path = build("h.copeca")
    hashes = kind(path)
    with zipfile.ZipFile(path) as archive:
        names = [n for n in archive.namelist() if n not in METADATA]
        for name in names:
            data = archive.read(name)
            assert hashes.digest(name) == (len(data), hashlib.sha256(data).hexdigest())
        assert hashes.crcs() == {n: archive.getinfo(n).CRC for n in names}
    with pytest.raises(KeyError):
        hashes.digest(METADATA[0])


@pytest.mark.parametrize("kind", [MemberHashes, ForkedMemberHashes])
def test_a_file_that_is_not_a_zip_fails_when_asked(tmp_path: Path,
                                                   kind: type[MemberHashes]) -> None:
    path = tmp_path / "x.copeca"
    path.write_bytes(b"not a zip at all" * 100)
    hashes = kind(path)
    with pytest.raises(VerificationError) as caught:
        hashes.digest("anything")
    assert caught.value.kind == "corrupt"


def test_a_changed_member_is_found_through_the_forked_hashing(build: Build) -> None:
    """The child's digests are the ones the verifier compares: a flipped byte shows."""
    path = build("f.copeca")
    with zipfile.ZipFile(path) as archive:
        name = next(n for n in archive.namelist() if n.startswith("runs/"))
        info = archive.getinfo(name)
        original = archive.read(name)
    data = bytearray(path.read_bytes())
    at = data.index(original, info.header_offset)
    data[at] ^= 0x01
    path.write_bytes(bytes(data))
    hashes = ForkedMemberHashes(path)
    size, digest = hashes.digest(name)
    assert size == len(original) and digest != hashlib.sha256(original).hexdigest()


def test_cancelling_the_forked_hashing_leaves_no_child(build: Build) -> None:
    import os

    hashes = ForkedMemberHashes(build("c.copeca"))
    pid = hashes._pid
    hashes.cancel()
    with pytest.raises(ChildProcessError):
        os.waitpid(pid, os.WNOHANG)  # already reaped: no zombie, no orphan
