"""The encodings the scrubber once missed, each written by the real tool an agent would run
(`od` with decimal and octal types, `od -a`, narrow `base64`/`base32`/`basenc`, dumps of one
byte a line, `email.header`'s RFC 2047 words, every byte `%XX`- or `\\u`-escaped): the value
is found at every alignment, also inside a transcript's JSON, and no trace of it is left."""

from __future__ import annotations

import email.header
import json
import random
import re
import shlex
import sys
from pathlib import Path

import pytest
from scrub_tool_helpers import RULE, VALUE, tool

from copeca_action._util.scrub import Scrubber

PREFIXES = [b"", b"a", b"ab", b"abc", b"PATH=/usr/bin\nK="]
"""Every alignment of a word of two or four bytes, and a value that starts a dump's line."""


pytestmark = pytest.mark.usefixtures("clean_registry")




def framed(data: bytes, in_json: bool) -> bytes:
    text = b"the agent ran it:\n" + data + b"\n(done)\n"
    if in_json:
        return json.dumps({"out": text.decode("latin-1")}).encode() + b"\n"
    return text


def scrubbed(data: bytes, in_json: bool = False) -> tuple[bytes, Scrubber]:
    """`data` framed as tool output (or as a transcript's JSON line) and scrubbed; the text
    around is kept."""
    scrubber = Scrubber({"K": VALUE})
    out = scrubber.scrub(framed(data, in_json))
    assert out[:12] in (b"the agent ra", b'{"out": "the') and b"(done)" in out[-14:]
    return out, scrubber


def test_a_decimal_dump_inside_json_does_not_stop_the_scrubber() -> None:
    """`od -tu1` in a transcript's JSON: the hex-run search found `47 114 111` as a run
    inside its window, the whole text's regex did not at the same start (re's possessive
    groups), and an assert stopped the scrub of the file (and the run's bundle) there."""
    dump = tool("od -tu1", b"a" + VALUE + b"\nHOME=/root\n")
    scrubbed(dump, in_json=True)  # to the text after it


def assert_gone(out: bytes, scrubber: Scrubber, dump: bytes) -> None:
    """Redacted, and no line of the dump that spelled a part of the value is left."""
    assert RULE in out and scrubber.counts["env:K"] == 1
    assert VALUE not in out
    spelling = [line for line in dump.splitlines()[:-2] if line.strip() not in (b"", b"*")]
    assert spelling and not [line for line in spelling if line in out]


NUMBER_DUMPS = [
    "od -td1", "od -An -td1", "od -tu1", "od -An -tu1", "od -to2", "od -An -to2", "od -o",
    "od -td2", "od -s", "od -tu2", "od -d", "od -td4", "od -to4", "od -tu4", "od -td8",
    "od -tu1 -w8", "od -td1 -w32", "od -Ad -td1"]
"""`od`'s decimal and octal types: bytes, and little-endian words of 2, 4 and 8 bytes."""


@pytest.mark.parametrize("prefix", PREFIXES)
@pytest.mark.parametrize("command", NUMBER_DUMPS)
@pytest.mark.parametrize("in_json", [False, True])
def test_decimal_and_octal_dumps_are_redacted(prefix: bytes, command: str,
                                              in_json: bool) -> None:
    dump = tool(command, prefix + VALUE + b"\nHOME=/root\n")
    out, scrubber = scrubbed(dump, in_json)
    assert_gone(out, scrubber, dump)


ONE_A_LINE = [
    "xxd -c 1", "xxd -p -c 1", "od -tx1 -w1", "od -An -tx1 -w1", "od -v -tx1 -w1",
    "hexdump -e '1/1 \"%02x\\n\"'", "hexdump -v -e '1/1 \"%02X\\n\"'", "od -An -tu1 -w1",
    "od -tu1 -w1"]
"""Dumps of one byte a line; `od` and `hexdump` print `*` for a line that repeats the one
before (the value's `dd`), `od` with the offsets that say how many times; `od` ends its dump
with an offset alone on its line (not a number of the dump)."""


@pytest.mark.parametrize("prefix", [b"", b"a", b"PATH=/usr/bin\nK="])
@pytest.mark.parametrize("command", ONE_A_LINE)
@pytest.mark.parametrize("in_json", [False, True])
def test_dumps_of_one_byte_a_line_are_redacted(prefix: bytes, command: str,
                                               in_json: bool) -> None:
    dump = tool(command, prefix + VALUE + b"\nHOME=/root\n")
    out, scrubber = scrubbed(dump, in_json)
    assert_gone(out, scrubber, dump)


@pytest.mark.parametrize("command", ["od -tu1 -w1", "od -td1 -w1", "od -to1 -w1"])
def test_the_offset_that_ends_a_long_dump_is_no_number_of_it(command: str) -> None:
    """`od` ends with the offset after the last byte, alone on its line: read as one more
    number (`0000454`, more than a byte), it made every number a word of four bytes."""
    dump = tool(command, b"PATH=/usr/bin:/bin " * 16 + VALUE)
    assert int(dump.splitlines()[-1]) > 255
    out, scrubber = scrubbed(dump)
    assert_gone(out, scrubber, dump)


NARROW = ["base64 -w 1", "base64 -w 4", "base64 -w 8", "base64 -w 15", "base32 -w 10",
          "base32 -w 3", "basenc --base64url -w 10", "basenc --base64url -w 6 | tr -d =",
          "basenc --base32hex -w 12", "xxd -p -c 4", "xxd -p -c 7"]
"""Wrapped at fewer than 16 columns (base64url without its padding too)."""


@pytest.mark.parametrize("prefix", [b"", b"a", b"ab", b"abcd"])
@pytest.mark.parametrize("command", NARROW)
@pytest.mark.parametrize("in_json", [False, True])
def test_encodings_wrapped_narrow_are_redacted(prefix: bytes, command: str,
                                               in_json: bool) -> None:
    encoded = tool(command, prefix + VALUE + b"\nHOME=/root\n")
    out, scrubber = scrubbed(encoded, in_json)
    assert RULE in out and scrubber.counts["env:K"] == 1
    lines = encoded.splitlines()
    middle = b"\n".join(lines[len(lines) // 2:len(lines) // 2 + 3])
    assert middle not in out and middle.replace(b"\n", b"\\n") not in out  # redacted whole


@pytest.mark.parametrize("command", ["od -td1", "od -to2", "xxd -c 1", "base64 -w 8"])
def test_a_dump_that_opens_a_json_string_is_redacted(command: str) -> None:
    """A tool's output that starts with the dump: its first line follows the JSON string's
    quote, not a line break."""
    dump = tool(command, VALUE + b"\nHOME=/root\n")
    line = json.dumps({"type": "tool_result", "content": dump.decode()}).encode() + b"\n"
    scrubber = Scrubber({"K": VALUE})
    out = scrubber.scrub(line)
    assert scrubber.counts["env:K"] == 1
    assert json.loads(out)["content"].startswith("[REDACTED:env:K]")


@pytest.mark.parametrize("command", ["od -td1", "od -to2", "od -tu1 -w1", "xxd -c 1",
                                     "base64 -w 8", "od -td8"])
@pytest.mark.parametrize("chunk", [5, 64, 1000])
@pytest.mark.parametrize("in_json", [False, True])
def test_a_line_dump_split_across_stream_pieces_is_redacted(command: str, chunk: int,
                                                            in_json: bool) -> None:
    dump = tool(command, b"PATH=/usr/bin\nK=" + VALUE + b"\n")
    data = b"a log line, then the agent's dump\n" * 20 + framed(dump, in_json) + b"done.\n"
    whole = Scrubber({"K": VALUE})
    expected = whole.scrub(data)
    streamed = Scrubber({"K": VALUE})
    out = b"".join(streamed.scrub_stream([data[i:i + chunk]
                                          for i in range(0, len(data), chunk)]))
    assert out == expected and streamed.counts["env:K"] == whole.counts["env:K"] == 1


def test_numbers_and_short_lines_without_a_secret_are_left_alone() -> None:
    """Tables of numbers, `seq`, `wc`, a dump of other bytes, short lines of code and words:
    byte for byte."""
    data = (tool("od -td1", bytes(range(200))) + tool("od -to2", b"nothing secret here" * 9)
            + tool("seq 1 40", b"") + tool("base64 -w 8", b"no secret in this") + b"\n"
            + b"  12  34  56\n   7   8   9\nif x:\n    pass\nelse:\n    y\n" * 5
            + tool("xxd -c 1", b"short text, no key"))
    for text in (data, json.dumps({"out": data.decode()}).encode()):
        scrubber = Scrubber({"K": VALUE})
        assert b"".join(scrubber.scrub_stream([text[:300], text[300:]])) == text
        assert not scrubber.counts


def _header_tool(charset: str, encoding: str) -> str:
    """A Python one-liner that writes its input as an RFC 2047 header (`email.header`), with
    the charset's header encoding forced to `B` or `Q` (or left as the package picks it)."""
    force = (f"c.header_encoding = email.charset.{encoding}; " if encoding else "")
    return (f"{shlex.quote(sys.executable)} -c 'import sys, email.header, email.charset; "
            f"c = email.charset.Charset(\"{charset}\"); {force}"
            "sys.stdout.write(email.header.Header(sys.stdin.read(), c, header_name=\"Subject\")"
            ".encode())'")


@pytest.mark.parametrize("column", [0, 5, 17, 30, 44, 59])
@pytest.mark.parametrize("charset,encoding", [("utf-8", ""), ("utf-8", "BASE64"),
                                              ("utf-8", "QP"), ("iso-8859-1", "")])
@pytest.mark.parametrize("in_json", [False, True])
def test_rfc_2047_encoded_words_are_redacted(column: int, charset: str, encoding: str,
                                             in_json: bool) -> None:
    """`email.header` escapes more than quoted-printable must (`&` as `=26`) and splits a
    long header into words of at most 75 characters, each encoded on its own: the value is
    split at every place, and a `B` word's base64 starts anew in each."""
    text = "x" * column + VALUE.decode() + " and the subject goes on é " * 3
    header = tool(_header_tool(charset, encoding), text.encode())
    assert header.count(b"=?") >= 2
    out, scrubber = scrubbed(b"Subject: " + header, in_json)
    assert RULE in out and scrubber.counts["env:K"] == 1
    words = re.findall(rb"=\?[^?]*\?[BbQq]\?[^?]*\?=", out)  # what is left, decoded
    left = b"".join(part for word in words
                    for part, _ in email.header.decode_header(word.decode())
                    if isinstance(part, bytes))
    for at in range(len(VALUE) - 8):
        assert VALUE[at:at + 8] not in left and VALUE[at:at + 8] not in out


@pytest.mark.parametrize("chunk", [3, 40, 200])
def test_encoded_words_split_across_stream_pieces_are_redacted(chunk: int) -> None:
    header = tool(_header_tool("utf-8", "BASE64"), b"y" * 50 + VALUE + b" more " * 20)
    data = b"mail headers follow\n" * 10 + b"Subject: " + header + b"\n\nbody\n"
    scrubber = Scrubber({"K": VALUE})
    out = b"".join(scrubber.scrub_stream([data[i:i + chunk] for i in range(0, len(data),
                                                                           chunk)]))
    assert out == Scrubber({"K": VALUE}).scrub(data) and scrubber.counts["env:K"] == 1


def test_encoded_words_without_a_secret_are_left_alone() -> None:
    header = tool(_header_tool("utf-8", "BASE64"), "naïve subject line ".encode() * 8)
    data = b"Subject: " + header + b"\nurl: https://x.test/?a=?b?=c\n"
    for text in (data, json.dumps({"h": data.decode()}).encode()):
        scrubber = Scrubber({"K": VALUE})
        assert b"".join(scrubber.scrub_stream([text[:50], text[50:]])) == text
        assert not scrubber.counts


@pytest.mark.parametrize("in_json", [False, True])
@pytest.mark.parametrize("form", ["percent", "percent-lower", "json-u", "json-U"])
def test_every_byte_escaped_is_redacted(form: str, in_json: bool) -> None:
    """Every byte `%XX` (not only those URL-encoding must escape), every character `\\uXXXX`,
    as a script that escapes all writes them (written here by Python's own formatting)."""
    code = {"percent": "''.join('%%%02X' % b for b in data)",
            "percent-lower": "''.join('%%%02x' % b for b in data)",
            "json-u": "''.join(chr(92) + 'u%04x' % b for b in data)",
            "json-U": "''.join(chr(92) + 'u%04X' % b for b in data)"}[form]
    escaped = tool(f"{shlex.quote(sys.executable)} -c \"import sys; data = "
                   f"sys.stdin.buffer.read(); sys.stdout.write({code})\"", VALUE)
    assert escaped.count(b"%") + escaped.count(b"\\u") == len(VALUE)
    out, scrubber = scrubbed(b"value=" + escaped + b"&next=1", in_json)
    assert RULE in out and scrubber.counts["env:K"] == 1
    assert escaped[6:30] not in out  # redacted whole, to the next space or quote


SPACED = b"correct horse\tbattery staple\x01"
"""A value with a space, a tab and a control byte: `od -a` names them (`sp`, `ht`, `soh`)."""


@pytest.mark.parametrize("prefix", [b"", b"a", b"PATH=/usr/bin\nK=", b"x\x00\x7f y"])
@pytest.mark.parametrize("command", ["od -a", "od -An -a", "od -a -w8"])
@pytest.mark.parametrize("in_json", [False, True])
def test_named_characters_of_od_a_are_read(prefix: bytes, command: str, in_json: bool) -> None:
    """`od -a` prints a space, a line break, a tab or a control byte by its name, in the
    four columns of a cell: a value after a line break (`  nl`), or holding one, is read
    through it."""
    for value in (VALUE, SPACED):
        dump = tool(command, prefix + value + b"\nHOME=/root\n")
        scrubber = Scrubber({"K": value})
        out = scrubber.scrub(framed(dump, in_json))
        assert RULE in out and scrubber.counts["env:K"] == 1
        for line in dump.splitlines()[:2]:
            assert line not in out


@pytest.mark.parametrize("command", ["od -td1", "od -to2", "xxd -c 1", "base64 -w 8"])
@pytest.mark.parametrize("edge", [-7, 0, 33])
def test_a_long_line_dump_cut_at_a_chunk_edge_is_redacted(
        tmp_path: Path, command: str, edge: int) -> None:
    """A dump of a large file, the value in it where the 1 MiB chunk of `scrub_file` ends:
    the cut moves back into the dump, before the value."""
    from copeca_action._util import scrub

    per_byte = len(tool(command, random.Random(1).randbytes(4800))) / 4800
    size = int(1.2 * scrub._CHUNK / per_byte)
    raw = bytearray(random.Random(7).randbytes(size))
    at = int((scrub._CHUNK + edge) / per_byte) // 16 * 16 - 8  # its encoding spans the edge
    raw[at:at + len(VALUE)] = VALUE
    path = tmp_path / "dump.txt"
    path.write_bytes(tool(command, bytes(raw)))
    assert path.stat().st_size > scrub._CHUNK
    scrubber = Scrubber({"K": VALUE})
    scrub.scrub_file(path, scrubber)
    assert scrubber.counts["env:K"] == 1 and path.read_bytes().count(RULE) == 1


@pytest.mark.parametrize("in_json", [False, True])
def test_a_backslash_in_the_text_column_of_a_one_byte_line(in_json: bool) -> None:
    """`xxd -c 1` prints a backslash byte as `5c  \\`: a line of the dump like the others."""
    value = b"back\\slash-S3cret/value"
    dump = tool("xxd -c 1", b"K=" + value + b"\n")
    scrubber = Scrubber({"K": value})
    out = scrubber.scrub(framed(dump, in_json))
    assert scrubber.counts["env:K"] == 1 and b"5c  " not in out
