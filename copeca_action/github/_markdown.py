"""Safe markdown: text from agents and tasks escaped, numbers formatted one way everywhere."""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable

from copeca_action._util.money import usd_decimals
from copeca_action._util.percent import level_text, percent_decimals
from copeca_action._util.text import one_line

MINUS = "\u2212"
ZWSP = "&#8203;"
_ENTITIES = {c: f"&#{ord(c)};" for c in "\\`*_{}[]<>#+!|~&$\"'"}
"""Markdown and HTML specials. `(` `)` stay: without a raw `[` they cannot form a link."""
_BREAK_AFTER = {"@", "#", ":"}


class Safe(str):
    """Text already safe to place in markdown (formatted numbers, our own markup)."""


def escape_md(text: object, max_len: int = 300) -> Safe:
    """Plain text that renders as itself: no markup, no HTML, no @-mention, no autolink.

    Markdown and HTML specials become numeric entities; a zero-width space after `@`, `#`
    and `:` stops mentions, issue references, emoji codes and URL autolinks; line breaks
    become spaces (a cell stays a cell); bidi and control characters are dropped."""
    out = []
    for ch in one_line(text, max_len):
        if ch in _BREAK_AFTER:
            out.append(_ENTITIES.get(ch, ch) + ZWSP)
        else:
            out.append(_ENTITIES.get(ch, ch))
    return Safe("".join(out).replace("www.", f"www{ZWSP}."))


def code_block(text: str, info: str = "text") -> Safe:
    """`text` verbatim in a fenced code block whose fence is longer than any run of backticks
    in it, so no line of the text can close the block and be read as markdown."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return Safe(f"{fence}{info}\n{text}\n{fence}")


def _num(value: float, digits: int) -> str:
    text = f"{abs(value):,.{digits}f}"
    return (MINUS if value < 0 and text.strip("0.,") else "") + text


def signed_pct(value: float | None, digits: int = 1, lines: Iterable[float] = (0.0,)) -> Safe:
    """+18.2% / −18.2%; n/a for None; ∞ when a cost per correct is infinite. More than
    `digits` decimals where fewer would show the value on (or across) one of `lines` (0 by
    default) it is not on: −0.04% is "−0.04%", never "0.0%"."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return Safe("n/a")
    if math.isinf(value):
        return Safe("+∞" if value > 0 else f"{MINUS}∞")
    sign = "+" if value >= 0 else ""
    return Safe(sign + _num(value * 100, percent_decimals(value, digits, lines)) + "%")


def signed_points(value: float | None, digits: int = 1) -> Safe:
    """Percentage points, with as many decimals as keep the sign (`signed_pct`)."""
    if value is None or math.isnan(value):
        return Safe("n/a")
    return Safe(("+" if value >= 0 else "") + _num(value * 100, percent_decimals(value, digits))
                + " pp")


def ci_text(low: float | None, high: float | None, kind: str = "relative",
            confidence: float | None = None, lines: Iterable[float] = (0.0,)) -> Safe:
    """`−27.5 to −8.1%` (or `95% CI −27.5 to −8.1%` when the confidence is given); each bound
    on its side of each of `lines` (`signed_pct`)."""
    if low is None or high is None:
        return Safe("")
    lines = tuple(lines)
    if kind == "points":
        body = f"{signed_points(low)[:-3]} to {signed_points(high)}"
    else:
        lo = signed_pct(low, lines=lines)
        body = f"{lo[:-1] if lo.endswith('%') else lo} to {signed_pct(high, lines=lines)}"
    if confidence is not None:
        body = f"{level_text(confidence)} CI {body}"
    return Safe(body)


def value_text(value: float | None, unit: str) -> Safe:
    """A metric value in its unit."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return Safe("n/a")
    if isinstance(value, float) and math.isinf(value):
        return Safe("∞")
    if unit == "usd":
        return Safe("$" + _num(value, usd_decimals(value, 4) if abs(value) < 0.1 else 2))
    if unit == "fraction":
        return Safe(_num(value * 100, 1) + "%")
    if unit == "count":
        return Safe(f"{int(value):,}")
    if unit == "mean":
        return Safe(_num(value, 1))
    if unit == "seconds":
        return Safe(_num(value, 1) + " s")
    if unit == "tokens":
        for size, suffix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
            if abs(value) >= size:
                return Safe(_num(value / size, 1) + suffix)
        return Safe(f"{int(value):,}")
    return Safe(_num(value, 3))


_FENCE_OPEN = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_DETAILS = re.compile(r"<(/?)details\b", re.IGNORECASE)


def cut_markdown(text: str, limit: int, note: str, size: Callable[[str], int] = len) -> str:
    """`text` when `size(text)` is at most `limit`; else its longest run of whole lines that
    fits with what it leaves open closed (a code fence, every `<details>`) and then `note`,
    in a paragraph of its own, so the note neither renders as code nor hides in a folded
    block and a table row is never cut in half. `size` measures (characters; bytes for the
    job summary). A first line longer than the limit is cut within itself."""
    if size(text) <= limit:
        return text
    tail = "\n\n" + note.strip("\n") + "\n"
    budget = limit - size(tail)
    kept: list[str] = []
    used = 0
    fence: str | None = None
    depth = 0
    for line in text.splitlines(keepends=True):
        closing = _closing(fence, depth)
        if used + size(line) + size(closing) > budget:
            break
        kept.append(line)
        used += size(line)
        fence, depth = _after(line, fence, depth)
    if not kept:  # one first line longer than the limit: its longest prefix that fits
        first = text.splitlines()[0] if text else ""
        low, high = 0, len(first)
        while low < high:
            mid = (low + high + 1) // 2
            low, high = (mid, high) if size(first[:mid]) <= budget else (low, mid - 1)
        kept = [first[:low]]
        fence, depth = _after(kept[0], None, 0)
    body = "".join(kept).rstrip("\n")
    return body + _closing(fence, depth) + tail


def _after(line: str, fence: str | None, depth: int) -> tuple[str | None, int]:
    """The open fence and `<details>` depth after `line`."""
    match = _FENCE_OPEN.match(line)
    if fence is not None:
        closes = (match is not None and match.group(1)[0] == fence[0]
                  and len(match.group(1)) >= len(fence) and not line[match.end():].strip())
        return (None if closes else fence), depth
    if match is not None:
        return match.group(1), depth
    for slash in _DETAILS.findall(line):
        depth = max(0, depth - 1) if slash else depth + 1
    return None, depth


def _closing(fence: str | None, depth: int) -> str:
    """What closes an open fence and `depth` open `<details>`."""
    return ("\n" + fence if fence else "") + "\n\n</details>" * depth
