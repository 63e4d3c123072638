"""The encodings the scrubber once missed, each written by the real tool an agent would run
(`od` with decimal and octal types, `od -a`, narrow `base64`/`base32`/`basenc`, dumps of one
byte a line, `email.header`'s RFC 2047 words, every byte `%XX`- or `\\u`-escaped): the value
is found at every alignment, also inside a transcript's JSON, and no trace of it is left."""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Iterator

import pytest

from copeca_action._util.scrub import SECRETS, Scrubber

VALUE = b"pl4nted-S3cret/value+with=odd&chars!"
"""A value of no token shape: found only by value."""
RULE = b"[REDACTED:env:K]"
PREFIXES = [b"", b"a", b"ab", b"abc", b"PATH=/usr/bin\nK="]
"""Every alignment of a word of two or four bytes, and a value that starts a dump's line."""


@pytest.fixture(autouse=True)
def _clean_registry() -> Iterator[None]:
    SECRETS.clear()
    yield
    SECRETS.clear()


def tool(command: str, data: bytes) -> bytes:
    """`data` through `command` (real tools in a shell pipeline); skipped where the first
    tool is not installed."""
    if shutil.which(command.split()[0]) is None:
        pytest.skip(f"{command.split()[0]} is not installed")
    return subprocess.run(command, shell=True, input=data, capture_output=True,
                          check=True).stdout


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
