"""Secrets by value, written through the real tools an agent would run (`base32`, `od`,
`xxd`, `hexdump`, `rev`, `python -c`): the scrubber must find each at every alignment, also
inside a transcript's JSON, and leave a real transcript untouched."""

from __future__ import annotations

import json
import random
import shlex
import sys
from pathlib import Path

import pytest
from scrub_tool_helpers import RULE, VALUE, tool

from copeca_action._util.scrub import Scrubber

pytestmark = pytest.mark.usefixtures("clean_registry")




def scrubbed(data: bytes, in_json: bool = False) -> tuple[bytes, Scrubber]:
    """`data` framed as tool output (or as a transcript's JSON line) and scrubbed."""
    framed = b"the agent ran it:\n" + data + b"\n(done)\n"
    if in_json:
        framed = json.dumps({"out": framed.decode("latin-1")}).encode() + b"\n"
    scrubber = Scrubber({"K": VALUE})
    out = scrubber.scrub(framed)
    assert out.startswith(framed[:12]) and b"(done)" in out[-12:]
    return out, scrubber


def assert_redacted(out: bytes, scrubber: Scrubber, *forms: bytes) -> None:
    assert RULE in out and scrubber.counts["env:K"] >= 1
    for form in forms:  # no 12 characters of the encoded value are left
        for at in range(0, len(form) - 12):
            assert form[at:at + 12] not in out, form[at:at + 12]


PREFIXES = [b"", b"a", b"ab", b"abc", b"abcd", b"PATH=/usr/bin\nK="]
"""Every alignment of base32's 5-byte groups (and more than one line before)."""


@pytest.mark.parametrize("prefix", PREFIXES)
@pytest.mark.parametrize("command", [
    "base32", "base32 -w0", "base32 -w 64", "base32 -w0 | tr A-Z a-z | tr -d =",
    "basenc --base32hex", "basenc --base32hex -w0 | tr -d ="])
@pytest.mark.parametrize("in_json", [False, True])
def test_base32_at_every_alignment_is_redacted(prefix: bytes, command: str,
                                               in_json: bool) -> None:
    """RFC 4648 base32 (`base32` wraps at 76 columns and pads with up to six `=`; lower case
    and unpadded as TOTP secrets and many libraries write it; the base32hex alphabet)."""
    encoded = tool(command, prefix + VALUE + b"\nHOME=/root\n").strip()
    out, scrubber = scrubbed(encoded, in_json)
    own = tool(command, prefix + VALUE).replace(b"\n", b"").rstrip(b"=")
    assert_redacted(out, scrubber, own[len(prefix) * 8 // 5 + 2:-8])  # the value's own


def test_a_reversed_value_is_redacted() -> None:
    """`env | rev`, the simplest way round a filter that looks for the value itself."""
    reversed_ = tool("rev", b"K=" + VALUE + b"\n").strip()
    assert_redacted(*scrubbed(reversed_), reversed_)


HEX_DUMPS = [
    "od -tx1", "od -An -tx1", "od -tx1z", "xxd", "xxd -g1", "xxd -i", "hexdump -C",
    "od -tx2", "od -x", "od -An -tx2", "hexdump", "hexdump -x", "od -tx4", "od -An -tx4",
    "xxd -e", "od -tx8"]
"""Hex dumps as the tools print them: bytes one by one, and little-endian words of two, four
and eight bytes (`od -tx2`'s `6c70` is `pl`), with offsets or without, and text columns."""


@pytest.mark.parametrize("prefix", [b"", b"a", b"ab", b"abc", b"PATH=/usr/bin\nK="])
@pytest.mark.parametrize("command", HEX_DUMPS)
@pytest.mark.parametrize("in_json", [False, True])
def test_hex_dumps_of_every_tool_are_redacted(prefix: bytes, command: str,
                                              in_json: bool) -> None:
    dump = tool(command, prefix + VALUE + b"\nHOME=/root\n")
    out, scrubber = scrubbed(dump, in_json)
    assert scrubber.counts["env:K"] == 1
    assert_redacted(out, scrubber, VALUE)  # nor in a text column
    lines = [line for line in dump.splitlines() if VALUE[:4] in line or VALUE[-4:] in line]
    for line in lines:  # no line that spelled part of the value is left
        assert line not in out


HEXDUMP_32 = ("hexdump -e '\"%08.8_ax  \" 16/1 \"%02x \" \"  \" 16/1 \"%02x \"' "
              "-e '\"  |\" 32/1 \"%_p\" \"|\\n\"'")
"""`hexdump -C`'s layout, 32 bytes a line (`hexdump -C` itself has no width)."""


CHAR_DUMPS = ["od -c", "od -An -c", "od -tc", "hexdump -c", "od -b", "od -An -b", "hexdump -b"]
"""Character dumps, a byte in four columns: `   p`, `  \\n`, ` 303` (and all in octal)."""


@pytest.mark.parametrize("prefix", [b"", b"a", b"PATH=/usr/bin\nK="])
@pytest.mark.parametrize("command", CHAR_DUMPS)
@pytest.mark.parametrize("in_json", [False, True])
def test_character_dumps_are_redacted(prefix: bytes, command: str, in_json: bool) -> None:
    dump = tool(command, prefix + VALUE + b"\n\"\\\xc3\xa9 HOME=/root\n")
    out, scrubber = scrubbed(dump, in_json)
    assert scrubber.counts["env:K"] == 1
    for line in dump.splitlines()[:3]:  # the lines that spell the value are gone
        assert line.split(b" ", 1)[-1].strip() not in out


@pytest.mark.parametrize("command", ["od -c", "od -b", "od -tx2", "xxd", "hexdump -C",
                                     # narrow and wide ones (DUMP_LAYOUTS)
                                     "xxd -c 4", "od -An -tx1 -w4", "xxd -b", HEXDUMP_32])
@pytest.mark.parametrize("chunk", [7, 100, 4096])
def test_a_dump_split_across_stream_pieces_is_redacted(command: str, chunk: int) -> None:
    dump = tool(command, b"PATH=/usr/bin\nK=" + VALUE + b"\n")
    data = b"a log line, then the agent's dump\n" * 20 + dump + b"done.\n"
    scrubber = Scrubber({"K": VALUE})
    out = b"".join(scrubber.scrub_stream([data[i:i + chunk]
                                          for i in range(0, len(data), chunk)]))
    assert out.endswith(b"done.\n") and scrubber.counts["env:K"] == 1
    if command in ("od -c", "od -b", "od -tx2", "xxd", "hexdump -C"):
        assert dump.splitlines()[1] not in out


@pytest.mark.parametrize("command", ["xxd", "od -tx1", "od -tx2", "hexdump -C", "od -c",
                                     "base64", "base32", "xxd -p"])
@pytest.mark.parametrize("edge", [-40, -7, 0, 5, 33])
def test_a_dump_over_64_kib_cut_at_a_chunk_edge_is_redacted(
        tmp_path: Path, command: str, edge: int) -> None:
    """A dump of a large file, the value in it where the 1 MiB chunk of `scrub_file` ends."""
    from copeca_action._util import scrub

    size = 300_000
    raw = bytearray(random.Random(7).randbytes(size))
    out = tool(command, bytes(raw))
    per_byte = len(out) / size
    at = int((scrub._CHUNK + edge) / per_byte) // 16 * 16 - 8  # its encoding spans the edge
    raw[at:at + len(VALUE)] = VALUE
    path = tmp_path / "dump.txt"
    path.write_bytes(tool(command, bytes(raw)))
    scrubber = Scrubber({"K": VALUE})
    scrub.scrub_file(path, scrubber)
    assert scrubber.counts["env:K"] >= 1
    left = path.read_bytes()
    assert left.count(RULE) == scrubber.counts["env:K"]


def test_real_transcripts_are_left_byte_for_byte() -> None:
    """No false positive: every recorded transcript, scrubbed with secrets that are not in
    them, comes out unchanged (their hashes, UUIDs, numbers, indentation, base64 images)."""
    root = Path(__file__).resolve().parents[2] / "fixtures" / "transcripts"
    files = sorted(p for p in root.rglob("*") if p.is_file())
    assert len(files) > 40
    scrubber = Scrubber({"K": VALUE, "ANTHROPIC_API_KEY": "sk-ant-api03-" + "Qm9vN" * 20,
                         "GITHUB_TOKEN": "ghs_" + "a1B2c" * 8})
    for path in files:
        data = path.read_bytes()
        assert b"".join(scrubber.scrub_stream([data[:4096], data[4096:]])) == data, path
    assert not scrubber.counts


QUOPRI = f"{shlex.quote(sys.executable)} -m quopri"
MAIL = (f"{shlex.quote(sys.executable)} -c 'import sys, email.message, email.policy; "
        "m = email.message.EmailMessage(policy=email.policy.SMTP); "
        "m.set_content(sys.stdin.read(), cte=\"quoted-printable\"); "
        "sys.stdout.buffer.write(m.as_bytes())'")


@pytest.mark.parametrize("column", range(0, 80, 3))
@pytest.mark.parametrize("command", [QUOPRI, QUOPRI + " -t", MAIL])
@pytest.mark.parametrize("in_json", [False, True])
def test_quoted_printable_split_by_a_soft_line_break_is_redacted(
        column: int, command: str, in_json: bool) -> None:
    """Quoted-printable (`python -m quopri`, `-t` escaping spaces, an email body as the
    `email` package writes it, CRLF): `=` as `=3D`, and lines wrapped at 76 columns with a
    soft break (`=` at the line's end) that falls at every place inside the value."""
    body = b"x" * column + VALUE + b" and the mail goes on after it" * 3 + b"\n"
    encoded = tool(command, body)
    assert b"=3D" in encoded and b"=\n" in encoded.replace(b"\r\n", b"\n")
    out, scrubber = scrubbed(encoded, in_json)
    assert scrubber.counts["env:K"] == 1
    assert out.count(b"[REDACTED:") == 1 and b"goes" in out  # the text around is kept
    plain = out.replace(b"=\r\n", b"").replace(b"=\n", b"").replace(b"=\\r\\n", b"")
    assert_redacted(plain.replace(b"=\\n", b""), scrubber, b"pl4nted-S3cret/value+with=3Dodd")
    streamed = Scrubber({"K": VALUE})
    framed = b"the agent ran it:\n" + encoded + b"\n(done)\n"
    pieces = [framed[i:i + 41] for i in range(0, len(framed), 41)]
    assert b"".join(streamed.scrub_stream(pieces)) == Scrubber({"K": VALUE}).scrub(framed)
    assert Scrubber({"K": VALUE}).finds(framed) == "env:K"


def test_quoted_printable_without_a_secret_is_left_alone() -> None:
    """Soft line breaks and `=XX` escapes of text that holds no secret, and a shell line
    ending in `=`, stay byte for byte."""
    text = tool(QUOPRI, "naïve café ".encode() * 40 + b"a=b\n")
    data = text + b"export EMPTY=\nls -la\n" + json.dumps({"o": text.decode()}).encode()
    scrubber = Scrubber({"K": VALUE})
    assert b"".join(scrubber.scrub_stream([data[:100], data[100:]])) == data
    assert not scrubber.counts


DUMP_LAYOUTS = [
    "xxd -b", "xxd -b -c 4", "xxd -c 32", "xxd -c 8", "xxd -c 4", "xxd -c 2", "xxd -c 3 -g 1",
    "xxd -g 4", "xxd -e", "xxd -e -c 8", "od -An -tx1 -w32", "od -tx1 -w8", "od -tx1 -w4",
    "od -An -tx1 -w4", "od -An -tx1 -w2", "od -tx2 -w4", "od -tx4 -w8", "od -to1", "od -a",
    "hexdump", HEXDUMP_32, "hexdump -e '\"%07.7_ax \" 4/1 \"%02x \" \"\\n\"'"]
"""Dumps of other widths and layouts than the default ones: bits (`xxd -b`), lines of 2 to
32 bytes (the value split over many), with offsets that are no multiple of 16."""


@pytest.mark.parametrize("prefix", [b"", b"a", b"ab", b"abc"])
@pytest.mark.parametrize("command", DUMP_LAYOUTS)
@pytest.mark.parametrize("in_json", [False, True])
def test_dumps_of_any_width_are_redacted(prefix: bytes, command: str, in_json: bool) -> None:
    dump = tool(command, prefix + VALUE + b"\nHOME=/root\n")
    out, scrubber = scrubbed(dump, in_json)
    assert scrubber.counts["env:K"] == 1
    spelled = [line for line in dump.splitlines() if line.strip() and line not in out]
    assert len(spelled) >= len(dump.splitlines()) // 2  # the lines that spell the value


@pytest.mark.parametrize("prefix", [b"", b"a", b"ab"])
@pytest.mark.parametrize("width", [60, 61, 100, 17])
@pytest.mark.parametrize("in_json", [False, True])
def test_base64_wrapped_at_any_width_from_16_is_redacted(prefix: bytes, width: int,
                                                         in_json: bool) -> None:
    encoded = tool(f"base64 -w {width}", prefix + VALUE + b"\nHOME=/root\n")
    out, scrubber = scrubbed(encoded.strip(), in_json)
    assert scrubber.counts["env:K"] == 1
    assert encoded.splitlines()[0] not in out  # the block is redacted whole


@pytest.mark.parametrize("command", [QUOPRI, MAIL, *DUMP_LAYOUTS])
def test_finds_and_the_file_rewrite_agree(tmp_path: Path, command: str) -> None:
    """`Scrubber.finds` (what the binary-patch check asks) names the value in what the tool
    wrote, `scrub_file` takes it out, and `finds` sees nothing in what is left."""
    from copeca_action._util.scrub import scrub_file

    data = tool(command, b"x" * 70 + VALUE + b" and more mail text\nHOME=/root\n")
    scrubber = Scrubber({"K": VALUE})
    assert scrubber.finds(data) == "env:K" and not scrubber.counts
    path = tmp_path / "out.txt"
    path.write_bytes(b"log line\n" * 50 + data)
    assert scrub_file(path, scrubber) == 1
    assert scrubber.finds(path.read_bytes()) is None
