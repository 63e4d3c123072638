"""Reading a zip that nobody vouches for: every structural claim is checked before a byte of
content is read, nothing is ever extracted to disk, and sizes are enforced while reading.

The central directory is trusted only after: the entry count (from the end record, before
parsing, and no smaller than the directory's own) is under the cap; names are safe, unique
and repeated identically in each local header; members are regular files, stored (the
writer never compresses: a deflated member is refused from its directory entry, so no byte
is ever inflated); entries do not overlap (the overlapping-file bomb); declared sizes are
under the caps. A member that ends short stops the read.
"""

from __future__ import annotations

import contextlib
import hashlib
import itertools
import mmap
import stat
import struct
import zipfile
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from copeca_action.bundle._crc import CrcWorker
from copeca_action.bundle._layout import check_member_path
from copeca_action.errors import VerificationError

CHUNK = 4 << 20
_VIEW_STEP = 1 << 20
"""A stored member is hashed from the mapped file in steps of this size (and members from
this size on are mapped: a smaller one is read in one call anyway)."""
_EOCD = b"PK\x05\x06"
_EOCD64_LOCATOR = b"PK\x06\x07"
_EOCD64 = b"PK\x06\x06"
_LOCAL = b"PK\x03\x04"
_LOCAL_LEN = 30
_CENTRAL = b"PK\x01\x02"
_CENTRAL_LEN = 46


@dataclass(frozen=True)
class Limits:
    """Caps on what a bundle may claim; generous for real bundles, fatal to bombs."""

    max_entries: int = 50_000
    max_entry_size: int = 1 << 30
    max_total_size: int = 16 << 30
    max_metadata_size: int = 64 << 20
    """manifest, statement, envelope, plan and records are read into memory: capped."""
    max_read_total: int = 256 << 20
    """All the files one SafeZip reads whole together (each run's record.json is kept in
    memory beside results.jsonl): a real bundle's take about twice its results.jsonl."""


@dataclass(frozen=True)
class Member:
    name: str
    size: int
    compressed: int
    method: int
    header_offset: int
    data_offset: int
    crc: int = 0


def _corrupt(message: str) -> VerificationError:
    return VerificationError("corrupt", message)


@dataclass(frozen=True)
class _Directory:
    """What the end record says of the central directory: its entry count, and where
    zipfile will read it (just before the end record, whatever offset the record states)."""

    entries: int
    start: int
    size: int


def _declared_entries(handle: BinaryIO, file_size: int) -> _Directory:
    """The entry count of the end-of-central-directory record, read before zipfile parses
    the directory (so a 10-million-entry directory is refused without being loaded)."""
    tail_len = min(file_size, 22 + 0xFFFF)
    handle.seek(file_size - tail_len)
    tail = handle.read(tail_len)
    at = tail.rfind(_EOCD)
    if at < 0 or len(tail) - at < 22:
        raise _corrupt("not a zip archive (no end-of-central-directory record)")
    end = file_size - tail_len + at
    count, size = struct.unpack("<HL", tail[at + 10:at + 16])
    if count != 0xFFFF:
        return _Directory(int(count), end - int(size), int(size))
    loc = tail.rfind(_EOCD64_LOCATOR, 0, at)
    if loc < 0 or at - loc != 20:
        raise _corrupt("zip64 archive without its end-of-directory locator")
    (offset,) = struct.unpack("<Q", tail[loc + 8:loc + 16])
    if offset + 56 > file_size:
        raise _corrupt("zip64 end-of-directory record points outside the file")
    handle.seek(offset)
    record = handle.read(56)
    if record[:4] != _EOCD64:
        raise _corrupt("zip64 end-of-directory record missing")
    count64, size64 = struct.unpack("<2Q", record[32:48])
    return _Directory(int(count64), end - 76 - int(size64), int(size64))


def _check_directory_count(handle: BinaryIO, directory: _Directory, limits: Limits) -> None:
    """The directory holds no more entries than its end record claims: walked header by
    header (at most one past the claim) before zipfile makes an object of each, so a
    record claiming one entry in front of millions is refused as cheaply as a true count."""
    if directory.size > limits.max_metadata_size or directory.start < 0:
        raise _corrupt(f"a central directory of {directory.size} bytes, more than the cap "
                       f"of {limits.max_metadata_size} (or larger than the file)")
    handle.seek(directory.start)
    data = handle.read(directory.size)
    at = found = 0
    while at + _CENTRAL_LEN <= len(data) and data[at:at + 4] == _CENTRAL:
        found += 1
        if found > directory.entries:
            raise _corrupt(f"the directory holds more entries than the {directory.entries} "
                           "its end record claims")
        name, extra, comment = struct.unpack_from("<3H", data, at + 28)
        at += _CENTRAL_LEN + name + extra + comment


class SafeZip:
    """A read-only view of a zip archive with every member validated up front."""

    def __init__(self, path: Path, limits: Limits | None = None) -> None:
        self.path = path
        self.limits = limits or Limits()
        self._crcs: dict[str, int] = {}
        self._crc = CrcWorker()
        self._read_whole = 0
        """Bytes `read` has returned so far (capped by `limits.max_read_total`)."""
        self._map: mmap.mmap | None = None
        try:
            self._handle: BinaryIO = path.open("rb")
        except OSError as exc:
            raise _corrupt(f"{path}: cannot open ({exc.strerror})") from exc
        try:
            self.members = self._scan()
        except BaseException:
            self._handle.close()
            raise

    def close(self) -> None:
        self._crc.close()
        if self._map is not None:
            with contextlib.suppress(BufferError):  # a view an exception's frame still holds
                self._map.close()
        self._handle.close()

    def __enter__(self) -> SafeZip:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    # ------------------------------------------------------------ structure

    def _scan(self) -> dict[str, Member]:
        handle, limits = self._handle, self.limits
        file_size = handle.seek(0, 2)
        directory = _declared_entries(handle, file_size)
        declared = directory.entries
        if declared > limits.max_entries:
            raise _corrupt(f"{declared} entries, more than the cap of {limits.max_entries}")
        _check_directory_count(handle, directory, limits)
        handle.seek(0)
        try:
            infos = zipfile.ZipFile(handle).infolist()
        except (zipfile.BadZipFile, zipfile.LargeZipFile, ValueError, OSError, EOFError,
                struct.error, NotImplementedError, IndexError, KeyError) as exc:
            raise _corrupt(f"unreadable zip directory ({exc})") from exc
        if len(infos) != declared:
            raise _corrupt(f"the directory holds {len(infos)} entries, the end record "
                           f"claims {declared}")
        self.infos = infos
        """The central directory as parsed, in its order (for the canonical-layout check)."""
        """CRC-32 of each member's content as `digest` read it."""
        self.file_size = file_size
        members: dict[str, Member] = {}
        total = 0
        for info in infos:
            member = self._check(info, file_size)
            if member.name in members:
                raise _corrupt(f"{member.name}: appears twice in the archive")
            members[member.name] = member
            total += member.size
            if total > limits.max_total_size:
                raise _corrupt(f"members add up to more than the cap of "
                               f"{limits.max_total_size} bytes")
        self._check_overlap(sorted(members.values(), key=lambda m: m.header_offset))
        return members

    def _check(self, info: zipfile.ZipInfo, file_size: int) -> Member:
        name, limits = info.orig_filename, self.limits
        why = check_member_path(name)
        if why:
            raise _corrupt(f"{name!r}: unsafe member name: {why}")
        mode = info.external_attr >> 16
        if info.create_system == 3 and stat.S_IFMT(mode) not in (0, stat.S_IFREG):
            kind = "a symbolic link" if stat.S_ISLNK(mode) else "not a regular file"
            raise _corrupt(f"{name}: {kind}; a bundle holds regular files only")
        if info.flag_bits & 0x1:
            raise _corrupt(f"{name}: encrypted members are not allowed")
        if info.compress_type != zipfile.ZIP_STORED:
            # the writer stores every member: a compressed one is never the signed file, and
            # inflating it first (a 1 GB member from 5 MB of deflate) would cost the time
            # its check saves; refused here, before any byte of content is read
            how = "deflate" if info.compress_type == zipfile.ZIP_DEFLATED else \
                f"compression method {info.compress_type}"
            raise _corrupt(f"{name}: compressed ({how}); a bundle stores every member "
                           "uncompressed, so this is not a file the writer made (recompressed "
                           "or another zip)")
        if info.file_size > limits.max_entry_size:
            raise _corrupt(f"{name}: {info.file_size} bytes, more than the per-file cap of "
                           f"{limits.max_entry_size}")
        if info.compress_size != info.file_size:
            raise _corrupt(f"{name}: stored member whose sizes disagree")
        return Member(name, info.file_size, info.compress_size, info.compress_type,
                      info.header_offset, self._data_offset(info, file_size), info.CRC)

    def _data_offset(self, info: zipfile.ZipInfo, file_size: int) -> int:
        """Where the member's bytes start, after a local header that must repeat its name."""
        handle = self._handle
        if info.header_offset + _LOCAL_LEN > file_size:
            raise _corrupt(f"{info.orig_filename}: local header outside the file")
        handle.seek(info.header_offset)
        header = handle.read(_LOCAL_LEN)
        if header[:4] != _LOCAL:
            raise _corrupt(f"{info.orig_filename}: no local header where the directory "
                           "points")
        name_len, extra_len = struct.unpack("<HH", header[26:30])
        local_name = handle.read(name_len)
        if local_name != info.orig_filename.encode("utf-8", "surrogateescape"):
            raise _corrupt(f"{info.orig_filename}: the local header names "
                           f"{local_name!r}: two names for one member")
        start = int(info.header_offset) + _LOCAL_LEN + int(name_len) + int(extra_len)
        if start + info.compress_size > file_size:
            raise _corrupt(f"{info.orig_filename}: data runs past the end of the file")
        return start

    @staticmethod
    def _check_overlap(ordered: list[Member]) -> None:
        for here, after in itertools.pairwise(ordered):
            if here.data_offset + here.compressed > after.header_offset:
                raise _corrupt(f"{here.name} and {after.name} overlap in the archive "
                               "(an overlapping-entry zip bomb?)")

    # ------------------------------------------------------------ content

    def iter_chunks(self, name: str) -> Iterator[bytes]:
        """The member's bytes (stored: `_check` refused any other method); stops with
        `corrupt` if the file ends short."""
        member = self.members[name]
        handle = self._handle
        handle.seek(member.data_offset)
        left = member.size
        while left:
            raw = handle.read(min(CHUNK, left))
            if not raw:
                raise _corrupt(f"{name}: truncated")
            left -= len(raw)
            yield raw

    def digest(self, name: str) -> tuple[int, str]:
        """(size, sha256) of the member's content, streamed; its CRC-32 is computed on a
        second thread (CrcWorker) and read from `crcs` (the canonical check compares it with
        the directory's)."""
        sha = hashlib.sha256()
        size = 0
        self._crc.add(name, b"")  # an empty member's CRC is 0
        member = self.members[name]
        view = self._stored_view(member)
        if view is not None:  # hashed where the page cache holds it: no copy
            for start in range(0, len(view), _VIEW_STEP):
                part = view[start:start + _VIEW_STEP]
                self._crc.add(name, part)
                sha.update(part)
            return len(view), sha.hexdigest()
        for chunk in self.iter_chunks(name):
            self._crc.add(name, chunk)
            sha.update(chunk)
            size += len(chunk)
        return size, sha.hexdigest()

    def _stored_view(self, member: Member) -> memoryview | None:
        """The member's bytes as a view of the file mapped in memory; None for a small
        member (read in one call) or when the file cannot be mapped."""
        if member.size < _VIEW_STEP:
            return None
        if self._map is None:
            try:
                self._map = mmap.mmap(self._handle.fileno(), 0, access=mmap.ACCESS_READ)
            except (OSError, ValueError):
                return None
            if hasattr(mmap, "MADV_WILLNEED"):
                self._map.madvise(mmap.MADV_WILLNEED)
        if member.data_offset + member.size > len(self._map):
            return None
        return memoryview(self._map)[member.data_offset:member.data_offset + member.size]

    def add_crcs(self, crcs: dict[str, int]) -> None:
        """CRC-32s computed elsewhere (MemberHashes read the same file)."""
        self._crcs.update(crcs)

    @property
    def crcs(self) -> dict[str, int]:
        """The CRC-32 of every member read so far (waits for the CRC thread)."""
        self._crcs.update(self._crc.results())
        return self._crcs

    def read_at(self, offset: int, length: int) -> bytes:
        self._handle.seek(offset)
        return self._handle.read(length)

    def read(self, name: str) -> bytes:
        """A small member in memory (metadata, plan, records), under the metadata cap."""
        member = self.members[name]
        if member.size > self.limits.max_metadata_size:
            raise _corrupt(f"{name}: {member.size} bytes, more than the cap of "
                           f"{self.limits.max_metadata_size} for a file read whole")
        self._read_whole += member.size
        if self._read_whole > self.limits.max_read_total:
            raise _corrupt(f"{name}: the files read whole (metadata, plan, records) add up "
                           f"to more than the cap of {self.limits.max_read_total} bytes")
        data = b"".join(self.iter_chunks(name))
        self._crcs[name] = zlib.crc32(data)
        return data
