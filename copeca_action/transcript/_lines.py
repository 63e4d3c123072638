"""Reading a CLI's JSONL output without trusting it: bad lines become problems, not crashes."""

from __future__ import annotations

import contextlib
import json
import math
from collections.abc import Iterator
from contextvars import ContextVar
from pathlib import Path
from typing import Any

from copeca_action.records import Tokens
from copeca_action.records._kinds import MAX_COUNT

MAX_LINE_CHARS = 2_000_000
"""Longer lines are reported, not parsed (a runaway tool result should not eat memory)."""


def read_events(path: Path, problems: list[str]) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield (1-based line number, object) for each line that is a JSON object with a `type`.

    A missing file, undecodable bytes, a truncated or non-JSON line, a JSON value that is not an
    object and an object without a string `type` each add one entry to `problems`.
    """
    try:
        raw = path.read_bytes()
    except OSError as exc:
        problems.append(f"cannot read {path.name}: {exc.strerror or exc}")
        return
    text = raw.decode("utf-8", errors="replace")
    if "\ufffd" in text and b"\xef\xbf\xbd" not in raw:
        problems.append(f"{path.name}: bytes that are not UTF-8 were replaced")
    for number, line in enumerate(text.splitlines(), start=1):
        stripped = line.strip()
        if not stripped:
            continue
        if len(stripped) > MAX_LINE_CHARS:
            problems.append(f"line {number}: {len(stripped)} characters, skipped")
            continue
        try:
            value = json.loads(stripped)
        except ValueError:
            problems.append(f"line {number}: not JSON (truncated?): {_preview(stripped)}")
            continue
        if not isinstance(value, dict):
            problems.append(f"line {number}: a JSON {type(value).__name__}, not an object")
            continue
        if not isinstance(value.get("type"), str):
            problems.append(f"line {number}: an object without a string `type`")
            continue
        yield number, value


def _preview(text: str, limit: int = 80) -> str:
    return text if len(text) <= limit else text[:limit] + "…"


def as_dict(value: Any) -> dict[str, Any]:
    """The value if it is an object, else an empty one (fields of untrusted events)."""
    return value if isinstance(value, dict) else {}


PLAUSIBLE_COUNT = MAX_COUNT // 8
"""The largest count of one usage field read as a count (10^11 tokens: a real run stays
below 10^8). Above it, or infinite, or NaN, it is no count (`unbelievable_counts`), and a
few such fields still add up under the records' MAX_COUNT."""
_UNBELIEVABLE: ContextVar[list[object] | None] = ContextVar("unbelievable", default=None)


def as_int(value: Any) -> int:
    """A non-negative token count, or 0 for anything else (null, a string, a negative); a
    number past `PLAUSIBLE_COUNT` (or infinite, or NaN) is 0 too, and the parse that read it
    ends with its usage unknown (`unbelievable_counts`)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return 0
    if (isinstance(value, float) and not math.isfinite(value)) or value > PLAUSIBLE_COUNT:
        _unbelievable(value)
        return 0
    return max(0, int(value))


def _unbelievable(value: object) -> None:
    seen = _UNBELIEVABLE.get()
    if seen is not None:
        seen.append(value)


@contextlib.contextmanager
def unbelievable_counts() -> Iterator[list[object]]:
    """The values `as_int` and `add_tokens` found no count while the block ran (a
    parse: see `_registry`)."""
    seen: list[object] = []
    token = _UNBELIEVABLE.set(seen)
    try:
        yield seen
    finally:
        _UNBELIEVABLE.reset(token)


def as_str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def add_tokens(a: Tokens, b: Tokens) -> Tokens:
    """The sum; `a` when a field would pass MAX_COUNT (then `unbelievable_counts`)."""
    sums = {"input": a.input + b.input, "output": a.output + b.output,
            "cache_write": a.cache_write + b.cache_write, "cache_read": a.cache_read + b.cache_read,
            "cache_write_1h": a.cache_write_1h + b.cache_write_1h}
    if max(sums.values()) > MAX_COUNT:
        _unbelievable(max(sums.values()))
        return a
    return Tokens(**sums)


def sum_tokens(items: list[Tokens]) -> Tokens:
    total = Tokens()
    for item in items:
        total = add_tokens(total, item)
    return total


def tool_input(value: Any) -> dict[str, Any]:
    """Tool inputs are objects; a string is decoded when it holds one, anything else wrapped."""
    if isinstance(value, dict):
        return value
    if isinstance(value, str):
        try:
            decoded = json.loads(value)
        except ValueError:
            return {"raw": value}
        return decoded if isinstance(decoded, dict) else {"raw": decoded}
    return {} if value is None else {"raw": value}


def result_text(content: Any) -> str | None:
    """A tool result's text: a string, or the text blocks of a content list joined."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [as_str(as_dict(block).get("text")) for block in content]
        return "\n".join(p for p in parts if p is not None)
    return None
