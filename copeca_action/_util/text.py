"""Supplied text (task ids, names, agents' messages) made fit for one line of a page or log."""

from __future__ import annotations

import re
import unicodedata

_BREAKS = re.compile(r"[\r\n\t\x0b\x0c\x85\u2028\u2029]")
"""Whatever a reader may take for a line break (and tabs)."""
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def one_line(value: object, max_len: int | None = None) -> str:
    """The text on one line: line breaks and tabs become spaces, other control characters
    and format characters (bidi overrides, zero-width ones) are dropped; cut at `max_len`
    with an ellipsis. In a log, a line break would let the text start a line of its own (a
    line starting `::` is a workflow command to the Actions runner); on a page, end a table
    row or a heading."""
    text = _CONTROL.sub("", _BREAKS.sub(" ", str(value)))
    text = "".join(c for c in text if unicodedata.category(c) != "Cf")
    return text if max_len is None or len(text) <= max_len else text[: max_len - 1] + "…"
