"""The canonical layout: a bundle is accepted only as the bytes the writer makes, so the
file's sha256 names its content and nothing rides along unsigned.

The writer's layout: no byte before the first member; members in path order, then
manifest.json, statement.json, statement.dsse.json; each stored (no compression), dated
1980-01-01, mode 0644, made on Unix, no extra field, no comment, no flags, one right after the
other; then the central directory with exactly those entries; then the end record with no
comment, and nothing after it. Given the members' contents (which the signature covers
through the manifest), every byte of the file is determined; `check_canonical` checks each.
"""

from __future__ import annotations

import struct
import zipfile

from copeca_action.bundle._layout import METADATA
from copeca_action.bundle._zipread import SafeZip
from copeca_action.errors import VerificationError

FIXED_TIME = (1980, 1, 1, 0, 0, 0)
FILE_MODE = 0o100644
_CENTRAL_LEN = 46
_EOCD_LEN = 22
_ZIP64_LIMIT = (1 << 31) - 1


def canonical_info(name: str) -> zipfile.ZipInfo:
    """The ZipInfo the writer gives every member (also what the writer uses)."""
    info = zipfile.ZipInfo(name, date_time=FIXED_TIME)
    info.create_system = 3
    info.external_attr = FILE_MODE << 16
    info.compress_type = zipfile.ZIP_STORED
    return info


def check_canonical(archive: SafeZip) -> None:
    """Raise `tampered` naming every way the file departs from the writer's layout (a prefix,
    a comment, reordered, recompressed or re-dated members, trailing bytes)."""
    infos = archive.infos
    names = [i.orig_filename for i in infos]
    problems: list[str] = []
    order = sorted(n for n in names if n not in METADATA) + [m for m in METADATA if m in names]
    if names != order:
        problems.append("members are not in the writer's order (paths sorted, then "
                        + ", ".join(METADATA) + ")")
    crcs = archive.crcs
    offset = 0
    for info in infos:
        name = info.orig_filename
        member = archive.members[name]
        if info.header_offset != offset:
            problems.append(f"{name}: starts at byte {info.header_offset}, the writer puts it "
                            f"at {offset}" + (" (bytes before the first member)" if offset == 0
                                              else ""))
        expected = canonical_info(name)
        expected.CRC, expected.compress_size, expected.file_size = (
            info.CRC, info.compress_size, info.file_size)
        header = expected.FileHeader()
        if archive.read_at(info.header_offset, len(header)) != header or \
                member.data_offset != info.header_offset + len(header):
            problems.append(f"{name}: its local header is not the writer's (compression, "
                            "date, flags or extra fields differ)")
        central = (info.compress_type, info.date_time, info.flag_bits, info.extra,
                   info.comment, info.internal_attr, info.external_attr, info.create_system,
                   info.create_version, info.extract_version, info.volume, info.reserved)
        wanted = (zipfile.ZIP_STORED, FIXED_TIME, 0, b"", b"", 0, FILE_MODE << 16, 3,
                  zipfile.DEFAULT_VERSION, zipfile.DEFAULT_VERSION, 0, 0)
        if central != wanted and info.file_size <= _ZIP64_LIMIT:
            problems.append(f"{name}: its directory entry is not the writer's (compression, "
                            "date, mode, flags, extra fields or comment differ)")
        if name in crcs and crcs[name] != info.CRC:
            problems.append(f"{name}: the CRC-32 the archive states is not its content's")
        offset = member.data_offset + member.compressed
    if archive.file_size <= _ZIP64_LIMIT:
        size = sum(_CENTRAL_LEN + len(n.encode()) for n in names)
        end = struct.pack("<4s4H2LH", b"PK\x05\x06", 0, 0, len(names), len(names), size,
                          offset, 0)
        if archive.file_size != offset + size + _EOCD_LEN or \
                archive.read_at(offset + size, _EOCD_LEN) != end:
            problems.append("the central directory or end record is not the writer's (a zip "
                            "comment, bytes appended, or a rewritten directory)")
    if problems:
        raise VerificationError("tampered", f"{archive.path}: not the canonical layout the "
                                "writer makes, so the file is not the one that was signed "
                                "(its content may still be):\n  " + "\n  ".join(problems[:20]))
