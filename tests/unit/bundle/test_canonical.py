"""Canonical bundles: any byte of the file that is not the writer's is refused, so the file's
sha256 names its content. Each malleation below keeps every member's content (and so the
signature chain) intact; before the canonical check each one verified."""

from __future__ import annotations

import shutil
import struct
import zipfile
from collections.abc import Callable
from pathlib import Path

import pytest
from bundle_support import Build
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from copeca_action.bundle import verify_bundle
from copeca_action.errors import VerificationError


@pytest.fixture
def good(build: Build) -> Path:
    return build("good.copeca")


def _members(path: Path) -> list[tuple[zipfile.ZipInfo, bytes]]:
    with zipfile.ZipFile(path) as archive:
        return [(info, archive.read(info)) for info in archive.infolist()]


def _rezip(src: Path, dst: Path, order: Callable[[list[tuple[zipfile.ZipInfo, bytes]]],
                                                  list[tuple[zipfile.ZipInfo, bytes]]],
           change: Callable[[zipfile.ZipInfo], None] = lambda i: None) -> Path:
    with zipfile.ZipFile(dst, "w") as out:
        for info, data in order(_members(src)):
            new = zipfile.ZipInfo(info.filename, date_time=info.date_time)
            new.create_system, new.external_attr = info.create_system, info.external_attr
            new.compress_type = info.compress_type
            change(new)
            out.writestr(new, data)
    return dst


def prefix(good: Path, dst: Path) -> Path:
    dst.write_bytes(b"#!/bin/sh\necho polyglot\nexit 0\n" + good.read_bytes())
    return dst


def comment(good: Path, dst: Path) -> Path:
    shutil.copy(good, dst)
    with zipfile.ZipFile(dst, "a") as archive:
        archive.comment = b"unsigned words"
    return dst


def appended(good: Path, dst: Path) -> Path:
    dst.write_bytes(good.read_bytes() + b"\0" * 16)
    return dst


def reordered(good: Path, dst: Path) -> Path:
    return _rezip(good, dst, lambda ms: list(reversed(ms)))


def recompressed(good: Path, dst: Path) -> Path:
    def deflate(info: zipfile.ZipInfo) -> None:
        info.compress_type = zipfile.ZIP_DEFLATED
    return _rezip(good, dst, lambda ms: ms, deflate)


def redated(good: Path, dst: Path) -> Path:
    def date(info: zipfile.ZipInfo) -> None:
        info.date_time = (2020, 2, 2, 2, 2, 2)
    return _rezip(good, dst, lambda ms: ms, date)


def remoded(good: Path, dst: Path) -> Path:
    def mode(info: zipfile.ZipInfo) -> None:
        info.external_attr = 0o100755 << 16
    return _rezip(good, dst, lambda ms: ms, mode)


def extra_field(good: Path, dst: Path) -> Path:
    def extra(info: zipfile.ZipInfo) -> None:
        info.extra = struct.pack("<HH4s", 0xCAFE, 4, b"junk")
    return _rezip(good, dst, lambda ms: ms, extra)


def crc_changed(good: Path, dst: Path) -> Path:
    """The first member's CRC-32, in its local header and in the directory (content kept)."""
    data = bytearray(good.read_bytes())
    with zipfile.ZipFile(good) as archive:
        first = archive.infolist()[0]
        start = archive.start_dir
    data[14:18] = struct.pack("<I", first.CRC ^ 1)
    data[start + 16:start + 20] = struct.pack("<I", first.CRC ^ 1)
    dst.write_bytes(bytes(data))
    return dst


def crc_of_statement_changed(good: Path, dst: Path) -> Path:
    data = bytearray(good.read_bytes())
    with zipfile.ZipFile(good) as archive:
        info = archive.getinfo("statement.json")
        start = archive.start_dir
        index = archive.infolist().index(info)
        central = start + sum(46 + len(i.filename) for i in archive.infolist()[:index])
    at = info.header_offset
    data[at + 14:at + 18] = struct.pack("<I", info.CRC ^ 1)
    data[central + 16:central + 20] = struct.pack("<I", info.CRC ^ 1)
    dst.write_bytes(bytes(data))
    return dst


MALLEATIONS = [prefix, comment, appended, reordered, recompressed, redated, remoded,
               extra_field, crc_changed, crc_of_statement_changed]


def test_the_writers_bytes_verify(good: Path, key: Ed25519PrivateKey) -> None:
    verify_bundle(good, key.public_key())


@pytest.mark.parametrize("malleate", MALLEATIONS, ids=lambda f: f.__name__)
def test_every_other_layout_is_refused(good: Path, key: Ed25519PrivateKey,
                                       malleate: Callable[[Path, Path], Path]) -> None:
    bad = malleate(good, good.with_name(f"{malleate.__name__}.copeca"))
    assert bad.read_bytes() != good.read_bytes()
    # zipfile refuses to read a bad CRC: those two move no byte of content by construction
    if malleate not in (crc_changed, crc_of_statement_changed):
        with zipfile.ZipFile(good) as a, zipfile.ZipFile(bad) as b:  # same content
                assert {i.filename: a.read(i) for i in a.infolist()} == {
                i.filename: b.read(i) for i in b.infolist()}
    with pytest.raises(VerificationError) as info:
        verify_bundle(bad, key.public_key())
    assert info.value.kind in ("tampered", "corrupt")
    assert info.value.exit_code in (10, 11)
