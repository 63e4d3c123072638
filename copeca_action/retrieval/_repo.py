"""The checked-out repository a run saw: path normalisation, line→byte maps, symbols, cached."""

from __future__ import annotations

import bisect
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from copeca_action.retrieval._intervals import Interval
from copeca_action.retrieval._symbols import Symbol, SymbolIndex, definitions, language_of

SYMBOL_BITS = 20
"""A file holds fewer than 2**20 definitions, so (file number, index) packs into one int."""


@dataclass
class SourceFile:
    """One file's bytes as offsets: `line_starts[i]` is where line i+1 begins."""

    path: str
    size: int
    line_starts: list[int]
    number: int = 0
    """Sequence number in its Repo; symbol ids of this file are `number << 20 | index`."""
    _data: bytes | None = field(default=None, repr=False)
    _symbols: SymbolIndex | None = field(default=None, repr=False)

    @classmethod
    def from_bytes(cls, path: str, data: bytes) -> SourceFile:
        starts = [0]
        find = data.find
        pos = find(b"\n")
        while pos != -1:
            starts.append(pos + 1)
            pos = find(b"\n", pos + 1)
        if starts[-1] == len(data) and len(starts) > 1:
            starts.pop()  # a final newline does not open another line
        return cls(path, len(data), starts, _data=data)

    @property
    def symbol_base(self) -> int:
        return self.number << SYMBOL_BITS

    @property
    def line_count(self) -> int:
        return 0 if self.size == 0 else len(self.line_starts)

    def lines_to_bytes(self, first: int, last: int) -> Interval | None:
        """Bytes of lines `first..last` (1-based, inclusive, clamped to the file), newline
        included; None when the range lies wholly outside the file."""
        first = max(first, 1)
        last = min(last, self.line_count)
        if last < first:
            return None
        end = self.line_starts[last] if last < len(self.line_starts) else self.size
        return self.line_starts[first - 1], end

    def line_of(self, offset: int) -> int:
        """1-based line holding byte `offset`."""
        return bisect.bisect_right(self.line_starts, offset)

    def symbols(self) -> list[Symbol]:
        """Definitions in this file (empty for unsupported languages), by (start, −end)."""
        return self.symbol_index().symbols

    def symbol_index(self) -> SymbolIndex:
        """Parsed once, on first use; the bytes are then let go."""
        if self._symbols is None:
            language = language_of(self.path)
            found: list[Symbol] = []
            if language is not None and self._data is not None:
                found = definitions(self._data, language, self.path)
            self._symbols = SymbolIndex(found)
            self._data = None
        return self._symbols


class Repo:
    """A worktree on disk. `aliases` are other absolute roots the agent may have seen the same
    tree under (the run's temporary worktree path, a container's /workspace). With
    `strip_prefixes`, a path that is not under the root or an alias loses leading components
    until the rest names a file of the tree (`/testbed/src/a.py` → `src/a.py`), as
    ContextBench's evaluator does; the runs' own metrics leave it off (the worktree path is
    known exactly, and a stripped path may name a copy outside the tree, such as an installed
    package)."""

    def __init__(self, root: Path | str, aliases: Sequence[str] = (),
                 strip_prefixes: bool = False) -> None:
        self.root = Path(root).resolve()
        self.strip_prefixes = strip_prefixes
        roots = [str(self.root), *(os.path.normpath(a) for a in aliases if a)]
        self._roots = sorted({r.rstrip("/") for r in roots}, key=len, reverse=True)
        self._files: dict[str, SourceFile | None] = {}
        self._numbered: list[SourceFile] = []

    def symbol(self, symbol_id: int) -> Symbol:
        """The definition behind an id held in a `Context`."""
        source = self._numbered[symbol_id >> SYMBOL_BITS]
        return source.symbols()[symbol_id & ((1 << SYMBOL_BITS) - 1)]

    def inside(self, absolute: str) -> str | None:
        """The part of an absolute path under the root or an alias ("" for the root itself)."""
        text = os.path.normpath(absolute)
        for root in self._roots:
            if text == root:
                return ""
            if text.startswith(root + "/"):
                return text[len(root) + 1:]
        return None

    def relative(self, path: str, cwd: str = "") -> str | None:
        """Repository-relative POSIX path of an existing regular file, else None.

        `cwd` is the agent's working directory relative to the root (after a `cd`)."""
        text = path.strip().strip("'\"")
        if not text or "\0" in text:
            return None
        if text.startswith("/"):
            rel = self.inside(text)
            if not rel:
                return self._stripped(text) if rel is None else None
        else:
            rel = os.path.join(cwd, text) if cwd else text
        rel = os.path.normpath(rel)
        if rel.startswith("..") or rel == "." or os.path.isabs(rel):
            return None
        if self.file(rel) is not None:
            return rel
        return self._stripped(rel)

    def _stripped(self, path: str) -> str | None:
        """With `strip_prefixes`: the longest tail of `path` (leading components dropped one
        by one) that is a file of the tree."""
        if not self.strip_prefixes:
            return None
        parts = [p for p in os.path.normpath(path).split("/") if p]
        if ".." in parts:
            return None
        for start in range(1, len(parts)):
            tail = "/".join(parts[start:])
            if self.file(tail) is not None:
                return tail
        return None

    def file(self, rel: str) -> SourceFile | None:
        """The file at repository-relative `rel`, or None when it is not a file in the tree."""
        if rel in self._files:
            return self._files[rel]
        target = (self.root / rel)
        found: SourceFile | None = None
        try:
            real = target.resolve()
            if real.is_file() and real.is_relative_to(self.root):
                found = SourceFile.from_bytes(rel, real.read_bytes())
                found.number = len(self._numbered)
                self._numbered.append(found)
        except (OSError, ValueError):  # unreadable, or a name no file can have
            found = None
        self._files[rel] = found
        return found

    def is_dir(self, rel: str) -> bool:
        target = (self.root / rel).resolve()
        return target.is_dir() and target.is_relative_to(self.root)
