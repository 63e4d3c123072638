"""Git binary patches in the files a run leaves (`git diff --binary` writes `patch.diff`):
each hunk's bytes are zlib-compressed and base85-encoded, a form the byte scrubber cannot
see into. `scrub_binary_patches` decodes every hunk (a literal, or a delta's inserted bytes),
opens what it holds when that is itself compressed (gzip, zlib, bzip2, xz, zip members),
looks for secrets there, and withholds a hunk that holds one, or that is too large to look
through, leaving a marker in its place."""

from __future__ import annotations

import base64
import bz2
import io
import lzma
import os
import zipfile
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO

HEADER = b"GIT binary patch\n"
MAX_BYTES = 64 << 20
"""Bytes a hunk is opened to, compressed layers included: a larger one is withheld, never
published unread."""
_DEPTH = 3
"""Compressed layers opened inside a hunk (a gzip in a zip in the patch)."""
_BLOCK = (b"literal ", b"delta ")
WITHHELD = b"GIT binary patch withheld by copeca-action: "


def scrub_binary_patches(path: Path, holds_secret: Callable[[bytes], str | None]) -> list[str]:
    """Rewrite the patch at `path` with each binary hunk that holds a secret (by
    `holds_secret`: the rule found, else None) or cannot be read through replaced by a line
    saying so (`[REDACTED:<rule>]` for a secret); the rules of the hunks withheld for a
    secret. The file is replaced (atomically, keeping its mode) only when a hunk is
    withheld."""
    from copeca_action._util.scrub import rewriting  # the scrubber calls this module

    found: list[str] = []
    with path.open("rb") as handle:
        if not _holds_header(handle):
            return []
        handle.seek(0)
        with rewriting(path, os.fstat(handle.fileno()).st_mode & 0o7777) as rewrite:
            rewrite.keep = False  # unless a hunk is withheld
            lines = iter(handle.readline, b"")
            for line in lines:
                if line != HEADER:
                    rewrite.out.write(line)
                    continue
                hunk, after = _read_hunk(lines)
                why = _check(hunk.blocks, holds_secret) if hunk.complete \
                    else "it cannot be decoded"
                if why is None:
                    rewrite.out.write(HEADER + hunk.raw)
                elif why.startswith("secret:"):
                    rewrite.keep = True
                    found.append(why[7:])
                    rewrite.out.write(WITHHELD + b"[REDACTED:" + why[7:].encode() + b"]\n\n")
                else:
                    rewrite.keep = True
                    rewrite.out.write(WITHHELD + why.encode() + b"\n\n")
                rewrite.out.write(after)
    return found


def _holds_header(handle: BinaryIO) -> bool:
    """Whether the file holds a HEADER line (read in chunks)."""
    tail = b""
    for chunk in iter(lambda: handle.read(1 << 20), b""):
        if HEADER in tail + chunk:
            return True
        tail = chunk[-len(HEADER):]
    return False


@dataclass
class _Hunk:
    raw: bytes = b""
    """The hunk's lines after its HEADER, as they were."""
    blocks: list[tuple[str, bytes]] = field(default_factory=list)
    """Each block's kind (`literal`, `delta`) and decompressed bytes."""
    complete: bool = True
    """Every block decoded, within MAX_BYTES."""


def _read_hunk(lines: Iterator[bytes]) -> tuple[_Hunk, bytes]:
    """The one or two blocks after a HEADER line (`literal N` or `delta N`, base85 lines, a
    blank line: the change, then its reverse), and the line read after them (b"" at the
    end), which belongs to what follows."""
    hunk = _Hunk()
    raw = bytearray()
    line = next(lines, b"")
    while line.startswith(_BLOCK) and len(hunk.blocks) < 2:
        raw += line
        kind, _, size = line.strip().partition(b" ")
        encoded = bytearray()
        for row in lines:
            raw += row
            if not row.strip():
                break
            decoded = _base85_row(row)
            if decoded is None:
                hunk.complete = False
            else:
                encoded += decoded
        data = b""
        try:
            data = zlib.decompressobj().decompress(bytes(encoded), MAX_BYTES + 1)
        except zlib.error:
            hunk.complete = False
        if not size.isdigit() or int(size) > MAX_BYTES or len(data) > MAX_BYTES:
            hunk.complete = False
        hunk.blocks.append((kind.decode(), data))
        line = next(lines, b"")
    if not hunk.blocks:
        hunk.complete = False
    hunk.raw = bytes(raw)
    return hunk, line


def _base85_row(row: bytes) -> bytes | None:
    """One line of git's base85: its first character gives the bytes it holds (A–Z 1–26,
    a–z 27–52), the rest their encoding in groups of five characters."""
    row = row.rstrip(b"\r\n")
    if not row:
        return None
    first = row[0]
    length = (first - 64 if 65 <= first <= 90 else first - 96 + 26 if 97 <= first <= 122
              else -1)
    if length < 0:
        return None
    try:
        return base64.b85decode(row[1:])[:length]
    except ValueError:
        return None


def _check(blocks: list[tuple[str, bytes]],
           holds_secret: Callable[[bytes], str | None]) -> str | None:
    """"secret:<rule>" when a block holds a secret; a reason when it cannot be read
    through; None when it is clean."""
    for kind, data in blocks:
        content = _inserted(data) if kind == "delta" else data
        if content is None:
            return "its delta cannot be decoded"
        try:
            for layer in _layers(content, _DEPTH, [0]):
                rule = holds_secret(layer)
                if rule is not None:
                    return "secret:" + rule
        except _TooLarge:
            return f"it opens to more than {MAX_BYTES >> 20} MiB, too much to check"
    return None


def _inserted(delta: bytes) -> bytes | None:
    """The bytes a git delta inserts (its copies come from the old file, already in the
    repository), joined; None when it is not a delta."""
    pos = 0
    for _ in range(2):  # source and target sizes, little-endian base-128
        while True:
            if pos >= len(delta):
                return None
            byte = delta[pos]
            pos += 1
            if not byte & 0x80:
                break
    out = bytearray()
    while pos < len(delta):
        op = delta[pos]
        pos += 1
        if op & 0x80:  # copy: offset and size bytes flagged by the low 7 bits
            pos += bin(op & 0x7F).count("1")
        elif op:
            out += delta[pos:pos + op]
            pos += op
        else:
            return None  # reserved
    return bytes(out) if pos == len(delta) else None


class _TooLarge(Exception):
    pass


def _layers(data: bytes, depth: int, total: list[int]) -> Iterator[bytes]:
    """The bytes, then what each compressed layer in them opens to (to `depth`); raises
    _TooLarge past MAX_BYTES in all."""
    total[0] += len(data)
    if total[0] > MAX_BYTES:
        raise _TooLarge
    yield data
    if depth == 0:
        return
    for inner in _opened(data):
        yield from _layers(inner, depth - 1, total)


def _opened(data: bytes) -> Iterator[bytes]:
    """What a compressed file opens to, bounded (a bomb stops at MAX_BYTES + 1)."""
    limit = MAX_BYTES + 1
    try:
        if data[:2] == b"\x1f\x8b":
            yield zlib.decompressobj(wbits=47).decompress(data, limit)
        elif len(data) > 1 and data[0] == 0x78 and (data[0] << 8 | data[1]) % 31 == 0:
            yield zlib.decompressobj().decompress(data, limit)
        elif data[:3] == b"BZh":
            yield bz2.BZ2Decompressor().decompress(data, limit)
        elif data[:6] == b"\xfd7zXZ\x00":
            yield lzma.LZMADecompressor().decompress(data, limit)
        elif data[:4] == b"PK\x03\x04":
            with zipfile.ZipFile(io.BytesIO(data)) as archive:
                for info in archive.infolist()[:1000]:
                    with archive.open(info) as member:
                        yield member.read(limit)
    except (OSError, EOFError, ValueError, zlib.error, lzma.LZMAError,
            zipfile.BadZipFile, NotImplementedError, RuntimeError):
        return
