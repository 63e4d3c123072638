"""JSON that means one thing to every reader, checked before a model reads it.

Python's json and pydantic's parser both take the *last* of two equal keys, other readers the
first or neither: a signed `{"total": 1, "total": 999}` says two things. They also read
`NaN`, `Infinity` and a number too large for a float (`1e999`, read as infinity), which no
JSON standard allows; and an integer of thousands of digits. `check_json` refuses each,
naming the line and the key (its path from the document's root), so a verifier never
accepts a file whose meaning depends on who reads it.

A fast pass (the C decoder with hooks) finds whether something is wrong; only then does a
slower scan of the text find where (the line, the key's path), so a file that is right
costs one decode.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass

MAX_INT_DIGITS = 100
"""No value of a file this project writes has more digits (a seed, a count, a size)."""
MAX_DEPTH = 100
"""Nesting deeper than this is refused (the deepest a bundle's files go is under 10)."""


@dataclass(frozen=True)
class JsonProblem(Exception):
    """What is wrong and where: `line` 1-based in the text checked, `key` the path of the
    key or value concerned (`tokens.input`, `files[3].path`), empty at the root."""

    line: int
    key: str
    message: str

    def __str__(self) -> str:
        from copeca_action._util.text import shown

        where = f"{shown(self.key, 120)}: " if self.key else ""  # the file's text
        return f"line {self.line}: {where}{self.message}"


class _Found(Exception):
    """Raised by a hook of the fast pass: something is wrong; the scan says where."""


def _pairs(pairs: list[tuple[str, object]]) -> dict[str, object]:
    out = dict(pairs)
    if len(out) != len(pairs):
        raise _Found
    return out


def _float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise _Found
    return value


def _int(text: str) -> int:
    if len(text) > MAX_INT_DIGITS and len(text.lstrip("-")) > MAX_INT_DIGITS:
        raise _Found
    return int(text)


def _no_constant(_: str) -> float:
    raise _Found


def _infinity(text: str) -> float:
    if text == "NaN":
        raise _Found
    return float(text)


_STRICT = json.JSONDecoder(object_pairs_hook=_pairs, parse_float=_float, parse_int=_int,
                           parse_constant=_no_constant)
_WITH_INFINITY = json.JSONDecoder(object_pairs_hook=_pairs, parse_float=_float,
                                  parse_int=_int, parse_constant=_infinity)


def check_json(data: bytes, infinity: bool = False) -> None:
    """Raise JsonProblem unless `data` is UTF-8 JSON with no key twice in an object, no
    `NaN`, no number beyond a float's range, no integer of more than MAX_INT_DIGITS digits
    and no nesting so deep the decoder gives up (then named as deeper than MAX_DEPTH).
    `infinity`: the literals `Infinity` and `-Infinity` are allowed (a file whose writer
    puts an unbounded interval side so)."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise JsonProblem(data.count(b"\n", 0, exc.start) + 1, "",
                          f"not UTF-8 (byte {exc.start})") from None
    try:
        (_WITH_INFINITY if infinity else _STRICT).decode(text)
    except json.JSONDecodeError as exc:
        raise JsonProblem(exc.lineno, "", f"not JSON: {exc.msg} (column {exc.colno})") from None
    except (_Found, RecursionError, ValueError):  # ValueError: int() of a huge literal
        found = _locate(text, infinity)
        if found is None:  # not expected: the scan finds what the hooks did
            raise JsonProblem(1, "", "not JSON a verifier accepts") from None
        raise found from None


_TOKEN = re.compile(r'\s*(?:("(?:[^"\\]|\\.)*")|([{}\[\]:,])|([^\s{}\[\]:,"]+))', re.DOTALL)
_NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?\Z")


@dataclass
class _Frame:
    path: str
    keys: set[str] | None
    """None for an array."""
    index: int = 0
    key: str = ""
    expect_key: bool = True


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _locate(text: str, infinity: bool) -> JsonProblem | None:
    """The first problem in the text, with its line and path: a second key of an object,
    a NaN (or an Infinity not allowed), a number out of range or too long, too deep."""
    stack: list[_Frame] = []

    def at(pos: int, message: str, key: str) -> JsonProblem:
        return JsonProblem(text.count("\n", 0, pos) + 1, key, message)

    def here() -> str:
        if not stack:
            return ""
        frame = stack[-1]
        return _join(frame.path, frame.key) if frame.keys is not None else \
            f"{frame.path}[{frame.index}]"

    for token in _TOKEN.finditer(text):
        pos = token.start(token.lastindex or 0)
        string, mark, word = token.group(1), token.group(2), token.group(3)
        frame = stack[-1] if stack else None
        if string is not None:
            if frame is not None and frame.keys is not None and frame.expect_key:
                try:
                    key = json.loads(string)
                except ValueError:
                    return None
                shown_key = _join(frame.path, key)
                if key in frame.keys:
                    return at(pos, f"the key {json.dumps(key)} appears twice in one object "
                              "(readers disagree on which one counts)", shown_key)
                frame.keys.add(key)
                frame.key, frame.expect_key = key, False
        elif mark in ("{", "["):
            if len(stack) >= MAX_DEPTH:
                return at(pos, f"nested deeper than {MAX_DEPTH} levels", here())
            stack.append(_Frame(here(), set() if mark == "{" else None))
        elif mark in ("}", "]"):
            if stack:
                stack.pop()
        elif mark == ",":
            if frame is not None:
                frame.index += 1
                frame.expect_key = True
        elif word is not None:
            problem = _word(word, infinity)
            if problem:
                return at(pos, problem, here())
    return None


def _word(word: str, infinity: bool) -> str:
    """Why a literal outside strings is refused ("" when it is not)."""
    if word in ("true", "false", "null"):
        return ""
    if word == "NaN":
        return "NaN is not a number JSON allows (expected a number, or null when unknown)"
    if word in ("Infinity", "-Infinity"):
        return "" if infinity else (f"{word} is not a number JSON allows (expected a finite "
                                    "number, or null when unknown)")
    match = _NUMBER.match(word)
    if match is None:
        return ""  # the decoder names a syntax error itself
    if match.group(1) is None and match.group(2) is None:
        digits = len(word.lstrip("-"))
        return (f"an integer of {digits} digits (more than {MAX_INT_DIGITS}: no value is "
                "that large)") if digits > MAX_INT_DIGITS else ""
    if not math.isfinite(float(word)):
        return f"{word[:40]} is beyond the range of a number (read as infinity)"
    return ""
