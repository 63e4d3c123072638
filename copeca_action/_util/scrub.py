"""Secret scrubbing for everything that leaves the process: bundles, logs, comments, the
output folder.

Two kinds of rule: secret *values* (provider keys, tokens, every secret `INPUT_*`, any variable
the user names, and whatever the harness registered, e.g. the signing key's PEM and raw
bytes), each matched as is and in its common encodings (reversed, JSON-escaped, line by line,
base64 at each of the three byte offsets, standard and URL-safe, base32 at each of its five,
hex, URL-encoded, quoted-printable (also over soft line breaks); base64, base32 and hex also
wrapped over lines; hex with separators and hex
dumps, of bytes and of little-endian words (`od -tx1`, `od -tx2`, `xxd`, `hexdump -C`,
`hexdump`); character dumps (`od -c`, `od -b`); dumps of decimal and octal numbers (`od -td1`,
`od -to2`, ...); base64, base32 and hex wrapped at fewer than 16 columns, and dumps of one byte
a line (`xxd -c 1`); RFC 2047 encoded words in a row (`=?utf-8?b?...?=`, `?q?`) decoded and joined;
runs of `\\u`/`\\x`/`%` escapes decoded; a reply streamed in pieces over transcript lines
joined); and *token patterns* that are secrets whatever variable they came
from. A redaction reads `[REDACTED:<rule>]`; only
counts per rule are kept, never values. Works on bytes, in streamed chunks, so a 1 GB
transcript is never held in memory.
"""

from __future__ import annotations

import base64
import bisect
import contextlib
import copy
import itertools
import json
import os
import re
import sys
import threading
import urllib.parse
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, MutableMapping
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, BinaryIO

if TYPE_CHECKING:
    import logging

PROVIDER_KEY_VARS: tuple[str, ...] = (
    "ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN",
    "OPENAI_API_KEY", "CODEX_API_KEY", "AZURE_OPENAI_API_KEY",
    "GOOGLE_API_KEY", "GEMINI_API_KEY",
    "GITHUB_TOKEN", "GH_TOKEN", "INPUT_GITHUB-TOKEN", "INPUT_GITHUB_TOKEN",
    "INPUT_ANTHROPIC-API-KEY", "INPUT_ANTHROPIC_API_KEY",
    "INPUT_OPENAI-API-KEY", "INPUT_OPENAI_API_KEY",
    "INPUT_SIGNING-KEY", "INPUT_SIGNING_KEY",
    "ACTIONS_RUNTIME_TOKEN", "ACTIONS_ID_TOKEN_REQUEST_TOKEN",
    "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN",
    "COPECA_SIGNING_KEY",
)
"""Variables whose values are always secret."""

PUBLIC_INPUTS: frozenset[str] = frozenset({
    "SCENARIO", "TOOL_DIR", "COMPARE", "RUNNER_IMAGE", "BUDGET_USD", "ALERT_THRESHOLD",
    "FAIL_THRESHOLD", "FAIL_ON", "COMMENT", "COMMENT_ID", "SHARD", "MERGE", "REUSE",
    "OUTPUT_DIR", "DRY_RUN", "ALLOW_PULL_REQUEST_TARGET", "CHECK_RUN", "PULL_REQUEST",
    "HISTORY"})
"""The action's inputs that are settings, not secrets (`INPUT_<NAME>`, `-` read as `_`);
every other `INPUT_*` value is treated as a secret."""

EXTRA_VARS_ENV = "COPECA_SCRUB_VARS"
"""Comma- or space-separated names of more variables whose values must never be published."""

MIN_VALUE_LEN = 8
"""Shorter values are not scrubbed: `ANTHROPIC_API_KEY=x` for a local server would otherwise
redact every `x`. Real keys are far longer."""

_PEM = rb"-----BEGIN[ A-Z0-9]{0,40}PRIVATE KEY(?: BLOCK)?-----"


@dataclass(frozen=True)
class _Pattern:
    name: str
    prefilter: re.Pattern[bytes] | tuple[bytes, ...]
    """A cheap search every match implies (a regex, or literals tested with `in`, which is
    faster for long ones); most chunks fail it and skip the full regex."""
    regex: re.Pattern[bytes]


def _re(pattern: bytes, flags: int = 0) -> re.Pattern[bytes]:
    return re.compile(pattern, flags)


_SK = _re(rb"sk-")
PATTERNS: tuple[_Pattern, ...] = (
    _Pattern("private_key", (b"PRIVATE KEY",),
             _re(_PEM + rb".*?(?:-----END[ A-Z0-9]{0,40}PRIVATE KEY(?: BLOCK)?-----|\Z)",
                 re.DOTALL)),
    _Pattern("anthropic_key", _SK, _re(rb"sk-ant-[A-Za-z0-9_\-]{20,}")),
    # the literal first, the look behind it after: re then finds each `sk-` by its literal
    # prefix rather than trying the look-behind at every byte (30x faster on a report whose
    # task ids hold "task-")
    _Pattern("openai_key", _SK,
             _re(rb"sk-(?<![A-Za-z0-9_\-]sk-)(?!ant-)(?:proj-|svcacct-|admin-)?"
                 rb"[A-Za-z0-9_\-]{32,}")),
    _Pattern("github_token", _re(rb"gh[pousr]_"), _re(rb"gh[pousr]_[A-Za-z0-9]{36,255}")),
    _Pattern("github_pat", (b"github_pat_",), _re(rb"github_pat_[A-Za-z0-9_]{50,255}")),
    _Pattern("aws_access_key", _re(rb"A(?:KI|SI|BI|CC)A"),
             _re(rb"(?<![A-Z0-9])(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}(?![A-Z0-9])")),
    _Pattern("aws_secret_key", (b"ws_secret_access_key", b"WS_SECRET_ACCESS_KEY"),
             _re(rb"(?i)aws_secret_access_key[\"']?\s*[:=]\s*[\"']?[A-Za-z0-9/+=]{40}")),
)
"""Token shapes that are secrets wherever they appear (documented in docs/security.md)."""

_SAFE_CUT = (b"\n", b" ", b'"', b",")
"""Bytes no token contains: a chunk may end after one without splitting a match."""
_MAX_CARRY = 1 << 20
_END = re.compile(rb"-----END[ A-Z0-9]{0,40}-----")


def redaction(rule: str) -> bytes:
    return f"[REDACTED:{rule}]".encode()


def _secret_input(name: str) -> bool:
    return name.startswith("INPUT_") and (
        name[6:].upper().replace("-", "_") not in PUBLIC_INPUTS)


def env_secrets(env: Mapping[str, str] | None = None,
                extra_vars: Iterable[str] = ()) -> dict[str, str]:
    """Secret values by variable name: the provider variables, every `INPUT_*` but the
    action's settings, `COPECA_SCRUB_VARS` and `extra_vars`, when set to something long
    enough to be a secret."""
    env = os.environ if env is None else env
    names = set(PROVIDER_KEY_VARS) | set(extra_vars) | {n for n in env if _secret_input(n)}
    names |= {n for n in re.split(r"[,\s]+", env.get(EXTRA_VARS_ENV, "")) if n}
    return {n: env[n] for n in sorted(names) if len(env.get(n, "")) >= MIN_VALUE_LEN}


class SecretRegistry:
    """Every secret value this process holds, by name: what it read from its environment at
    start (see `capture_env`), plus what it loaded since (the signing key's PEM, DER and raw
    bytes; user-marked values). Every `Scrubber.from_env()` includes them, so a secret removed
    from `os.environ` after loading is still scrubbed."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._values: dict[str, bytes] = {}

    def add(self, name: str, value: str | bytes) -> None:
        data = value.encode() if isinstance(value, str) else bytes(value)
        if len(data) >= MIN_VALUE_LEN:
            with self._lock:
                key, n = name, 1
                while key in self._values and self._values[key] != data:
                    n += 1
                    key = f"{name}#{n}"
                self._values[key] = data

    def values(self) -> dict[str, bytes]:
        with self._lock:
            return dict(self._values)

    def clear(self) -> None:
        with self._lock:
            self._values.clear()


SECRETS = SecretRegistry()
"""The process-wide registry (see `register_secret`)."""
_SECRET_FILES: set[Path] = set()


def register_secret_file(path: Path) -> None:
    """A file holding a secret (the `--key` file): agents and graded code never see it."""
    with contextlib.suppress(OSError):
        _SECRET_FILES.add(path.resolve())


def secret_files() -> list[Path]:
    return sorted(_SECRET_FILES)


_PRIVATE_DIRS: set[Path] = set()


def register_private_dir(path: Path) -> None:
    """A folder of the harness no sandboxed code may see (the output folder: other runs,
    records, logs); the sandbox shows only the parts it binds itself (the run's tree)."""
    with contextlib.suppress(OSError):
        _PRIVATE_DIRS.add(path.resolve())


def private_dirs() -> list[Path]:
    return sorted(_PRIVATE_DIRS)


_READABLE_DIRS: set[Path] = set()


def register_readable_dir(path: Path) -> None:
    """A folder sandboxed code may read even where it lies in a hidden place (the snapshot
    cache with its toolchains and set-up folders)."""
    with contextlib.suppress(OSError):
        _READABLE_DIRS.add(path.resolve())


def readable_dirs() -> list[Path]:
    return sorted(_READABLE_DIRS)


def register_secret(name: str, value: str | bytes) -> None:
    """Mark `value` as secret for every scrubber made from now on (`Scrubber.from_env`)."""
    SECRETS.add(name, value)


def capture_env(env: Mapping[str, str] | None = None) -> dict[str, str]:
    """Register the environment's secret values (so they stay known once removed)."""
    found = env_secrets(env)
    for name, value in found.items():
        register_secret(f"env:{name}", value)
    return found


def _b64_cores(data: bytes) -> set[bytes]:
    """The base64 characters of `data` that do not depend on its neighbours, for each of the
    three offsets `data` can start at inside a longer encoded blob (standard and URL-safe)."""
    cores: set[bytes] = set()
    for pad in range(3):
        encoded = base64.b64encode(b"\0" * pad + data + b"\0\0")
        start = -(-8 * pad // 6)
        end = (8 * (pad + len(data))) // 6
        core = encoded[start:end]
        if len(core) >= MIN_VALUE_LEN:
            cores.add(core)
            cores.add(core.replace(b"+", b"-").replace(b"/", b"_"))
    return cores


_B32HEX = bytes.maketrans(b"ABCDEFGHIJKLMNOPQRSTUVWXYZ234567", b"0123456789ABCDEFGHIJKLMNOPQRSTUV")


def _b32_cores(data: bytes) -> set[bytes]:
    """The base32 characters (RFC 4648: `base32`, also in lower case, and `basenc
    --base32hex`) of `data` that do not depend on its neighbours, for each of the five
    offsets `data` can start at inside a longer encoded blob; padding never enters a core."""
    cores: set[bytes] = set()
    for pad in range(5):
        encoded = base64.b32encode(b"\0" * pad + data + b"\0" * 4)
        core = encoded[-(-8 * pad // 5):(8 * (pad + len(data))) // 5]
        if len(core) >= MIN_VALUE_LEN:
            cores |= {core, core.lower(), core.translate(_B32HEX)}
    return cores


_QP_LITERAL = frozenset(range(33, 127)) - {ord("=")}


def _qp_forms(data: bytes) -> set[bytes]:
    """`data` quoted-printable (RFC 2045, what `python -m quopri`, `email` and mail clients
    write) without its soft line breaks: `=` as `=3D`, other bytes outside printable ASCII
    as `=XX`; spaces and tabs kept or (`quopri -t`) escaped too; and the `header` form
    (RFC 2047 `Q`: a space as `_`, or escaped, and `_` as `=5F`). Each line of a multi-line
    value on its own (a line break is a line break in quoted-printable too)."""
    found: set[bytes] = set()
    for line in {data, *data.splitlines()}:
        body, tabs, header, both = bytearray(), bytearray(), bytearray(), bytearray()
        for byte in line:
            escaped = b"=%02X" % byte
            plain = byte in _QP_LITERAL
            body += bytes([byte]) if plain or byte in b" \t" else escaped
            tabs += bytes([byte]) if plain else escaped
            header += b"_" if byte == 32 else bytes([byte]) \
                if plain and byte != ord("_") else escaped
            both += bytes([byte]) if plain and byte != ord("_") else escaped
        found |= {bytes(body), bytes(tabs), bytes(header), bytes(both)}
    return found


def encodings(value: bytes) -> set[bytes]:
    """`value` as it may appear in a file: as is, reversed (`rev`), line by line,
    JSON-escaped, URL-encoded, hex (both cases), base64 at each offset (standard and
    URL-safe), base32 at each offset (upper and lower case, and its `base32hex` alphabet),
    quoted-printable (also JSON-escaped)."""
    found = {value, value[::-1]}
    found |= {line.strip() for line in value.splitlines()}
    text = value.decode("utf-8", "surrogateescape")
    try:
        found.add(json.dumps(text)[1:-1].encode())
        found.add(json.dumps(text, ensure_ascii=False)[1:-1].encode())
        found.add(urllib.parse.quote(text, safe="").encode())
        found.add(urllib.parse.quote(text).encode())
        found.add(urllib.parse.quote_plus(text, safe="").encode())
    except UnicodeEncodeError:
        pass
    found.add(value.hex().encode())
    found.add(value.hex().upper().encode())
    found |= _b64_cores(value) | _b32_cores(value)
    for form in _qp_forms(value) - found:
        found.add(form)
        found.add(json.dumps(form.decode("latin-1"))[1:-1].encode("latin-1"))
    return {v for v in found if len(v) >= MIN_VALUE_LEN}


_LINE_BREAK = rb"(?:\r?\n|\\r\\n|\\n)"
_B64_RUN = rb"[A-Za-z0-9+/_\-]"
_WRAPPED = re.compile(
    rb"(?<!" + _B64_RUN + rb")" + _B64_RUN + rb"{16,}+(?:" + _LINE_BREAK + _B64_RUN
    + rb"{16,}+)*+={0,6}+(?:" + _LINE_BREAK + _B64_RUN + rb"*+={0,6}+(?=" + _LINE_BREAK
    + rb"|\Z|[\"\s]))?")
"""Base64 or base32 wrapped over lines (`base64` and `base32` wrap at 76 columns, PEM at
64; base32 pads with up to six `=`), with real line
breaks or, inside a JSON string (a transcript's tool output), escaped ones."""
_BREAKS = re.compile(_LINE_BREAK)
_B64_BYTES = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/_-")


def _before_wrapped_block(buffer: bytes, cut: int) -> int:
    """`cut` moved back to the start of a base64 block wrapped over lines that ends just
    before it, so the block is scrubbed whole in the next piece (at most 256 lines back).
    Only real line breaks matter: a piece is cut after a newline, space, quote or comma,
    none of which is inside a block whose breaks are escaped in a JSON string."""
    pos = cut
    for _ in range(256):
        if pos < 2 or buffer[pos - 1:pos] != b"\n":
            break
        end = pos - 2 if buffer[pos - 2:pos - 1] == b"\r" else pos - 1
        i = end
        while i > 0 and buffer[i - 1] in _B64_BYTES:
            i -= 1
        if end - i < 16:
            break
        pos = i
    if pos == 0:  # the whole buffer is the block so far: wait for its end (up to 1 MiB)
        return 0 if len(buffer) <= _MAX_CARRY else cut
    return pos


def _before_soft_break(buffer: bytes, cut: int) -> int:
    """`cut` moved back to the start of the line a quoted-printable soft line break ends just
    before it (and of the lines before joined to it the same way, at most 256), so the text
    a soft break splits is scrubbed whole in the next piece."""
    pos = cut
    for _ in range(256):
        before = buffer[max(0, pos - 3):pos]
        if not (before.endswith(b"=\n") or before == b"=\r\n"):
            break
        pos = buffer.rfind(b"\n", 0, pos - 2) + 1
    if pos == 0 and cut:  # the whole buffer is such lines so far: wait for their end
        return 0 if len(buffer) <= _MAX_CARRY else cut
    return pos


_HEX_WINDOW = 1 << 16


def _before_spaced_hex(buffer: bytes, cut: int) -> int:
    """`cut` moved back to the start of a run of hex with separators (a dump) that reaches
    it, so the run is scrubbed whole in the next piece (looked for up to 64 KiB back, and
    only when the bytes just before `cut` look like one)."""
    if not _RUN_TAIL.search(buffer, max(0, cut - 256), cut):
        return cut
    last = None
    for found in _RUN_HEAD.finditer(buffer, max(0, cut - _HEX_WINDOW), cut):
        last = found
    if last is None or last.end() < cut - 1:
        return cut
    if last.start() == 0:  # the whole buffer is the run so far: wait for its end
        return 0 if len(buffer) <= _MAX_CARRY else cut
    return last.start()


_NAMES3 = b"nul soh stx etx eot enq ack bel dle dc1 dc2 dc3 dc4 nak syn etb can sub esc del".split()
_NAMES2 = b"bs ht nl vt ff cr so si em fs gs rs us sp".split()
_NAMED = rb" (?:" + b"|".join(_NAMES3) + rb")| {2}(?:" + b"|".join(_NAMES2) + rb")"
"""`od -a`'s names, a byte in four columns as the other cells (` nul`, `  nl`, `  sp`)."""
_NAMED_BYTE = {name: i for i, name in enumerate(
    b"nul soh stx etx eot enq ack bel bs ht nl vt ff cr so si dle dc1 dc2 dc3 dc4 nak syn etb "
    b"can em sub esc fs gs rs us sp".split())} | {b"del": 127}
_CELL = (rb"(?: {3}(?:[^\s\\]|\\\")| {2}\\\\?[0abfnrtv]| {2}(?:\\\\){1,2}(?![0abfnrtv])| [0-7]{3}"
         rb"|" + _NAMED + rb"| {4})")
"""One byte of a character dump, four columns wide (`od -c`, `hexdump -c`, `od -b`,
`hexdump -b`): a character (`   p`; in a transcript's JSON a quote is `   \\"`), an escape
(`  \\n`, in JSON `  \\\\n`; a backslash `  \\\\`), three octal digits (` 303`), or a space
(four spaces)."""
_CELL_OFFSET = rb"(?:[0-9A-Fa-f]{6,8})?"
_CHAR_DUMP = re.compile(
    rb"(?:(?<![0-9A-Za-z])|(?<=\\n))" + _CELL_OFFSET + rb"(?:" + _CELL + rb"){4,16}+(?:"
    + _LINE_BREAK + _CELL_OFFSET + rb"(?:" + _CELL + rb"){1,16}+)*+")
"""A character dump over lines (real or, in a transcript's JSON, escaped), offsets included:
at least 4 bytes on its first line."""
_CHAR_SEED = re.compile(rb"   [^\s\\](?:   [^\s\\]| {2}\\\\?[0abfnrtv]| [0-7]{3}){3}")
"""Four bytes of an `od -c` line that are not spaces (3 spaces, as the regex's literal
prefix, make it fast: 5 ms in a 10 MB transcript)."""
_OCTAL_SEED = b"shhhshhhshhhshhhshhh"
"""Five bytes of `od -b` in `_HEX_CLASSES` (a space, three digits)."""
_CHAR_REACH = 256
"""How far before its seed a character dump may start (the previous line, JSON-escaped)."""
_CELL_PART = re.compile(rb" {3}(?P<c>[^\s\\]|\\\")| {2}\\\\?(?P<e>[0abfnrtv])| {2}(?P<b>\\)"
                        rb"(?:\\){0,3}| (?P<o>[0-7]{3})| {1,2}(?P<n>" + b"|".join(_NAMES3 + _NAMES2)
                        + rb")(?![a-z0-9])|(?P<s> {4})")
_ESCAPED_BYTE = {b"0": 0, b"a": 7, b"b": 8, b"f": 12, b"n": 10, b"r": 13, b"t": 9, b"v": 11}
_CELL_LINE_HEAD = re.compile(rb"\A[0-9A-Fa-f]{6,8}")
_CELL_PARTIAL = rb"(?:" + _LINE_BREAK + rb"[0-9A-Fa-f]{0,8})?(?: {1,3})?"
_CHAR_TAIL = re.compile(
    rb"(?:[0-9A-Fa-f]{6,8}|" + _CELL + rb")(?:" + _CELL + rb")*+" + _CELL_PARTIAL + rb"\Z")
_CHAR_HEAD = re.compile(
    rb"(?:(?<![0-9A-Za-z])|(?<=\\n))(?:[0-9A-Fa-f]{6,8}(?:" + _CELL + rb"){0,16}+|(?:" + _CELL
    + rb"){1,16}+)(?:" + _LINE_BREAK + _CELL_OFFSET + rb"(?:" + _CELL + rb"){1,16}+)*+"
    + _CELL_PARTIAL)
"""The start of a character dump, however short so far, with a line's offset or a cell's
first spaces: when one reaches a stream piece's end, the piece ends before it."""


def _uncell(run: bytes) -> bytes:
    """The bytes a `_CHAR_DUMP` run spells, offsets left out."""
    out = bytearray()
    for line in _BREAKS.split(run):
        if (offset := _CELL_LINE_HEAD.match(line)) is not None:
            line = line[offset.end():]
        for cell in _CELL_PART.finditer(line):
            if (char := cell.group("c")) is not None:
                out += char[-1:]
            elif (escape := cell.group("e")) is not None:
                out.append(_ESCAPED_BYTE[escape])
            elif cell.group("b") is not None:
                out += b"\\"
            elif (octal := cell.group("o")) is not None:
                out.append(int(octal, 8) & 0xFF)
            elif (name := cell.group("n")) is not None:
                out.append(_NAMED_BYTE[name])
            else:
                out += b" "
    return bytes(out)


def _before_char_dump(buffer: bytes, cut: int) -> int:
    """`cut` moved back to the start of a character dump that reaches it (looked for up to
    64 KiB back), so the dump is scrubbed whole in the next piece."""
    if not _CHAR_TAIL.search(buffer, max(0, cut - 64), cut):
        return cut
    last = None
    for found in _CHAR_HEAD.finditer(buffer, max(0, cut - _HEX_WINDOW), cut):
        last = found
    if last is None or last.end() < cut - 1:
        return cut
    if last.start() == 0:
        return 0 if len(buffer) <= _MAX_CARRY else cut
    return last.start()


_LINE_END = rb"(?=[\r\n\\\"]|\Z)"
_NUM_LINE = rb"(?:[0-9]{6,8})?(?:[ \t]+-?[0-9]{1,20}(?![0-9A-Za-z])){%s}[ \t]*" + _LINE_END
"""A line of a dump of decimal or octal numbers (`od -td1`, `-to2`, ...): an offset (`od`'s
7 digits) at its very start, then numbers, each after spaces; nothing else."""
_NARROW_LINE = (rb"[ \t]*(?:[0-9A-Fa-f]{6,8}:?[ \t]+)?[A-Za-z0-9+/_=\-]{1,15}(?:[ \t]{2,}"
                rb"(?:[^\s\\]|\\[\\\"/]|\\(?=\r?\n|\Z)))?[ \t]*" + _LINE_END)
"""A line of fewer than 16 characters of base64, base32 or hex (`base64 -w 8`, `basenc
--base64url -w 10`, `xxd -p -c 1`), or a dump of one byte a line (`xxd -c 1`, `od -tx1 -w1`,
`od -An -tx1 -w1`), with its offset and text column (a backslash in it is one character of
text, or two escaped in a transcript's JSON)."""
_DUMP_SEEDS = tuple(re.compile(
    brk + rb"(?:(?P<numbers>(?:[0-9]{6,8})?[ \t]++-?[0-9]{1,20}[ \t]+-?[0-9])|" + short + brk
    + short + brk + rb")") for brk, short in ((rb"\n", rb"[^\n]{1,16}"),
                                             (rb"\\n", rb"[^\\\n]{1,16}")))
"""Where a dump of numbers may start (a line of two numbers or more; the group `numbers`),
or a block of short lines (two lines of at most 16 characters), after a real line break and
after a JSON escape: one regex for each, with a literal first, so a search skips to the next
line break and tries each line once (a seed looked for at every space, or after every quote
of a transcript's JSON, halved the scrubber's speed). A dump's first line may follow a
quote (a tool's output that starts with it): the run is then read back to it."""
_STAR = rb"\*" + _LINE_END
"""The line `od` and `hexdump` print for lines that repeat the one before (without `-v`)."""
_NUM_RUN = re.compile(_NUM_LINE % b"1," + rb"(?:" + _LINE_BREAK + rb"(?:" + _NUM_LINE % b"1,"
                      + rb"|" + _STAR + rb"))*")
_NARROW_RUN = re.compile(_NARROW_LINE + rb"(?:" + _LINE_BREAK + rb"(?:" + _NARROW_LINE + rb"|"
                         + _STAR + rb"))*")
_NUM_LINE_FULL = re.compile(rb"(?:" + _NUM_LINE % b"1," + rb"|" + _STAR + rb")\r?")
_NARROW_LINE_FULL = re.compile(rb"(?:" + _NARROW_LINE + rb"|" + _STAR + rb")\r?")
_NARROW_LINE_PART = re.compile(rb"[ \t]*(?:(?P<offset>[0-9A-Fa-f]{6,8}):?[ \t]+)?"
                               rb"(?P<cell>[A-Za-z0-9+/_=\-]{1,15})")
_LINE_DUMP = re.compile(rb"(?:" + _NUM_LINE % b"1," + rb"|" + _NARROW_LINE + rb"|" + _STAR
                        + rb")\r?")
"""A whole line of either kind, for the stream's cut (`_before_line_dump`)."""
_LINE_DUMP_PART = re.compile(rb"[0-9]{0,8}(?:[ \t]+-?[0-9]{0,20})*[ \t]*|[ \t]*(?:[0-9A-Fa-f]"
                             rb"{6,8}:?[ \t]+)?[A-Za-z0-9+/_=\-]{0,15}(?:[ \t]{2,}\S?)?")
"""What a stream piece that ends inside such a line has of it."""
_DIGITS = re.compile(rb"-?[0-9]+")


def _numbers_as_bytes(written: list[bytes]) -> list[bytes]:
    """Numbers read as decimal and, when every one is written in octal digits, as octal;
    each as a byte (`od -td1`, `-tu1`) when all fit in one, else as little-endian words of
    the narrowest of 2, 4 or 8 bytes that holds them all, signed or not (`od -to2`, `-td2`,
    `-tu2`, `-td4`, `-to4`, `-td8`: the machine's order)."""
    if not written:
        return []
    bases = [10] + ([8] if not b"".join(written).translate(None, b"-01234567") else [])
    found: list[bytes] = []
    for base in bases:
        numbers = [int(text, base) for text in written]
        low, high = min(numbers), max(numbers)
        for width in (1, 2, 4, 8):
            if high < 1 << (8 * width) and low >= -(1 << (8 * width - 1)):
                mask = (1 << (8 * width)) - 1
                found.append(bytes(n & mask for n in numbers) if width == 1 else b"".join(
                    (n & mask).to_bytes(width, "little") for n in numbers))
                break
    return found


_Line = tuple[bytes | None, list[bytes]] | None
"""A dump's line: its offset (if printed) and its fields; None for a `*` line."""


def _unstar(lines: list[_Line]) -> list[bytes]:
    """The fields of a dump's lines, each `*` line replaced by the line before it repeated as
    many times as the offsets around it say (octal as `od` prints them, else hex), once where
    they are not printed (`od -An`, a `hexdump -e` format)."""
    offsets = [line[0] for line in lines if line is not None and line[0] is not None]
    base = 8 if not b"".join(offsets).translate(None, b"01234567") else 16
    step = None  # the bytes a line holds, from two lines in a row
    for before, after in itertools.pairwise(lines):
        if before is not None and after is not None and before[0] is not None \
                and after[0] is not None:
            step = int(after[0], base) - int(before[0], base)
            break
    fields: list[bytes] = []
    for i, line in enumerate(lines):
        if line is not None:
            fields += line[1]
            continue
        before, after = lines[i - 1] if i else None, lines[i + 1] if i + 1 < len(lines) else None
        count = 1
        if before is not None and after is not None and before[0] is not None \
                and after[0] is not None and step:
            count = (int(after[0], base) - int(before[0], base)) // step - 1
        if before is not None:
            fields += before[1] * max(1, min(count, 4096))
    return fields


def _unnumber(run: bytes) -> list[bytes]:
    """The bytes a `_NUM_RUN` spells, each line's offset (digits at its very start: `od -An`
    starts its lines with a space) left out."""
    lines: list[_Line] = []
    for line in _BREAKS.split(run):
        if line.strip() == b"*":
            lines.append(None)
            continue
        fields = _DIGITS.findall(line)
        lines.append((fields[0], fields[1:]) if line[:1].isdigit() else (None, fields))
    return _numbers_as_bytes(_unstar(lines))


def _narrow_cells(run: bytes) -> list[bytes]:
    """The cells of a `_NARROW_RUN`'s lines (each line's offset and text column left out)."""
    lines: list[_Line] = []
    for line in _BREAKS.split(run):
        if line.strip() == b"*":
            lines.append(None)
        elif (cell := _NARROW_LINE_PART.match(line)) is not None:
            lines.append((cell.group("offset"), [cell.group("cell")]))
    last = lines[-1] if lines else None
    if last is not None and last[0] is None and 6 <= len(last[1][0]) <= 8 \
            and any(line is not None and line[0] is not None for line in lines):
        lines.pop()  # the offset `od` ends its dump with, alone on its line
    return _unstar(lines)


def _line_start(buffer: bytes, pos: int, lo: int) -> int:
    """Where the line holding `buffer[pos - 1]` starts: after a line break (real or escaped)
    or a quote, or at `lo`."""
    real = buffer.rfind(b"\n", lo, pos)
    escaped = buffer.rfind(b"\\n", lo, pos)
    quote = buffer.rfind(b'"', lo, pos)
    return max(lo, real + 1 if real >= 0 else lo, escaped + 2 if escaped >= 0 else lo,
               quote + 1 if quote >= 0 else lo)


_LINE_DELIMITER = re.compile(rb"\\n|\n|\"")


def _lines_back(buffer: bytes, pos: int, lo: int, line: re.Pattern[bytes]) -> int:
    """The start of the first of the lines just before `pos` (a line's start) that are each
    a whole `line`, back to `lo` and at most 4096 of them (`pos` where there are none). The
    line breaks and quotes between are found in one pass (a search back from each line for
    each kind of break read the window again for every line: 1.3 s a MiB of short lines)."""
    near = max(lo, pos - _LINE_REACH)  # first the last few KiB: most text has no dump there
    found = _walk_lines_back(buffer, pos, near, line)
    return found if found > near or near == lo else _walk_lines_back(buffer, pos, lo, line)


_LINE_REACH = 4096
"""How far back a dump's line is looked for before a whole window is read."""


def _walk_lines_back(buffer: bytes, pos: int, lo: int, line: re.Pattern[bytes]) -> int:
    breaks = [(found.start(), found.end())
              for found in _LINE_DELIMITER.finditer(buffer, lo, pos)]
    at = len(breaks) - 1
    for _ in range(4096):
        if at < 0 or breaks[at][1] != pos or buffer[breaks[at][0]] == 34:
            break  # no break just before it, or a quote: the line opens a JSON string
        end = breaks[at][0]
        if buffer[end - 2:end] == b"\\r":
            end -= 2
        before = breaks[at - 1][1] if at else lo
        if not line.fullmatch(buffer, before, end):
            break
        pos, at = before, at - 1
    return pos


def _before_line_dump(buffer: bytes, cut: int) -> int:
    """`cut` moved back to the first line of a dump of numbers or of short lines (`od -td1`,
    `base64 -w 8`, `xxd -c 1`) that reaches it, so the dump is scrubbed whole in the next
    piece (looked for up to 64 KiB and 4096 lines back)."""
    lo = max(0, cut - _HEX_WINDOW)
    start = _line_start(buffer, cut, max(lo, cut - _LINE_REACH))
    if not _LINE_DUMP_PART.fullmatch(buffer, start, cut):
        return cut  # (a line longer than `_LINE_REACH` is none of a dump's)
    pos = min(_lines_back(buffer, start, lo, kind) for kind in (_NUM_LINE_FULL, _NARROW_LINE_FULL))
    if pos == start == cut:
        return cut
    if pos == 0:  # the whole buffer is the dump so far: wait for its end
        return 0 if len(buffer) <= _MAX_CARRY else cut
    return pos


def _wrapped_variants(data: bytes) -> set[bytes]:
    """What a block wrapped over lines may hold once joined: base64 and base32 at each offset
    (`base32` wraps at 76 columns too), and hex (`xxd -p` wraps at 60 columns)."""
    found = _b64_cores(data) | _b32_cores(data) | {data.hex().encode(), data.hex().upper().encode()}
    return {v for v in found if len(v) >= MIN_VALUE_LEN}


def _plain_variants(data: bytes) -> set[bytes]:
    """The value as is and its lines: what an escaped run must hold once decoded."""
    found = {data} | {line.strip() for line in data.splitlines()}
    return {v for v in found if len(v) >= MIN_VALUE_LEN}


_ESC = rb"\\\\?u00[0-9A-Fa-f]{2}|\\\\?x[0-9A-Fa-f]{2}|%[0-9A-Fa-f]{2}"
_RUN_BYTE = rb"[^\s\"'\\%,<>]"
_ESCAPED = re.compile(rb"(?<!" + _RUN_BYTE + rb")(?=[^\s\"',<>]{10})" + _RUN_BYTE + rb"*+(?:"
                      + _ESC + rb")(?:" + _RUN_BYTE + rb"|" + _ESC + rb")*+")
r"""A run of characters holding at least one escape (`\u0073`, also with its backslash itself
escaped inside a JSON string, `\x73`, `%73` in either case): what `\u`-escaped JSON, a
lower-case or partly URL-encoded URL or a `\x` string literal shows of a value whose plain
and fully escaped forms are not there. Only `\u00XX` counts as an escape here: keys are
ASCII, and the JSON of other scripts (`\u4e2d`) is then no run to decode. A run shorter than
10 bytes decodes to less than a secret's 8 and is not looked at."""
_ESCAPE_PREFILTER = re.compile(rb"\\u00[0-9A-Fa-f]{2}|\\x[0-9A-Fa-f]{2}|%[0-9A-Fa-f]{2}")
_ONE_ESC = re.compile(_ESC)
_ANY_PATTERN = re.compile(b"|".join(
    re.escape(x) for p in PATTERNS if isinstance(p.prefilter, tuple) for x in p.prefilter)
    + b"|" + b"|".join(p.prefilter.pattern for p in PATTERNS
                       if isinstance(p.prefilter, re.Pattern)))
"""Every pattern's prefilter in one search: a decoded run none of them passes holds no token."""

_HEX_BYTE = (rb"(?:0[xX])?+[0-9A-Fa-f]{2}(?:[0-9A-Fa-f]{2}(?:[0-9A-Fa-f]{4}(?:[0-9A-Fa-f]{8})?+"
             rb"(?=[ \t\r\n\\]|\Z))?+)?+(?![0-9A-Za-z])")
"""A byte (`de`, `0xde`) or a word of two, four or eight (`dead` as `xxd` groups them,
`od -tx2`, `od -tx4`, `od -tx8`, `hexdump`, `xxd -e`); the words of four or eight bytes
only where a space or a line's end follows, as in a dump (a UUID's first part is none)."""
_DUMP_OFFSET = rb"[0-9A-Fa-f]{6,8}:?[ \t]++"
"""The offset opening a dump's line (`od -tx1`, `hexdump -C`, `xxd`)."""
_XXD_TEXT = rb"[ \t]{2,}+(?!(?:[0-9A-Fa-f]{2}[ \t]*+)++(?:[\r\n\\|>]|\Z))[^\r\n\\]{1,256}"
"""`xxd`'s text column, after two spaces (as wide as `xxd -c 256`); never more groups of hex
(`hexdump -x` spaces its words by four), nor the second half of a `hexdump -C` line before its
own text column."""
_DUMP_TEXT = (rb"(?:[ \t]++\|[^\r\n]{1,512}?\||[ \t]++>[^\r\n]{1,512}?<|" + _XXD_TEXT
              + rb")(?=" + _LINE_BREAK + rb"|\Z)")
"""The text column closing a dump's line (`|...|` in `hexdump -C`, `>...<` in `od -tx1z`,
after two spaces in `xxd`; as wide as `xxd -c 256`, or a `hexdump -e` format of 256 bytes a
line, JSON-escaped): the bytes again as characters, redacted with them."""
_HEX_SEP = (rb"(?:(?:" + _DUMP_TEXT + rb"|[ \t]*+,)?" + _LINE_BREAK + rb"[ \t]*+(?:" + _DUMP_OFFSET
            + rb")?|[ \t]*+[:\-.,][ \t]*+|[ \t]++)")
"""Between two groups: a line's end (its text column first, so a column that starts like
hex, `03-Xy…`, is not read as bytes; or the comma of `xxd -i`), or a separator."""
_SPACED_HEX = re.compile(
    rb"(?:(?<![0-9A-Za-z])|(?<=\\n))(?:" + _DUMP_OFFSET + rb")?" + _HEX_BYTE + rb"(?:" + _HEX_SEP
    + _HEX_BYTE + rb"){3,}+(?:" + _DUMP_TEXT + rb")?")
"""Hex with separators: `de:ad:be:ef`, `de ad be ef`, `de-ad`, `0xde, 0xad`, and the dumps
of `od -tx1` (with or without offsets), `xxd`, `xxd -g1` and `hexdump -C`, also over lines
(real or, in a transcript's JSON, escaped, also just before it). At least 4 groups: 8
bytes once decoded."""
_RUN_END = (rb"(?:" + _DUMP_TEXT + rb")?(?:[ \t,:.\-]|" + _LINE_BREAK + rb")*+(?:"
            + _DUMP_OFFSET + rb")?")
_RUN_HEAD = re.compile(
    rb"(?:(?<![0-9A-Za-z])|(?<=\\n))(?:" + _DUMP_OFFSET + rb")?" + _HEX_BYTE + rb"(?:"
    + _HEX_SEP + _HEX_BYTE + rb")*+" + _RUN_END)
"""The start of a `_SPACED_HEX` run, whatever its length so far, with what separates it from
its next group: when one reaches a stream piece's end, the piece ends before it."""
_RUN_TAIL = re.compile(_HEX_BYTE + _HEX_SEP + _HEX_BYTE + _RUN_END + rb"\Z")
_DUMP_LINE_HEAD = re.compile(rb"\A(?:[0-9A-Fa-f]{6,8}:[ \t]++|[0-9A-Fa-f]{6,7}[ \t]++"
                             rb"|[0-9A-Fa-f]{7}0[ \t]++|[0-9A-Fa-f]{8}[ \t]{2,}+)?[ \t]*+")
"""A dump line's offset, at the line's very start (`od -An -tx4` starts its lines with a
space, then a word of eight digits): six or seven digits (`od`, `hexdump`; no group of hex
bytes is that long), any digits before a colon (`xxd`, any `-c`), or eight then two spaces
(`hexdump -C`, a `hexdump -e` format) or a multiple of 16 then one: so lines of any width
(`xxd -c 8`, `od -w4`) lose their offsets, not only lines of 16 bytes."""
_DUMP_LINE_TEXT = re.compile(
    rb"(?:[ \t]++\|[^\r\n]{1,512}?\||[ \t]++>[^\r\n]{1,512}?<|" + _XXD_TEXT + rb")\Z")
_DUMP_LINE_HEX = re.compile(rb"\A" + _HEX_BYTE + rb"(?:(?:[ \t]*+[:\-.,][ \t]*+|[ \t]++)"
                            + _HEX_BYTE + rb")*+")
_HEX_GROUP = re.compile(rb"(?:0[xX])?([0-9A-Fa-f]+)")


_HEX_CLASSES = bytes((104 if chr(b) in "0123456789abcdefABCDEF" else 115 if chr(b) in " \t:.,-"
                      else 110 if b == 10 else 114 if b == 13 else 98 if b == 92 else 120)
                     for b in range(256))
"""Each byte as its class for the seeds below: `h` a hex digit, `s` a separator, `n` and `r`
a line feed and a carriage return, `b` a backslash (in JSON, a line break is `bx`), `x`
other."""
_HEX_SEED = re.compile(rb"hhs(?:s?(?:hx)?hh(?:s{1,2}(?:hx)?hh){6}"
                       rb"|s{0,3}(?:hh){2}(?:s{1,4}(?:hh){2}){2}|(?:hh){4}s(?:hh){4}|(?:hh){8})")
"""In classes: a run's first group's last digits and what follows on its line, 8 bytes' worth
(7 more bytes, or 3 more of `xxd`'s two-byte groups, which `hexdump -x` spaces by four, 2
more words of four bytes, one of eight). Every `_SPACED_HEX` run that can hold a
secret (8 bytes or more) has one on its first line (a dump's lines hold 16 bytes); a date or a
version number has not. A dump of fewer bytes a line (`xxd -c 4`, `od -w4`) has one where a
line starts with an offset and two bytes, or (`od -An`) where a line of 2 to 8 spaced bytes
is followed by another (`_LINE_SEEDS`). It starts with two hex digits, not the separator:
a search that started at every space tried each of a JSON report's indentation (25 MB/s,
18 ms of a 100k records' report); the run's regex, which reads plain text at a tenth of the
scrubber's speed, then runs only around a seed."""
_NARROW = rb"(?:h{6,8}s{1,3}hh(?:s{0,2}hh)+|s{1,3}hh(?:s{1,3}hh){1,7}r?(?:n|bx)(?:bx)?s{0,3}hh)"
_LINE_SEEDS = (re.compile(rb"n" + _NARROW), re.compile(rb"bx" + _NARROW))
"""The seeds of dumps of fewer than 8 bytes a line, after a real line break and after a JSON
escape (each its own regex, with a literal first: one alternation of all seeds, with none,
halved the scrubber's speed on a transcript)."""
_SEED_REACH = 32
"""How far before its seed a run may start (a dump's offset, a `0x`)."""
_SEED_AFTER = 96
"""How far past a seed of long words a run's first four groups may reach (`od -tx8`: two
words of 16 digits on a line, the next line's offset between); other seeds look as far as
before them (a wider window for all doubled the time of a transcript's UUIDs)."""


def _next_seed(classes: bytes, pos: int,
               ahead: list[re.Match[bytes] | bool]) -> re.Match[bytes] | None:
    """The first seed at or after `pos` of `_HEX_SEED` and `_LINE_SEEDS`; `ahead` keeps
    each one's last find (True: none looked for yet; False: none is left), searched again
    only once `pos` has passed it."""
    best = None
    for i, regex in enumerate((_HEX_SEED, *_LINE_SEEDS)):
        found = ahead[i]
        if found is True or (not isinstance(found, bool) and found.start() < pos):
            found = ahead[i] = regex.search(classes, pos) or False
        if not isinstance(found, bool) and (best is None or found.start() < best.start()):
            best = found
    return best


def _unspace_hex(run: bytes) -> list[bytes]:
    """The bytes a run of `_SPACED_HEX` spells (per line, its offset and text column left
    out), read as written; when it holds words of more than one byte, also with each word's
    bytes in reverse (`od -tx2`, `od -tx4`, `hexdump` and `xxd -e` print little-endian words:
    `6c70` is `pl`); when every group is eight binary digits, also as bits (`xxd -b`); when
    a line's last two spaces are followed by what reads as hex, also without it (the text
    column of a narrow `xxd -c 2` line, `ed` or `3c`, is read as a group at first)."""
    groups: list[bytes] = []
    kept: list[bytes] = []  # without what follows a line's last two spaces
    for line in _BREAKS.split(run):
        line = line[_DUMP_LINE_HEAD.match(line).end():]  # type: ignore[union-attr]
        if (text := _DUMP_LINE_TEXT.search(line)) is not None:
            line = line[:text.start()]
        hex_part = _DUMP_LINE_HEX.match(line)
        if hex_part is None:
            continue
        written = hex_part.group(0)
        line_groups = _HEX_GROUP.findall(written)
        groups += line_groups
        gap = written.rfind(b"  ")
        kept += _HEX_GROUP.findall(written, 0, gap) if gap > 0 else line_groups
    joined = b"".join(groups)
    found = [bytes.fromhex(joined.decode())]
    if len(joined) != 2 * len(groups):  # some group is a word of more than one byte
        found.append(b"".join(bytes.fromhex(g.decode())[::-1] for g in groups))
        if all(len(g) == 8 for g in groups) and not joined.translate(None, b"01"):
            found.append(bytes(int(g, 2) for g in groups))
    if len(kept) != len(groups):
        found.append(bytes.fromhex(b"".join(kept).decode()))
    return found


_SOFT_BREAK = re.compile(rb"=(?:\r?\n|\\r\\n|\\n)")
"""A quoted-printable soft line break (`=` at a line's end: `quopri` and mail wrap at 76
columns), real or, in a transcript's JSON, escaped."""
_SOFT_REACH = 4096
"""How far around a soft line break its two lines are read (a quoted-printable line is at
most 76 characters; a secret in one is shorter than this)."""


_WORD = rb"=\?[A-Za-z0-9!#$%&'*+\-^_`{|}~.]{1,40}\?[BbQq]\?[^?\s\"\\]{0,998}\?="
"""An RFC 2047 encoded word: `=?charset?B?base64?=` or `=?charset?Q?text?=` (a language
after `*` in the charset allowed)."""
_WORDS = re.compile(_WORD + rb"(?:(?:[ \t]|" + _LINE_BREAK + rb")*" + _WORD + rb")*")
"""Encoded words in a row, as a header folds them (`email.header` splits a long value into
words of at most 75 characters, on lines of their own): the space between two is not text."""
_WORD_PART = re.compile(rb"=\?[^?]*\?([BbQq])\?([^?]*)\?=")
_Q_ESCAPE = re.compile(rb"=([0-9A-Fa-f]{2})")
_WORDS_WINDOW = 8192


def _unword(run: bytes) -> bytes:
    """The bytes a run of encoded words spells, joined (the charset is not applied: a value
    is found in its own bytes)."""
    out = bytearray()
    for word in _WORD_PART.finditer(run):
        kind, text = word.group(1).upper(), word.group(2)
        if kind == b"B":
            with contextlib.suppress(ValueError):
                out += base64.b64decode(text + b"=" * (-len(text) % 4))
        else:
            out += _Q_ESCAPE.sub(lambda m: bytes([int(m.group(1), 16)]), text.replace(b"_", b" "))
    return bytes(out)


_WORD_GAP = re.compile(rb"(?:[ \t]|" + _LINE_BREAK + rb")*")


def _before_encoded_words(buffer: bytes, cut: int) -> int:
    """`cut` moved back to the start of a run of encoded words that reaches it (ends just
    before it, but for spaces and line breaks, after which it may go on; or holds it, in a
    word not yet closed), so the run is scrubbed whole in the next piece (looked for up to
    8 KiB back)."""
    opened = buffer.rfind(b"=?", max(0, cut - 1000), cut)
    if opened < 0:
        return cut
    last = None
    for found in _WORDS.finditer(buffer, max(0, cut - _WORDS_WINDOW), cut):
        last = found
    if last is not None and _WORD_GAP.fullmatch(buffer, last.end(), cut):
        return last.start()  # the run may go on in the next piece
    if opened >= (last.end() if last is not None else 0) \
            and buffer.find(b"?=", opened + 2, cut) < 0:  # a word not yet closed
        if last is not None and _WORD_GAP.fullmatch(buffer, last.end(), opened):
            return last.start()
        return opened
    return cut


def _soft_broken(data: bytes) -> Iterator[tuple[int, int, list[tuple[int, int]]]]:
    """Each stretch of text joined by soft line breaks: (its start, its end, the breaks in
    it), from the start of the line holding the first break to the end of the line after the
    last (at most `_SOFT_REACH` either side of a break)."""
    breaks = list(_SOFT_BREAK.finditer(data))
    at = 0
    while at < len(breaks):
        first = breaks[at]
        group = [(first.start(), first.end())]
        at += 1
        while at < len(breaks) and _BREAKS.search(
                data, group[-1][1], breaks[at].start()) is None \
                and breaks[at].start() - group[-1][1] <= _SOFT_REACH:
            group.append((breaks[at].start(), breaks[at].end()))
            at += 1
        lo = max(0, group[0][0] - _SOFT_REACH)
        start = max((m.end() for m in _BREAKS.finditer(data, lo, group[0][0])), default=lo)
        hi = min(len(data), group[-1][1] + _SOFT_REACH)
        after = _BREAKS.search(data, group[-1][1], hi)
        yield start, after.start() if after is not None else hi, group


def _join_soft(data: bytes, start: int, end: int,
               breaks: list[tuple[int, int]]) -> tuple[bytes, list[int], list[int]]:
    """`data[start:end]` without its soft line breaks; and for each of its parts, where it
    starts in the joined text and in `data`."""
    parts, offsets, origins = [], [], []
    cursor, total = start, 0
    for brk_start, brk_end in [*breaks, (end, end)]:
        parts.append(data[cursor:brk_start])
        offsets.append(total)
        origins.append(cursor)
        total += brk_start - cursor
        cursor = brk_end
    return b"".join(parts), offsets, origins


def _in_data(offsets: list[int], origins: list[int], pos: int, after: int) -> int:
    """Where `pos` of a `_join_soft` text is in `data`, `after` its part's index plus one."""
    return origins[after - 1] + pos - offsets[after - 1]


def _unescape(run: bytes) -> bytes:
    def one(match: re.Match[bytes]) -> bytes:
        token = match.group(0).lstrip(b"\\")
        code = int(token[1:], 16)
        if token[:1] == b"u":
            return chr(code).encode("utf-8", "surrogatepass")
        return bytes([code])
    return _ONE_ESC.sub(one, run)


def _needles(secrets: Mapping[str, str | bytes],
             variants: Callable[[bytes], Iterable[bytes]]) -> list[tuple[bytes, bytes]]:
    """(needle, replacement) pairs: each value in each of its `variants`, longest first so a
    value is never half-replaced by one of its own parts."""
    pairs: dict[bytes, bytes] = {}
    for name, value in secrets.items():
        data = value.encode() if isinstance(value, str) else value
        rule = name if ":" in name else f"env:{name}"
        for variant in variants(data):
            pairs.setdefault(variant, redaction(rule))
    return sorted(pairs.items(), key=lambda kv: -len(kv[0]))


@dataclass
class Scrubber:
    """Redacts secret values and token patterns; `counts` accumulates over every call."""

    secrets: Mapping[str, str | bytes] = field(default_factory=dict)
    counts: Counter[str] = field(default_factory=Counter)

    def __post_init__(self) -> None:
        self._literals = _needles(self.secrets, encodings)
        self._wrapped = _needles(self.secrets, _wrapped_variants)  # blocks over lines
        self._plain = _needles(self.secrets, _plain_variants)  # runs holding escapes

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None,
                 extra_vars: Iterable[str] = ()) -> Scrubber:
        """The environment's secrets and every registered one (`SECRETS`)."""
        found: dict[str, str | bytes] = dict(env_secrets(env, extra_vars))
        known = set(found.values())
        for name, value in SECRETS.values().items():
            if value.decode("utf-8", "surrogateescape") not in known:
                found[name if ":" in name else f"secret:{name}"] = value
        return cls(found)

    def scrub(self, data: bytes) -> bytes:
        """One complete buffer (the whole file, or a chunk cut at a safe place)."""
        if b"=?" in data and b"?=" in data:  # first: a `B` word's base64 is a needle too
            data = _WORDS.sub(self._unword_run, data)
        for needle, replacement in self._literals:
            if needle in data:
                self.counts[replacement[10:-1].decode()] += data.count(needle)
                data = data.replace(needle, replacement)
        if _SOFT_BREAK.search(data):
            data = self._unsoft(data)
        if self._wrapped and _BREAKS.search(data):
            data = _WRAPPED.sub(self._unwrap, data)
        classes = data.translate(_HEX_CLASSES)
        spaced = self._unspace_runs(data, classes)
        if spaced is not data:
            data, classes = spaced, spaced.translate(_HEX_CLASSES)
        data = self._uncell_runs(data, classes)
        data = self._line_runs(data)
        seen: dict[object, bool] = {}
        for pattern in PATTERNS:
            if pattern.prefilter not in seen:
                seen[pattern.prefilter] = _passes(pattern.prefilter, data)
            if seen[pattern.prefilter]:
                data, n = pattern.regex.subn(redaction(pattern.name), data)
                if n:
                    self.counts[pattern.name] += n
        if _ESCAPE_PREFILTER.search(data):  # last: only what escapes still hide is left
            data = _ESCAPED.sub(self._unescape_run, data)
        return data

    def _unsoft(self, data: bytes) -> bytes:
        """Quoted-printable wrapped over lines: where a secret's form (as is, quoted-printable,
        JSON-escaped) or a token shape spans soft line breaks, it is redacted with the
        breaks inside it; the text around is kept."""
        pieces: list[bytes] = []
        done = 0
        for start, end, breaks in _soft_broken(data):
            joined, offsets, origins = _join_soft(data, start, end, breaks)
            hits: list[tuple[int, int, bytes]] = []
            for needle, replacement in self._literals:
                at = joined.find(needle)
                while at >= 0:
                    hits.append((at, at + len(needle), replacement))
                    at = joined.find(needle, at + len(needle))
            if _ANY_PATTERN.search(joined):
                for pattern in PATTERNS:
                    hits.extend((m.start(), m.end(), redaction(pattern.name))
                                for m in pattern.regex.finditer(joined))
            for lo, hi, replacement in sorted(hits, key=lambda h: (h[0], -h[1])):
                first = _in_data(offsets, origins, lo, bisect.bisect_right(offsets, lo))
                last = _in_data(offsets, origins, hi, bisect.bisect_left(offsets, hi))
                if first < done or last - first == hi - lo:  # overlapping; or no break inside
                    continue
                pieces += [data[done:first], replacement]
                done = last
                self.counts[replacement[10:-1].decode()] += 1
        return b"".join([*pieces, data[done:]]) if pieces else data

    def _unword_run(self, match: re.Match[bytes]) -> bytes:
        """RFC 2047 encoded words in a row (`email.header`'s `B` and `Q`, whatever it chose
        to escape): redacted whole when, decoded and joined, they hold a secret value or a
        token shape."""
        rule = self._decoded_rule(_unword(match.group(0)))
        return match.group(0) if rule is None else rule

    def _unwrap(self, match: re.Match[bytes]) -> bytes:
        """A base64 block wrapped over lines: redacted whole when, joined, it holds a
        secret's encoding (a wrapped line break may fall anywhere inside it)."""
        block = match.group(0)
        joined = _BREAKS.sub(b"", block)
        if len(joined) == len(block):  # one line: the literal needles have seen it
            return block
        for needle, replacement in self._wrapped:
            if needle in joined:
                self.counts[replacement[10:-1].decode()] += 1
                return replacement
        return block

    def _decoded_rule(self, decoded: bytes) -> bytes | None:
        """The redaction for what a decoded run holds (a secret value, else a token shape),
        counted; None: it holds neither."""
        if len(decoded) < MIN_VALUE_LEN:
            return None
        rule = next((r for needle, r in self._plain if needle in decoded), None)
        if rule is None:
            name = next((p.name for p in PATTERNS if p.regex.search(decoded)), None) \
                if _ANY_PATTERN.search(decoded) else None
            if name is None:
                return None
            rule = redaction(name)
        self.counts[rule[10:-1].decode()] += 1
        return rule

    def _unspace_runs(self, data: bytes, classes: bytes) -> bytes:
        """Each run of hex with separators, or hex dump, redacted whole when its bytes hold a
        secret value or a token shape; looked for only around `_HEX_SEED`s."""
        pieces: list[bytes] = []
        done = pos = 0
        ahead: list[re.Match[bytes] | bool] = [True] * (1 + len(_LINE_SEEDS))
        while (seed := _next_seed(classes, pos, ahead)) is not None:
            pos = seed.end() - 1
            wide = b"hhhhhhhh" in seed.group(0)  # words of four or eight bytes
            match = _SPACED_HEX.search(data, max(done, seed.start() - _SEED_REACH),
                                       seed.end() + (_SEED_AFTER if wide else _SEED_REACH))
            if match is None:
                continue
            # the whole run, however long; re's possessive groups can fail at a start where
            # the window found a run (`od -tu1`'s `47 114` read as bytes to the window's end,
            # not past it): then the window's run stands
            match = _SPACED_HEX.match(data, match.start()) or match
            indent = match.start()  # with the line's indentation: then no offset opens it
            while indent > done and data[indent - 1] in b" \t":
                indent -= 1
            rule = None
            for decoded in _unspace_hex(data[indent:match.end()]):
                if (rule := self._decoded_rule(decoded)) is not None:
                    break
            if rule is not None:
                pieces += [data[done:match.start()], rule]
                done = match.end()
            pos = max(pos, match.end())
        return b"".join([*pieces, data[done:]]) if pieces else data

    def _uncell_runs(self, data: bytes, classes: bytes) -> bytes:
        """Each character dump (`od -c`, `hexdump -c`, `od -b`, `hexdump -b`) redacted whole
        when its bytes hold a secret value or a token shape; looked for only around seeds."""
        seeds = [m.start() for m in _CHAR_SEED.finditer(data)]
        at = classes.find(_OCTAL_SEED)
        while at >= 0:
            seeds.append(at)
            at = classes.find(_OCTAL_SEED, at + len(_OCTAL_SEED))
        pieces: list[bytes] = []
        done = pos = 0
        for seed in sorted(seeds):
            if seed < pos:
                continue
            found = _CHAR_DUMP.search(data, max(done, seed - _CHAR_REACH), seed + 64)
            if found is None:
                pos = seed + 1
                continue
            match = _CHAR_DUMP.match(data, found.start()) or found  # the whole dump
            rule = self._decoded_rule(_uncell(match.group(0)))
            if rule is not None:
                pieces += [data[done:match.start()], rule]
                done = match.end()
            pos = max(seed + 1, match.end())
        return b"".join([*pieces, data[done:]]) if pieces else data

    def _line_runs(self, data: bytes) -> bytes:
        """Each dump of decimal or octal numbers (`od -td1`, `-tu1`, `-to2`, `-td2`, `-td4`,
        ...) and each block of short lines (base64, base32 or hex wrapped at fewer than 16
        columns; a dump of one byte a line) redacted whole when what it spells holds a secret
        value, a secret's encoding or a token shape; looked for from seeds at lines' starts."""
        runs: list[tuple[int, int, bytes]] = []
        for seed_re in _DUMP_SEEDS:  # one search for both kinds: a line is looked at once
            pos = 0
            ends = [0, 0]  # where each kind's last run ended: never read back into it
            while (seed := seed_re.search(data, pos)) is not None:
                first = pos = seed.start() + (2 if data[seed.start()] == 92 else 1)
                kind = 0 if seed.group("numbers") is not None else 1
                run_re, line = (_NUM_RUN, _NUM_LINE_FULL) if kind == 0 \
                    else (_NARROW_RUN, _NARROW_LINE_FULL)
                if first < ends[kind] or (match := run_re.match(data, first)) is None \
                        or (kind and not _BREAKS.search(match.group(0))):
                    continue
                start = _lines_back(data, first, max(ends[kind], first - _HEX_WINDOW), line)
                pos = ends[kind] = match.end()
                if (rule := self._line_rule(data[start:pos], kind)) is not None:
                    runs.append((start, pos, rule))
        if not runs:
            return data
        pieces: list[bytes] = []
        done = 0
        for first, end, rule in sorted(runs):
            if first >= done:
                pieces += [data[done:first], rule]
                done = end
        return b"".join([*pieces, data[done:]])

    def _line_rule(self, run: bytes, kind: int) -> bytes | None:
        """The redaction for a `_line_runs` run, counted; None: it holds no secret."""
        if kind == 0:
            decoded = _unnumber(run)
        else:
            cells = _narrow_cells(run)
            joined = b"".join(cells)
            for needle, replacement in self._wrapped:
                if needle in joined:
                    self.counts[replacement[10:-1].decode()] += 1
                    return replacement
            decoded = [joined]
            if len(joined) % 2 == 0 and not joined.translate(None, b"0123456789abcdefABCDEF"):
                decoded.append(bytes.fromhex(joined.decode()))
            if joined.isdigit():  # `od -An -tu1 -w1`: one number a line
                decoded += _numbers_as_bytes(cells)
        for candidate in decoded:
            if (rule := self._decoded_rule(candidate)) is not None:
                return rule
        return None

    def _unescape_run(self, match: re.Match[bytes]) -> bytes:
        """A run holding escapes: redacted whole when, decoded, it holds a secret value or a
        token shape (`\\u0073k-ant-…`)."""
        run = match.group(0)
        if len(run) < MIN_VALUE_LEN + 2:  # decoded shorter than any secret (`%XX` is one byte)
            return run
        rule = self._decoded_rule(_unescape(run))
        if rule is None:
            return run
        start = match.start()
        if run[:2] == b"\\\\" and start and match.string[start - 1:start] == b"\\":
            return b"\\" + rule  # the run began inside an escaped backslash: keep its half
        return rule

    def finds(self, data: bytes) -> str | None:
        """The rule of a secret or token in `data` (one complete buffer), else None;
        nothing is counted."""
        probe = copy.copy(self)
        probe.counts = Counter()
        probe.scrub(data)
        return next(iter(probe.counts), None)

    def scrub_text(self, text: str) -> str:
        """For log lines and error messages."""
        return self.scrub(text.encode()).decode(errors="replace")

    def scrub_stream(self, chunks: Iterable[bytes]) -> Iterator[bytes]:
        """Scrub a stream; each piece is cut after a byte no token contains, and an open
        private-key block is carried into the next piece (up to 1 MiB)."""
        carry = b""
        for chunk in chunks:
            buffer = carry + chunk
            cut = _cut_point(buffer)
            carry = buffer[cut:]
            if cut:
                yield self.scrub(buffer[:cut])
        if carry:
            yield self.scrub(carry)


def _passes(prefilter: re.Pattern[bytes] | tuple[bytes, ...], data: bytes) -> bool:
    if isinstance(prefilter, tuple):
        return any(literal in data for literal in prefilter)
    return prefilter.search(data) is not None


def _cut_point(buffer: bytes) -> int:
    """Where to end the piece to scrub now: after the last safe byte, but before an open
    `-----BEGIN` block or an AWS secret assignment that may continue in the next chunk;
    0 means wait for more (unless the carry grew too large). A secret *value* holding a
    space, comma, quote or newline may still be split across chunks (its lines are also
    scrubbed one by one)."""
    cut = max(buffer.rfind(b) for b in _SAFE_CUT) + 1
    if cut <= 0:
        return len(buffer) if len(buffer) > _MAX_CARRY else 0
    begin = buffer.rfind(b"-----BEGIN", 0, cut)
    if begin >= 0:
        end = _END.search(buffer, begin)
        if end is None and len(buffer) - begin <= _MAX_CARRY:
            cut = begin
        elif end is not None and end.end() > cut:
            cut = end.end()  # never split the END line
    for _ in range(4):  # one kind's start may lie inside another's run (a line of a hex
        moved = cut     # dump whose words are all digits reads as a line of numbers)
        cut = _before_soft_break(buffer, cut)  # first: a base64 block may end in `=` too
        cut = _before_encoded_words(buffer, cut)
        cut = _before_line_dump(buffer, cut)
        cut = _before_wrapped_block(buffer, cut)
        cut = _before_spaced_hex(buffer, cut)
        cut = _before_char_dump(buffer, cut)
        if cut in (moved, 0):
            break
    for marker in (b"ws_secret_access_key", b"WS_SECRET_ACCESS_KEY"):
        at = buffer.rfind(marker, max(0, cut - 120), cut)
        if at >= 0:
            cut = max(at - 1, 0)
    return cut


_CHUNK = 1 << 20


class _Rewrite:
    """A file's replacement, written beside it (`rewriting`); `keep` False drops it."""

    def __init__(self, out: BinaryIO) -> None:
        self.out = out
        self.keep = True


@contextlib.contextmanager
def rewriting(path: Path, mode: int) -> Iterator[_Rewrite]:
    """A temporary file beside `path` to write its new content to: on leaving, it takes
    `path`'s place atomically with `mode` (unless `keep` was set False: then it is removed,
    as it is on any error)."""
    import tempfile  # here: every command imports this module at start, few scrub files

    out_fd, out_name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.",
                                        suffix=".scrub")
    try:
        with os.fdopen(out_fd, "wb") as out:
            rewrite = _Rewrite(out)
            yield rewrite
        if rewrite.keep:
            os.chmod(out_name, mode)
            os.replace(out_name, path)
        else:
            os.unlink(out_name)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(out_name)
        raise


def scrub_file(path: Path, scrubber: Scrubber) -> int:
    """Scrub one regular file in place (never through a symlink); the number of redactions.
    The file is replaced atomically, keeping its mode, only when something changed."""
    start = sum(scrubber.counts.values())
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    with os.fdopen(fd, "rb") as src:
        if src.read(len(_SQLITE)) == _SQLITE:
            _scrub_sqlite(path, scrubber)
        src.seek(0)
        before = sum(scrubber.counts.values())
        with rewriting(path, os.fstat(src.fileno()).st_mode & 0o7777) as rewrite:
            for piece in scrubber.scrub_stream(iter(lambda: src.read(_CHUNK), b"")):
                rewrite.out.write(piece)
            rewrite.keep = sum(scrubber.counts.values()) != before
    if path.suffix == ".jsonl":
        scrub_split_deltas(path, scrubber)
    if path.suffix in _PATCHES:  # git's binary hunks: compressed, out of the byte pass's sight
        from copeca_action._util.binpatch import scrub_binary_patches

        scrubber.counts.update(scrub_binary_patches(path, scrubber.finds))
    return sum(scrubber.counts.values()) - start


_PATCHES = (".diff", ".patch")


_SQLITE = b"SQLite format 3\x00"
_SQLITE_TIMEOUT_S = 60.0
"""An agent may leave a database whose triggers never end: past this the SQL pass gives up
(and the byte pass scrubs the file as it is)."""


def _scrub_sqlite(path: Path, scrubber: Scrubber) -> None:
    """An SQLite database (a CLI's state, Codex's thread history): each text and blob value
    scrubbed through SQL, then the file rewritten (VACUUM, secure_delete) so no old copy is
    left in a free page. Replacing bytes of another length in the file itself would corrupt
    it; what this leaves (a table without rowid, an unreadable file) the byte pass still
    scrubs."""
    import sqlite3

    try:
        con = sqlite3.connect(path.resolve().as_uri() + "?mode=rw", uri=True)
    except sqlite3.Error:
        return
    import time

    deadline = time.monotonic() + _SQLITE_TIMEOUT_S  # the file is the agent's: so are its
    con.set_progress_handler(lambda: time.monotonic() > deadline, 10_000)  # triggers
    try:
        con.execute("PRAGMA secure_delete=ON")
        tables = [r[0] for r in con.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table'")]
        changed = False
        for table in tables:
            name = '"' + table.replace('"', '""') + '"'
            try:
                cursor = con.execute(f"SELECT rowid, * FROM {name}")
            except sqlite3.Error:
                continue  # WITHOUT ROWID, or a virtual table: left to the byte pass
            columns = ['"' + d[0].replace('"', '""') + '"' for d in cursor.description[1:]]
            for row in cursor.fetchall():
                sets: list[str] = []
                values: list[object] = []
                for column, value in zip(columns, row[1:], strict=True):
                    if isinstance(value, str):
                        data = value.encode("utf-8", "surrogatepass")
                        clean = scrubber.scrub(data)
                        if clean != data:
                            sets.append(f"{column} = ?")
                            values.append(clean.decode("utf-8", "surrogatepass"))
                    elif isinstance(value, bytes):
                        clean = scrubber.scrub(value)
                        if clean != value:
                            sets.append(f"{column} = ?")
                            values.append(clean)
                if sets:
                    con.execute(f"UPDATE {name} SET {', '.join(sets)} WHERE rowid = ?",
                                [*values, row[0]])
                    changed = True
        con.commit()
        if changed:
            con.execute("VACUUM")
    except sqlite3.Error:
        pass
    finally:
        con.close()


_DELTA_KEYS = ("text", "partial_json", "thinking")


def _delta_piece(line: bytes) -> tuple[dict[str, object], dict[str, object], str] | None:
    """(the line's object, the dict holding the piece, its key) for a line of a streamed
    reply: Claude Code's and Qwen Code's `stream_event` `content_block_delta`, Gemini CLI's
    `message` with `delta: true`."""
    if b"content_block_delta" not in line and b'"delta"' not in line:
        return None
    try:
        obj = json.loads(line)
    except ValueError:
        return None
    if not isinstance(obj, dict):
        return None
    if obj.get("type") == "message" and obj.get("delta") is True \
            and isinstance(obj.get("content"), str):
        return obj, obj, "content"
    event = obj.get("event")
    if obj.get("type") != "stream_event" or not isinstance(event, dict) \
            or event.get("type") != "content_block_delta":
        return None
    delta = event.get("delta")
    if isinstance(delta, dict):
        for key in _DELTA_KEYS:
            if isinstance(delta.get(key), str):
                return obj, delta, key
    return None


def scrub_split_deltas(path: Path, scrubber: Scrubber) -> int:
    """A JSON-lines transcript whose reply is streamed in pieces, one line each (a model
    that repeats a key it read splits it over two or more lines): the pieces are joined in
    order, and where a secret value (in any of its encodings) or a token shape spans pieces,
    its part in each piece is replaced by the redaction (one count per secret). Only those
    lines are rewritten (compact JSON); the number of redactions."""
    pieces: list[tuple[int, str]] = []
    with path.open("rb") as src:
        for number, line in enumerate(src):
            found = _delta_piece(line)
            if found is not None:
                value = found[1][found[2]]
                assert isinstance(value, str)
                pieces.append((number, value))
    if len(pieces) < 2:
        return 0
    joined = "".join(text for _, text in pieces).encode("utf-8", "surrogatepass")
    spans: list[tuple[int, int, bytes]] = []
    for needle, replacement in scrubber._literals:
        at = joined.find(needle)
        while at >= 0:
            spans.append((at, at + len(needle), replacement))
            at = joined.find(needle, at + 1)
    for pattern in PATTERNS:
        spans.extend((m.start(), m.end(), redaction(pattern.name))
                     for m in pattern.regex.finditer(joined))
    if not spans:
        return 0
    edits: dict[int, list[tuple[int, int, bytes]]] = {}  # piece → its parts to redact
    offset = 0
    bounds: list[tuple[int, int]] = []
    for _, text in pieces:
        size = len(text.encode("utf-8", "surrogatepass"))
        bounds.append((offset, offset + size))
        offset += size
    made = 0
    for start, end, replacement in spans:
        hit = [i for i, (lo, hi) in enumerate(bounds) if lo < end and start < hi]
        if len(hit) < 2:
            continue  # inside one piece: the plain pass has seen it
        made += 1
        scrubber.counts[replacement[10:-1].decode()] += 1
        for i in hit:
            lo, hi = bounds[i]
            edits.setdefault(i, []).append((max(start, lo) - lo, min(end, hi) - lo,
                                            replacement))
    if not made:
        return 0
    by_line = {pieces[i][0]: (i, parts) for i, parts in edits.items()}
    with rewriting(path, path.stat().st_mode & 0o7777) as rewrite, path.open("rb") as src:
        for number, line in enumerate(src):
            if number in by_line:
                found = _delta_piece(line)
                assert found is not None
                obj, holder, key = found
                data = str(holder[key]).encode("utf-8", "surrogatepass")
                parts = sorted(by_line[number][1])
                kept, cursor = [], 0
                for lo, hi, replacement in parts:
                    if lo >= cursor:
                        kept.append(data[cursor:lo] + replacement)
                        cursor = hi
                    else:
                        cursor = max(cursor, hi)
                kept.append(data[cursor:])
                holder[key] = b"".join(kept).decode("utf-8", "replace")
                newline = b"\n" if line.endswith(b"\n") else b""
                line = json.dumps(obj, ensure_ascii=False,
                                  separators=(",", ":")).encode() + newline
            rewrite.out.write(line)
    return made


def scrub_tree(root: Path, scrubber: Scrubber | None = None,
               skip: Iterable[str] = ()) -> Counter[str]:
    """Scrub every regular file under `root` in place (symlinks are never followed; names in
    `skip` are left out at any depth); the redactions made, per rule."""
    scrubber = scrubber if scrubber is not None else Scrubber.from_env()
    start = Counter(scrubber.counts)
    skipped = set(skip)
    for folder, dirs, files in os.walk(root, followlinks=False):
        dirs[:] = [d for d in dirs if d not in skipped]
        for name in files:
            path = Path(folder, name)
            if name in skipped or name.endswith(".scrub") or not path.is_file() \
                    or path.is_symlink():
                continue
            try:
                scrub_file(path, scrubber)
            except FileNotFoundError:
                continue
    return scrubber.counts - start


_MARKER = re.compile(rb"\[REDACTED:[^\]\n]{1,200}\]")
_MARKER_MAX = 212


def _count_in(path: Path) -> int:
    total = 0
    tail = b""
    with path.open("rb") as handle:
        for chunk in iter(lambda: handle.read(_CHUNK), b""):
            data = tail + chunk
            safe = max(len(data) - _MARKER_MAX, 0)  # a marker starting later may continue
            done = 0
            for match in _MARKER.finditer(data):
                if match.start() >= safe:
                    break
                total += 1
                done = match.end()
            tail = data[max(done, safe):]
    return total + len(_MARKER.findall(tail))


def count_redactions(root: Path, skip: Iterable[str] = ()) -> int:
    """The redaction markers in the files under `root`: how many secrets were taken out of
    what the run left (however many passes it took, across resumes)."""
    total = 0
    skipped = set(skip)
    for folder, dirs, files in os.walk(root, followlinks=False):
        dirs[:] = [d for d in dirs if d not in skipped]
        for name in files:
            path = Path(folder, name)
            if name in skipped or path.is_symlink() or not path.is_file():
                continue
            total += _count_in(path)
    return total


_SHARED: list[tuple[str, Scrubber]] = []
_SHARED_LOCK = threading.Lock()


def shared_scrubber() -> Scrubber:
    """One Scrubber for the process's writers (records, run folders, reports), rebuilt when
    the environment's secrets or the registry change; its `counts` add up every redaction."""
    key = repr((sorted(env_secrets().items()), sorted(SECRETS.values().items())))
    with _SHARED_LOCK:
        if _SHARED and _SHARED[0][0] == key:
            return _SHARED[0][1]
        fresh = Scrubber.from_env()
        if _SHARED:
            fresh.counts.update(_SHARED[0][1].counts)
        _SHARED[:] = [(key, fresh)]
        return fresh


def scrub_log_record(record: logging.LogRecord) -> bool:
    """A logging filter: the record's message and its traceback, scrubbed (with no handler
    set, logging prints them to stderr, the job's log; an exception may quote a secret)."""
    import traceback

    text = record.getMessage()
    if record.exc_info and record.exc_info[1] is not None:
        text += "\n" + "".join(traceback.format_exception(record.exc_info[1])).rstrip()
    record.msg, record.args = shared_scrubber().scrub_text(text), None
    record.exc_info, record.exc_text = None, None
    return True


def _scrubbed_excepthook(kind: type[BaseException], value: BaseException,
                         tb: TracebackType | None) -> None:
    import traceback

    text = "".join(traceback.format_exception(kind, value, tb))
    sys.stderr.write(shared_scrubber().scrub_text(text))
    sys.stderr.flush()


def scrub_uncaught() -> None:
    """An uncaught exception's traceback reaches stderr (the job's log) scrubbed."""
    sys.excepthook = _scrubbed_excepthook


def scrub_bytes(data: bytes) -> bytes:
    """`data` through the shared scrubber (for a writer that holds the whole text)."""
    return shared_scrubber().scrub(data)


HARNESS_ONLY_VARS = ("GITHUB_TOKEN", "GH_TOKEN", "ACTIONS_RUNTIME_TOKEN",
                     "ACTIONS_ID_TOKEN_REQUEST_TOKEN")
"""Secrets the harness's own processes never pass on: out of `os.environ` once captured (no
git, set-up command or grader inherits them)."""


def drop_harness_secrets(environ: MutableMapping[str, str] | None = None) -> list[str]:
    """Remove the harness-only secrets and every secret `INPUT_*` from the environment (they
    stay registered for scrubbing); the names removed."""
    environ = os.environ if environ is None else environ
    names = [n for n in list(environ) if n in HARNESS_ONLY_VARS or _secret_input(n)]
    for name in names:
        if len(environ.get(name, "")) >= MIN_VALUE_LEN:
            register_secret(f"env:{name}", environ[name])
        environ.pop(name, None)
    return names
