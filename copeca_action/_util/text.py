"""Supplied text (task ids, names, agents' messages) made fit for one line of a page or log."""

from __future__ import annotations

import re
import unicodedata

_BREAKS = re.compile(r"[\r\n\t\x0b\x0c\x85\u2028\u2029]")
"""Whatever a reader may take for a line break (and tabs)."""
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")
"""C0 and C1 controls (U+009B is a terminal's CSI, as ESC [ is)."""
_HIDDEN = frozenset({"Cc", "Cf", "Cs", "Zl", "Zp"})
"""Unicode categories a terminal acts on or shows as nothing: controls (escape sequences,
carriage return, line breaks), format characters (bidi overrides, zero-width ones),
surrogates, line and paragraph separators."""
_COMMAND = re.compile(r"^(\s*)::")
"""A line a GitHub Actions runner takes for a workflow command (`::add-mask::`,
`::stop-commands::`): it trims leading spaces before looking for `::`."""


def one_line(value: object, max_len: int | None = None) -> str:
    """The text on one line: line breaks and tabs become spaces, other control characters
    and format characters (bidi overrides, zero-width ones) are dropped; cut at `max_len`
    with an ellipsis. In a log, a line break would let the text start a line of its own (a
    line starting `::` is a workflow command to the Actions runner); on a page, end a table
    row or a heading."""
    text = _CONTROL.sub("", _BREAKS.sub(" ", str(value)))
    text = "".join(c for c in text if unicodedata.category(c) != "Cf")
    return text if max_len is None or len(text) <= max_len else text[: max_len - 1] + "…"


def _escape(char: str) -> str:
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}" if code < 0x10000 \
        else f"\\U{code:08x}"


def shown(value: object, max_len: int | None = 200) -> str:
    """Untrusted text (read from a bundle or a record) as a terminal or log may print it:
    every control, format or separator character written as its escape (`\\x1b`, `\\n`,
    `\\u202e`), so nothing in it moves the cursor, clears the screen, links, reorders the
    line or starts a line of its own, and what was there stays visible; cut at `max_len`
    characters of the escaped text with an ellipsis, never inside an escape."""
    pieces = [_escape(c) if unicodedata.category(c) in _HIDDEN else c for c in str(value)]
    if max_len is None or sum(map(len, pieces)) <= max_len:
        return "".join(pieces)
    kept, size = [], 0
    for piece in pieces:
        if size + len(piece) > max_len - 1:
            break
        kept.append(piece)
        size += len(piece)
    return "".join(kept) + "…"


def log_safe(text: str) -> str:
    """A message of several lines, made by this program but quoting untrusted text, as a
    terminal or a CI log may print it: its line breaks kept, any other control, format or
    separator character escaped as `shown` does, and a line that a GitHub Actions runner
    would take for a workflow command (`::add-mask::...` after any indent) has its first
    `:` escaped (`\\x3a`). A last guard: the quoted text is escaped where it is quoted."""
    lines = [shown(line, max_len=None) for line in text.split("\n")]
    return "\n".join(_COMMAND.sub(r"\1\\x3a:", line) for line in lines)
