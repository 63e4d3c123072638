"""The lines of a results file, each read with a bound: one line of gigabytes (a damaged or
hostile file) is refused naming its number, never read whole into memory."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

from copeca_action.errors import ConfigError, Problem

MAX_LINE_BYTES = 64 << 20
"""The longest line a results file may hold (64 MiB). A record is a few kilobytes; the
longest the engine writes (a run that viewed a file at every step for hours) stays well
below a megabyte. Reading a longer line would hold it whole, and its parse several times
over (a 1 GiB line took 7 GiB)."""


def too_long(path: Path | str, number: int) -> ConfigError:
    return ConfigError(Problem(
        str(path), f"a line longer than {MAX_LINE_BYTES >> 20} MiB (expected one JSON record "
        f"per line, each far smaller: the file is damaged or not a results file)", number))


def bounded_lines(handle: BinaryIO, path: Path | str) -> Iterator[tuple[int, bytes]]:
    """(line number, bytes with their newline) in file order; the last line may lack its
    newline (an append cut short). A line longer than MAX_LINE_BYTES raises, naming it."""
    number = 0
    while raw := handle.readline(MAX_LINE_BYTES + 1):
        number += 1
        if len(raw) > MAX_LINE_BYTES:
            raise too_long(path, number)
        yield number, raw
