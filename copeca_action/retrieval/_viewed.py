"""What the agent looked at: the `Viewed` items of one run and how they are collected.

`Collector` places the paths a tool call names in the repository (dropping those that are not
files in it) and records whole files, line ranges or names; `_extract.py` and `_shell.py`
decide what each tool call showed.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Sequence

from copeca_action._util.model import RecordModel
from copeca_action.records import ViewedSpan
from copeca_action.retrieval._repo import Repo, SourceFile

LineRange = tuple[int, int]


class Viewed(RecordModel):
    """One file seen in one step."""

    step: int
    file: str
    """Repository-relative POSIX path of an existing file."""
    lines: tuple[int, int] | None = None
    """1-based inclusive lines whose content was shown; None with `whole=False`: only the name."""
    whole: bool = False
    """The whole file's content was shown."""

    @property
    def shows_content(self) -> bool:
        return self.whole or self.lines is not None


class ViewedContext(RecordModel):
    """Everything one run viewed, in step order, with the paths that could not be placed."""

    items: list[Viewed] = []
    dropped: list[str] = []
    """Paths named by tool calls that are not files in the repository (deduplicated)."""

    def steps(self) -> list[int]:
        """Step indices that viewed something, ascending: the trajectory's steps."""
        return sorted({item.step for item in self.items})


class Collector:
    """Accumulates items for one call, resolving paths against the repository."""

    def __init__(self, repo: Repo, step: int) -> None:
        self.repo = repo
        self.step = step
        self.items: list[Viewed] = []
        self.dropped: list[str] = []

    def resolve(self, path: str, cwd: str = "") -> tuple[str, SourceFile] | None:
        rel = self.repo.relative(path, cwd)
        if rel is None:
            self.dropped.append(path)
            return None
        source = self.repo.file(rel)
        assert source is not None
        return rel, source

    def name(self, path: str, cwd: str = "") -> None:
        found = self.resolve(path, cwd)
        if found:
            self.items.append(Viewed(step=self.step, file=found[0]))

    def lines(self, path: str, first: int, last: int | None, cwd: str = "") -> None:
        """Lines first..last (None: to the end), clamped; past the end: the name only."""
        found = self.resolve(path, cwd)
        if not found:
            return
        rel, source = found
        total = source.line_count
        end = total if last is None else min(last, total)
        first = max(first, 1)
        if first == 1 and end >= total:
            self.items.append(Viewed(step=self.step, file=rel, whole=True))
        elif first <= end:
            self.items.append(Viewed(step=self.step, file=rel, lines=(first, end)))
        else:
            self.items.append(Viewed(step=self.step, file=rel))

    def whole(self, path: str, cwd: str = "") -> None:
        self.lines(path, 1, None, cwd)


def runs(numbers: Sequence[int]) -> Iterator[LineRange]:
    """Consecutive runs of sorted numbers as inclusive ranges."""
    start = prev = numbers[0] if numbers else 0
    for n in numbers[1:]:
        if n != prev + 1:
            yield start, prev
            start = n
        prev = n
    if numbers:
        yield start, prev


def result_lines(result: str | None) -> Iterator[str]:
    for line in (result or "").splitlines():
        line = line.strip()
        if line:
            yield line


def int_or_none(value: object) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str):
        text = value.strip()  # strips more than int() ignores (e.g. '\x1f')
        if text.isdecimal():  # isdigit() admits '²'
            try:
                return int(text)
            except ValueError:
                return None
    return None


def prefix_path(line: str, repo: Repo) -> str | None:
    """`path:...` or `path-12-...`: the longest prefix before a separator that is a file."""
    for match in re.finditer(r"[:\-]", line):
        head = line[:match.start()]
        if head and repo.relative(head) is not None:
            return head
    return None


def to_viewed_spans(context: ViewedContext, repo: Repo) -> list[ViewedSpan]:
    """The RunRecord form. A whole-file view is written as its full line range, so that
    `lines: None` in a record means only the name was seen."""
    out: list[ViewedSpan] = []
    for item in context.items:
        lines = item.lines
        if item.whole:
            source = repo.file(item.file)
            lines = (1, max(source.line_count, 1)) if source is not None else None
        out.append(ViewedSpan(step=item.step, file=item.file, lines=lines))
    return out


def from_viewed_spans(spans: Iterable[ViewedSpan]) -> list[Viewed]:
    """Back from a RunRecord: a line range is content, `lines: None` a name only."""
    return [Viewed(step=s.step, file=s.file, lines=s.lines) for s in spans]
