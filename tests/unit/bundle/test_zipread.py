"""Malicious archives are refused before anything is read, inflated or written anywhere."""

from __future__ import annotations

import stat
import struct
import zipfile
import zlib
from pathlib import Path

import pytest

from copeca_action.bundle import Limits, SafeZip, verify_bundle
from copeca_action.errors import VerificationError


def corrupt(path: Path, match: str, limits: Limits | None = None) -> None:
    with pytest.raises(VerificationError, match=match) as info:
        verify_bundle(path, limits=limits)
    assert info.value.kind == "corrupt" and info.value.exit_code == 10


def zip_of(path: Path, *members: tuple[str | zipfile.ZipInfo, bytes],
           method: int = zipfile.ZIP_STORED) -> Path:
    with zipfile.ZipFile(path, "w", method) as archive:
        for name, data in members:
            archive.writestr(name, data)
    return path


def local(name: bytes, data: bytes) -> bytes:
    return struct.pack("<4s5H3I2H", b"PK\x03\x04", 20, 0, 0, 0, 0, zlib.crc32(data),
                       len(data), len(data), len(name), 0) + name + data


def central(name: bytes, data: bytes, offset: int) -> bytes:
    return struct.pack("<4s6H3I5H2I", b"PK\x01\x02", 20, 20, 0, 0, 0, 0, zlib.crc32(data),
                       len(data), len(data), len(name), 0, 0, 0, 0, 0, offset) + name


def raw_zip(path: Path, count: int) -> Path:
    """`count` empty stored members, written directly (zipfile takes seconds for 100,000)."""
    locals_, centrals = bytearray(), bytearray()
    for i in range(count):
        name = b"f%d" % i
        centrals += central(name, b"", len(locals_))
        locals_ += local(name, b"")
    # zip64 end record + locator + end record, as an archive with > 65,535 entries has
    z64 = struct.pack("<4sQ2H2I4Q", b"PK\x06\x06", 44, 45, 45, 0, 0, count, count,
                      len(centrals), len(locals_))
    locator = struct.pack("<4sIQI", b"PK\x06\x07", 0, len(locals_) + len(centrals), 1)
    eocd = struct.pack("<4s4H2IH", b"PK\x05\x06", 0, 0, 0xFFFF, 0xFFFF, 0xFFFFFFFF,
                       0xFFFFFFFF, 0)
    path.write_bytes(bytes(locals_ + centrals) + z64 + locator + eocd)
    return path


def test_path_traversal_is_refused(tmp_path: Path) -> None:
    corrupt(zip_of(tmp_path / "z", ("runs/../../etc/cron.d/x", b"boom")), "climbs out")


def test_absolute_paths_are_refused(tmp_path: Path) -> None:
    corrupt(zip_of(tmp_path / "z", ("/etc/passwd", b"root")), "absolute")
    info = zipfile.ZipInfo("C:/windows/x")
    corrupt(zip_of(tmp_path / "w", (info, b"x")), "absolute")


def test_symlinks_are_refused(tmp_path: Path) -> None:
    info = zipfile.ZipInfo("runs/a/transcript.jsonl")
    info.create_system = 3
    info.external_attr = (stat.S_IFLNK | 0o777) << 16
    corrupt(zip_of(tmp_path / "z", (info, b"/etc/shadow")), "symbolic link")


def test_a_deflated_member_is_refused_from_its_directory_entry(tmp_path: Path) -> None:
    """A bundle stores every member: a deflated one (a zip bomb or a recompressed bundle) is
    refused when the directory is read, before a byte of it is inflated. (It was inflated
    first, for its hash, and refused by the canonical check after: 1 GB inflated from a
    23 MB file took 4 s, and 16 GB fit under the caps.)"""
    bomb = zip_of(tmp_path / "z", ("results.jsonl", bytes(50 << 20)),
                  method=zipfile.ZIP_DEFLATED)
    assert bomb.stat().st_size < 100_000
    corrupt(bomb, r"results.jsonl: compressed \(deflate\)")
    modest = zip_of(tmp_path / "m", ("a.txt", b"line of text\n" * 500),
                    method=zipfile.ZIP_DEFLATED)  # 50:1, under every size cap
    with pytest.raises(VerificationError, match="compressed") as info:
        SafeZip(modest)
    assert info.value.kind == "corrupt"


def test_a_hundred_thousand_entries_are_refused_before_the_directory_is_parsed(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = raw_zip(tmp_path / "z", 100_000)
    with monkeypatch.context() as patch:
        def never(*_: object) -> None:
            raise AssertionError("the central directory was parsed")
        patch.setattr("copeca_action.bundle._zipread.zipfile.ZipFile", never)
        corrupt(path, "100000 entries, more than the cap of 50000")
    with SafeZip(raw_zip(tmp_path / "small", 300), Limits(max_entries=1000)) as archive:
        assert len(archive.members) == 300  # the same writer's output is otherwise valid


def test_per_file_and_total_size_caps(tmp_path: Path) -> None:
    path = zip_of(tmp_path / "z", ("a.txt", b"x" * 5000), ("b.txt", b"y" * 5000))
    corrupt(path, "per-file cap", Limits(max_entry_size=4000))
    corrupt(path, "add up to more than", Limits(max_total_size=8000))


def test_duplicate_names_and_disagreeing_local_headers_are_refused(tmp_path: Path) -> None:
    with pytest.warns(UserWarning):
        path = zip_of(tmp_path / "z", ("a.txt", b"1"), ("a.txt", b"2"))
    corrupt(path, "appears twice")
    raw = bytearray(zip_of(tmp_path / "n", ("a.txt", b"1")).read_bytes())
    raw[30:35] = b"b.txt"  # the local header now names another file
    (tmp_path / "n").write_bytes(bytes(raw))
    corrupt(tmp_path / "n", "two names for one member")


def test_overlapping_members_are_refused(tmp_path: Path) -> None:
    """b.txt's local header hides inside a.txt's data: both names check out, bytes overlap."""
    inner = local(b"b.txt", b"BBBB")
    outer = local(b"a.txt", inner)
    directory = central(b"a.txt", inner, 0) + central(b"b.txt", b"BBBB", 30 + 5)
    eocd = struct.pack("<4s4H2IH", b"PK\x05\x06", 0, 0, 2, 2, len(directory), len(outer), 0)
    path = tmp_path / "z"
    path.write_bytes(outer + directory + eocd)
    corrupt(path, "overlap")


def test_not_a_zip_and_other_methods_are_corrupt(tmp_path: Path) -> None:
    (tmp_path / "t").write_bytes(b"hello" * 100)
    corrupt(tmp_path / "t", "not a zip")
    path = zip_of(tmp_path / "z", ("a.txt", b"abc" * 100), method=zipfile.ZIP_BZIP2)
    corrupt(path, "compressed \\(compression method 12\\)")


def test_the_files_read_whole_are_capped_together(build, plan, demo) -> None:  # type: ignore[no-untyped-def]
    """Each run's record.json is parsed and kept in memory beside results.jsonl, each under
    the per-file cap: a bundle (signed by whoever made it, or with its records swapped for
    deflated ones before the hashes are compared) whose records carry a large field added
    up to any size (58 MB of file took 2.5 GB). Their sum is capped too."""
    from bundle_support import contents_for, record_for

    records = [record_for(plan, i, error="x" * (100 << 10)) for i in range(len(plan.runs))]
    path = build("fat.copeca", contents=contents_for(plan, demo[2], records=records))
    verify_bundle(path)  # about 20 MB read whole: under the default cap
    with pytest.raises(VerificationError, match="add up to more than the cap of "
                       f"{12 << 20}") as info:
        verify_bundle(path, limits=Limits(max_read_total=12 << 20))
    assert info.value.kind == "corrupt" and "record.json" in str(info.value)


def test_an_end_record_that_understates_its_entries_is_refused_before_parsing(
        tmp_path: Path) -> None:
    """The entry cap is read from the end record: one claiming a single entry in front of
    a directory of millions had zipfile make an object of each first (141 MB of file: 74 s
    and 1.1 GB). The directory is walked header by header up to the claim, and its size
    is capped."""
    data = raw_zip(tmp_path / "many", 20_000).read_bytes()
    tail = data.rfind(b"PK\x05\x06")
    end = struct.pack("<4s4H", b"PK\x05\x06", 0, 0, 1, 1) + data[tail + 12:]
    start = data.rfind(b"PK\x06\x06")  # drop the zip64 records: the plain end record lies
    size = struct.unpack("<Q", data[start + 40:start + 48])[0]
    lying = tmp_path / "lying"
    lying.write_bytes(data[:start] + end[:12] + struct.pack("<2IH", size, start - size, 0))
    corrupt(lying, "more entries than the 1 its end record claims")
    corrupt(lying, "a central directory of", Limits(max_metadata_size=size - 1))
