"""Hostile archives test_zipread.py does not build, each a real zip refused as `corrupt`
before any content is read: a backslash path, a directory entry, a device and a FIFO, a
member that claims more bytes than the file holds (a bomb's declared size, under the caps),
a name with a line break (shown escaped), nesting deeper than a bundle has."""

from __future__ import annotations

import stat
import struct
import zipfile
from pathlib import Path

import pytest

from copeca_action.bundle import verify_bundle
from copeca_action.errors import VerificationError


def refused(path: Path) -> str:
    with pytest.raises(VerificationError) as info:
        verify_bundle(path)
    assert info.value.kind == "corrupt" and info.value.exit_code == 10
    return str(info.value)


def zip_with(path: Path, info: zipfile.ZipInfo | str, data: bytes = b"x") -> Path:
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr(info, data)
    return path


def unix(name: str, mode: int) -> zipfile.ZipInfo:
    info = zipfile.ZipInfo(name)
    info.create_system = 3
    info.external_attr = mode << 16
    return info


@pytest.mark.parametrize(("member", "why"), [
    ("runs\\..\\..\\etc\\x", "climbs out ('..' or a backslash)"),
    ("runs/", "a path part '' outside"),
    ("/".join("abcdefghi"), "nested more than 8 levels"),
    ("runs/a\nb/record.json", "'runs/a\\nb/record.json': unsafe member name"),
])
def test_unsafe_names_are_refused(tmp_path: Path, member: str, why: str) -> None:
    message = refused(zip_with(tmp_path / "z.copeca", member))
    assert why in message and "\n" not in message  # a name's line break is shown escaped


@pytest.mark.parametrize("mode", [stat.S_IFCHR | 0o644, stat.S_IFIFO | 0o644,
                                  stat.S_IFDIR | 0o755, stat.S_IFBLK | 0o600])
def test_devices_fifos_and_folders_are_refused(tmp_path: Path, mode: int) -> None:
    message = refused(zip_with(tmp_path / "z.copeca", unix("runs/a/x", mode), b""))
    assert "runs/a/x: not a regular file" in message


def test_a_member_claiming_more_bytes_than_the_file_holds_is_refused(tmp_path: Path) -> None:
    path = zip_with(tmp_path / "z.copeca", "results.jsonl", b"{}\n" * 10)
    raw = bytearray(path.read_bytes())
    claimed = 900 << 20  # under the 1 GiB per-member cap, far past the file's end
    struct.pack_into("<II", raw, 18, claimed, claimed)  # the local header's sizes
    at = raw.find(b"PK\x01\x02")
    struct.pack_into("<II", raw, at + 20, claimed, claimed)  # and the directory's
    path.write_bytes(bytes(raw))
    assert "results.jsonl: data runs past the end of the file" in refused(path)
