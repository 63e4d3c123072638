"""results.jsonl straight into columns: a typed msgspec decode of only the fields the analysis
reads, in our format or copeca's, with no per-row dict.

This is the fast path of `analyze`. It is stricter than the validating reader
(`read_rows`): JSON types must be exactly the declared ones (no "5" for 5, no 5.0 for an
int), the file must end with a newline, run ids must be unique, and no record may carry
retrieval metrics. Whenever anything is in doubt it answers None, and the caller reads the
file again with `read_rows`, which raises the error naming the file, line and field, or
accepts what only its lax rules accept. So every file it does accept gives exactly the
columns `read_rows` would have given.
"""

from __future__ import annotations

import codecs
import contextlib
import datetime as dt
import functools
import gc
import math
import os
import pickle
from array import array
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from io import BufferedReader
from itertools import chain
from pathlib import Path
from typing import Annotated, Any, TypeVar, cast

import msgspec

from copeca_action._util.forked import Forked, can_fork
from copeca_action.records import _copeca
from copeca_action.records._copeca import Format, copeca_messages, detect_format, renumber
from copeca_action.records._design import DIGEST_PATTERN
from copeca_action.records._kinds import (
    KILLED,
    MAX_COUNT,
    NOT_REACHED,
    OUTCOMES,
    Endpoint,
    Outcome,
    died_flags,
)
from copeca_action.records._lines import MAX_LINE_BYTES

NonNeg = Annotated[int, msgspec.Meta(ge=0, le=MAX_COUNT)]
NonNegFloat = Annotated[float, msgspec.Meta(ge=0)]
_BLOCK = 1 << 20
"""Bytes decoded per step (whole lines): memory holds the columns and one block, not the
file. A block about the size of a core's L2 cache is decoded while the bytes the read just
copied into it are still there: reading 45% of the 100k-record copeca file took 0.17–0.18 s
of CPU in 1 MiB blocks against 0.22 s in 16 MiB ones (ours: 0.10 s against 0.13–0.15 s)."""


@dataclass
class Columns:
    """One entry per record, in file order; the RunRecord fields the report reads."""

    run_id: list[str] = field(default_factory=list)
    task_id: list[str] = field(default_factory=list)
    arm: list[str] = field(default_factory=list)
    model: list[str] = field(default_factory=list)
    served_model: list[str | None] = field(default_factory=list)
    runner: list[str] = field(default_factory=list)
    cli_version: list[str | None] = field(default_factory=list)
    category: list[str] = field(default_factory=list)
    language: list[str] = field(default_factory=list)
    outcome: list[str] = field(default_factory=list)
    correct: list[bool] = field(default_factory=list)
    cost_usd: list[float | None] = field(default_factory=list)
    cost_source: list[str | None] = field(default_factory=list)
    cost_unknown_reason: list[str | None] = field(default_factory=list)
    control: list[bool] = field(default_factory=list)
    tool_adopted: list[bool | None] = field(default_factory=list)
    repetition: list[int] = field(default_factory=list)
    tokens: list[tuple[int, int, int, int]] = field(default_factory=list)
    """input, output, cache_write, cache_read."""
    turns: list[int | None] = field(default_factory=list)
    """None: not reported (the record has no such field), never 0; so tool_calls and
    duration_s."""
    tool_calls: list[int | None] = field(default_factory=list)
    duration_s: list[float | None] = field(default_factory=list)
    flags: list[tuple[str, ...]] = field(default_factory=list)
    endpoint: list[str | None] = field(default_factory=list)
    scenario: list[str] = field(default_factory=list)
    pricing_updated: list[dt.date | str | None] = field(default_factory=list)
    """The runner's price-table date the record carries (copeca's: None)."""
    started_at: list[dt.datetime | str | None] = field(default_factory=list)
    """When the run started (copeca's `timestamp`, as text)."""
    design: list[Any] = field(default_factory=list)
    """The statistical design each record names (a struct with `thresholds` and
    `adaptive`; None: none, an older record or copeca's); see `records._design`."""

    def __len__(self) -> int:
        return len(self.run_id)


class _Tokens(msgspec.Struct, gc=False):
    input: NonNeg = 0
    output: NonNeg = 0
    cache_write: NonNeg = 0
    cache_read: NonNeg = 0


_Digest = Annotated[str, msgspec.Meta(pattern=DIGEST_PATTERN)]


class _Design(msgspec.Struct, gc=False, frozen=True):
    """A record's `design` (RunRecord's `Design`)."""

    thresholds: _Digest
    adaptive: _Digest | None = None


class _Ours(msgspec.Struct, gc=False):
    """A RunRecord line: the fields the report reads (the rest is skipped unparsed).

    Untracked by the garbage collector, as `_Copeca` (its one container, `flags`, holds
    only text: no cycle)."""

    run_id: str
    task_id: str
    arm: str
    model: str
    outcome: Outcome
    scenario: str = ""
    runner: str = ""
    cli_version: str | None = None
    repetition: NonNeg = 0
    control: bool = False
    category: str = ""
    language: str = ""
    correct: bool | msgspec.UnsetType = msgspec.UNSET
    cost_usd: NonNegFloat | msgspec.UnsetType | None = msgspec.UNSET
    """Unset (as `correct`): `read_rows` decides (unknown when the run reached the agent,
    else 0)."""
    cost_source: str | None = None
    cost_unknown_reason: str | None = None
    served_model: str | None = None
    tokens: _Tokens = msgspec.field(default_factory=_Tokens)
    turns: NonNeg | msgspec.UnsetType = msgspec.UNSET
    """Unset: not reported (None in the columns, as `read_rows` leaves the key out)."""
    tool_calls: NonNeg | msgspec.UnsetType = msgspec.UNSET
    duration_s: NonNegFloat | msgspec.UnsetType = msgspec.UNSET
    tool_adopted: bool | None = None
    flags: list[str] = []
    retrieval: msgspec.Raw = msgspec.Raw(b"null")
    endpoint: Endpoint | None = None
    pricing_updated: dt.date | None = None
    started_at: dt.datetime | None = None
    design: msgspec.Raw = msgspec.Raw(b"null")
    """_Design | None, decoded once per distinct text (`_designs`): a file repeats one."""
    error: str | None = None
    """Read for `died_flags` only (an older resume's record of a harness that died)."""


class _Meta(msgspec.Struct, gc=False):
    vendor_cost_divergence_warning: Any = None


class _Copeca(msgspec.Struct, gc=False):
    """A copeca result line: the fields `from_copeca` reads, with the types copeca writes.

    Untracked by the garbage collector (`gc=False`: it holds no container, so no cycle):
    100,000 tracked structs made every collection walk them, a third of the decode time.
    `adversarial_flags` and `metadata` stay raw JSON, decoded (and so checked) once per
    distinct text by `_extras`: a file repeats a handful of them."""

    task: str = ""
    mode: str = ""
    model: str = ""
    runner: str | None = None
    repetition: Annotated[int, msgspec.Meta(le=MAX_COUNT)] | None = None
    """Negative: `_sound` sends the file to read_rows, which names it."""
    category: str | None = None
    language: str | None = None
    correct: bool | None = None
    total_cost_usd: float | None = None
    cost_source: str | None = None
    input_tokens: NonNeg | None = None
    output_tokens: NonNeg | None = None
    cache_creation_tokens: NonNeg | None = None
    cache_read_tokens: NonNeg | None = None
    duration_ms: NonNegFloat | None = None
    num_turns: NonNeg | None = None
    num_tool_calls: NonNeg | None = None
    tool_adopted: bool | None = None
    error: str | None = None
    exit_code: int | None = None
    adversarial_flags: msgspec.Raw = msgspec.Raw(b"null")
    """dict[str, bool | None] | None (`_extras`)."""
    metadata: msgspec.Raw = msgspec.Raw(b"null")
    """_Meta | None (`_extras`)."""
    control: bool | msgspec.UnsetType | None = msgspec.UNSET
    cli_version: str | None = None
    timestamp: str | None = None


_SOURCES = {"vendor": "vendor", "modeled": "computed"}


def read_columns(path: Path, meanwhile: Callable[[], object] | None = None
                 ) -> tuple[Columns, Format, list[str]] | None:
    """The file's records as columns, its format and the reader's notes (as `read_rows`
    gives them); None when the strict decode is not sure (then use `read_rows`).

    A large file is read by two processes (`_split`): a forked helper decodes its second
    part while this process runs `meanwhile` (the caller's imports, say) and then decodes
    the first; the helper's columns come back pickled and are appended, so the columns are
    those one process reading the whole file gives."""
    try:
        handle = path.open("rb")
    except OSError:
        return None
    with handle, _uncollected():
        read = _read(handle, path, meanwhile)
    if read is None:
        return None
    cols, fmt, control_seen, _ = read
    return None if cols is None else _checked(cols, fmt, control_seen)


def _checked(cols: Columns, fmt: Format, control_seen: bool
             ) -> tuple[Columns, Format, list[str]] | None:
    """The columns of the whole file with the reader's notes, repeated copeca cells
    renumbered; None when `read_rows` must decide (a run id twice, a value RunRecord
    refuses)."""
    notes: list[str] = []
    unique = len(set(cols.run_id)) == len(cols)
    if fmt == "copeca":
        # a copeca run id is made of its cell: with every id once, no cell repeats and
        # there is nothing to renumber
        notes = copeca_messages(len(cols), 0 if unique else _repeats(cols), control_seen,
                                any(cols.cli_version))
        unique = unique or len(set(cols.run_id)) == len(cols)
    if not unique:
        return None  # a retried or repeated run id: read_rows checks and resolves it
    if not _sound(cols):
        return None
    return cols, fmt, notes


def read_coded(path: Path, meanwhile: Callable[[], object] | None = None
               ) -> tuple[list[Coded], Format, list[str]] | None:
    """`read_columns` for the report's table: the same records, checked the same way, as
    the table's coded parts (`code`) in file order, one per reading process. The helper
    codes its own part before sending it, so this process neither unpickles its lists
    nor codes its rows; this process codes its own part before it waits for the helper's.
    None when `read_columns` gives None."""
    try:
        handle = path.open("rb")
    except OSError:
        return None
    with handle, _uncollected():
        read = _read(handle, path, meanwhile, coded=True)
        if read is None:
            return None
        cols, fmt, control_seen, tail = read
        if tail is None:
            checked = None if cols is None else _checked(cols, fmt, control_seen)
            return None if checked is None else ([code(checked[0])], fmt, checked[2])
        head, coded, _ = tail
        if len(set(chain(head.run_id_all, coded.run_id_all))) != head.records + coded.records:
            # a run id twice (a retry, copeca's repeated cells): the file read again here
            # as lists, and checked as one (rare)
            handle.seek(0)
            whole = _read_part(handle, fmt, path.stem, None)
            if whole is None or whole.tail or not isinstance(whole.cols, Columns):
                return None
            checked = _checked(whole.cols, fmt, control_seen)
            return None if checked is None else ([code(checked[0])], fmt, checked[2])
        notes = (copeca_messages(head.records + coded.records, 0, control_seen,
                                 head.versions or coded.versions)
                 if fmt == "copeca" else [])
        if not _sound_parts([head, coded]):
            return None
        return [head, coded], fmt, notes


@contextlib.contextmanager
def _uncollected() -> Iterator[None]:
    """No cyclic garbage collection while the columns fill: they hold no cycle, and the
    collections the new tuples and lists set off walked every one of them again (0.07–0.1 s
    of 100k copeca records)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


@dataclass
class _Part:
    """The columns of a stretch of the file's lines."""

    cols: Columns | Coded
    """Coded: read by `read_coded` (each block coded as it is read)."""
    control_seen: bool
    """Some record has copeca's `control` key."""
    tail: bool
    """Something other than blank space follows the stretch's last newline."""


def _read(handle: BufferedReader, path: Path, meanwhile: Callable[[], object] | None,
          coded: bool = False
          ) -> tuple[Columns | None, Format, bool, tuple[Coded, Coded, int] | None] | None:
    """The columns, the format and whether some record has copeca's `control`; with
    `coded`, when a helper read part of the file: no columns, but this process's part and
    the helper's, each coded as it was read (`_read_part`), and the offset the helper's
    part starts at."""
    fmt = _format(handle.read(_FIRST))
    size = os.fstat(handle.fileno()).st_size
    split = _split(handle, size)
    helper = None
    if split is not None:
        try:
            helper = Forked(functools.partial(_help, path, split, fmt, coded))
        except OSError:  # no process or pipe to be had: this process reads it all
            split = None
    try:
        if meanwhile is not None:
            meanwhile()
        handle.seek(0)
        both = coded and helper is not None
        part = _read_part(handle, fmt, path.stem, split, coded=both)
        if part is None or part.tail:
            return None
        if helper is not None and split is not None:
            rest = _unpickled(helper.output())
            if rest is None or rest.tail:
                return None
            control_seen = part.control_seen or rest.control_seen
            if isinstance(part.cols, Coded) and isinstance(rest.cols, Coded):
                return None, fmt, control_seen, (part.cols, rest.cols, split)
            if not isinstance(part.cols, Columns) or not isinstance(rest.cols, Columns):
                return None
            for name, values in vars(rest.cols).items():
                getattr(part.cols, name).extend(values)
        if not isinstance(part.cols, Columns):
            return None
        return part.cols, fmt, part.control_seen, None
    finally:
        if helper is not None:
            helper.stop()


def _read_part(handle: BufferedReader, fmt: Format, stem: str, limit: int | None,
               coded: bool = False) -> _Part | None:
    """The lines from the handle's position, up to `limit` bytes (None: to the end); None
    when the strict decode refuses one. `coded`: each block's columns coded (`code`) as
    soon as they are read, while their values are still in the cache, and the blocks'
    codes joined (`_joined`): the part holds no list of its rows' texts."""
    cols = Columns()
    parts: list[Coded] = []
    control_seen = False
    blocks = _Blocks(handle, limit)
    for block in blocks:
        try:
            _utf8(block)
            if coded:
                cols = Columns()
            if fmt == "copeca":
                control_seen |= _add_copeca(cols, _COPECA.decode_lines(block), stem)
            elif not _add_ours(cols, _OURS.decode_lines(block)):
                return None
            if coded:
                parts.append(code(cols))
        except (msgspec.DecodeError, UnicodeDecodeError):  # malformed JSON or UTF-8, or a
            # ValidationError (a DecodeError)
            return None
    if blocks.too_long:
        return None
    return _Part(_joined(parts) if coded else cols, control_seen, bool(blocks.tail.strip()))


def _utf8(block: memoryview) -> None:
    """Raises UnicodeDecodeError unless the block is UTF-8. msgspec checks the strings it
    decodes, but not the keys and values it skips: a line with a broken key or answer text
    would pass here and fail the validating reader, which reads everything. A buffer all
    ASCII (the usual file: copeca writes JSON escapes) is checked at memory speed."""
    buffer = block.obj
    if not (isinstance(buffer, bytearray) and buffer.isascii()):
        codecs.utf_8_decode(block, "strict", True)


PARALLEL_BYTES = 1 << 24
"""Files from this size are read by two processes (`_split`); below it the fork and the
transfer of the helper's columns cost more than they save."""
_SHARE = 0.42
"""The part of the file this process reads; the helper reads the rest and also pickles its
columns, which this process unpickles. This process also imports the report's modules
first (about 0.15 s): at 0.42, with both parts coded as they are read (`read_coded`), each
process spent about 0.36 s of CPU reading the 100k-record copeca file (0.40 s against 0.34 s
at 0.45)."""


def _split(handle: BufferedReader, size: int) -> int | None:
    """Where the helper's part starts (just after a newline), or None to read the file in
    this one process: a small file, one CPU, a platform where fork is unsafe (anything but
    Linux), or other threads running (a forked child inherits their locks held)."""
    if size < PARALLEL_BYTES or not can_fork():
        return None
    handle.seek(int(size * _SHARE))
    found = handle.read(_FIRST).find(b"\n")
    return None if found < 0 else int(size * _SHARE) + found + 1


def _help(path: Path, start: int, fmt: Format, coded: bool = False) -> bytes:
    """The helper's work (in the forked child): its part from `start` to the end, pickled
    (None pickled when its decode refused a line), equal values shared first; with
    `coded`, each block coded for the table as it is read (`_read_part`)."""
    with path.open("rb") as handle:
        handle.seek(start)
        part = _read_part(handle, fmt, path.stem, None, coded=coded)
    if part is not None and isinstance(part.cols, Columns):
        _share_values(part.cols)
    return pickle.dumps(part, protocol=pickle.HIGHEST_PROTOCOL)


def _unpickled(data: bytes | None) -> _Part | None:
    """The helper's part; None when it refused a line or died (its bytes cut short)."""
    if data is None:
        return None
    try:
        part = pickle.loads(data)
    except Exception:  # cut short: it died, and something else reaped it
        return None
    return part if isinstance(part, _Part) else None


_REPEATING = ("task_id", "arm", "model", "served_model", "runner", "cli_version", "category",
              "language", "outcome", "cost_source", "cost_unknown_reason", "tokens", "flags",
              "endpoint", "scenario", "design")
"""The columns with few distinct values."""


def _share_values(cols: Columns) -> None:
    """Equal values of a repeating column made one object: pickle then writes each distinct
    value once and refers to it after (a third of the transfer's time)."""
    for name in _REPEATING:
        values = getattr(cols, name)
        if values and values.count(values[0]) == len(values):  # one value (`[None] * n`)
            setattr(cols, name, [values[0]] * len(values))
            continue
        seen: dict[Any, Any] = {}
        setattr(cols, name, [seen.setdefault(v, v) for v in values])


class _Blocks:
    """The file's whole lines, a block at a time, read into one reused buffer (no copy per
    block); after the last, `tail` holds what followed the last newline. `limit`: read no
    more than this many bytes."""

    def __init__(self, handle: BufferedReader, limit: int | None = None) -> None:
        self._handle = handle
        self._left = limit
        self.tail = b""
        self.too_long = False
        """A line longer than MAX_LINE_BYTES was met: the blocks stopped before it."""

    def __iter__(self) -> Iterator[memoryview]:
        buf = bytearray(_BLOCK)
        filled = 0  # bytes at the front: the unfinished line carried over
        while True:
            if filled == len(buf):  # one line longer than the buffer: a larger one
                if filled >= MAX_LINE_BYTES:  # no newline in as many: read_rows names it
                    self.too_long = True
                    return
                grown = bytearray(2 * len(buf))
                grown[:filled] = buf
                buf = grown
            room = memoryview(buf)[filled:]
            if self._left is not None:
                room = room[:self._left]
            read = self._handle.readinto(room)
            if not read:
                break
            if self._left is not None:
                self._left -= read
            filled += read
            end = buf.rfind(b"\n", 0, filled) + 1
            if end:
                yield memoryview(buf)[:end]
                buf[:filled - end] = buf[end:filled]
                filled -= end
        self.tail = bytes(buf[:filled])


def _format(data: bytes) -> Format:
    """The format of the first non-blank line of the file's first bytes."""
    start = len(data) - len(data.lstrip())
    line = data[start:].split(b"\n", 1)[0]
    try:
        first = msgspec.json.decode(line)
    except msgspec.DecodeError:
        return "copeca-action"
    return detect_format(first) if isinstance(first, dict) else "copeca-action"


_FIRST = 1 << 20
"""Bytes searched for the first line (longer: the format defaults to ours, and a copeca file
then fails the strict decode and goes to read_rows)."""


def _add_ours(cols: Columns, rows: list[_Ours]) -> bool:
    """Appends the rows; False when one carries retrieval metrics (read_rows builds them)
    or has no `cost_usd` or `correct` (read_rows decides what that means)."""
    cost = [r.cost_usd for r in rows]
    correct = [r.correct for r in rows]
    if (msgspec.UNSET in cost or msgspec.UNSET in correct
            or any(r.retrieval != _NULL for r in rows)):
        return False
    cols.scenario += [r.scenario for r in rows]
    cols.run_id += [r.run_id for r in rows]
    cols.task_id += [r.task_id for r in rows]
    cols.arm += [r.arm for r in rows]
    cols.model += [r.model for r in rows]
    cols.served_model += [r.served_model for r in rows]
    cols.runner += [r.runner for r in rows]
    cols.cli_version += [r.cli_version for r in rows]
    cols.category += [r.category for r in rows]
    cols.language += [r.language for r in rows]
    cols.outcome += [r.outcome for r in rows]
    cols.correct += cast(list[bool], correct)
    cols.cost_usd += cast(list[float | None], cost)
    cols.cost_source += [r.cost_source for r in rows]
    cols.cost_unknown_reason += [r.cost_unknown_reason for r in rows]
    cols.control += [r.control for r in rows]
    cols.tool_adopted += [r.tool_adopted for r in rows]
    cols.repetition += [r.repetition for r in rows]
    cols.tokens += [(t.input, t.output, t.cache_write, t.cache_read)
                    for t in (r.tokens for r in rows)]
    cols.turns += _reported([r.turns for r in rows])
    cols.tool_calls += _reported([r.tool_calls for r in rows])
    cols.duration_s += _reported([r.duration_s for r in rows])
    cols.flags += [tuple(r.flags if r.error != KILLED else died_flags(r.outcome, r.error, r.flags))
                   for r in rows]
    cols.endpoint += [r.endpoint for r in rows]
    cols.pricing_updated += [r.pricing_updated for r in rows]
    cols.started_at += [r.started_at for r in rows]
    cols.design += _designs([r.design for r in rows])
    return True


def _designs(raws: list[msgspec.Raw]) -> list[_Design | None]:
    """Each row's design, decoded once per distinct text (a ValidationError sends the file
    to `read_rows`, which names the line): every row of a run names the same one, so the
    usual block is one comparison per row and one decode."""
    last = raws[-1] if raws else _NULL
    if raws.count(last) == len(raws):
        return [_DESIGN.decode(last)] * len(raws)
    seen: dict[bytes, _Design | None] = {}
    out = []
    for raw in raws:
        key = bytes(raw)
        out.append(seen[key] if key in seen else seen.setdefault(key, _DESIGN.decode(key)))
    return out


_NULL = msgspec.Raw(b"null")
_T = TypeVar("_T")


def _reported(values: list[_T | msgspec.UnsetType]) -> list[_T | None]:
    """The values with each one a record left out (unset) as None: not reported."""
    if msgspec.UNSET not in values:  # every record says (the usual file): no pass per row
        return cast(list[_T | None], values)
    return [None if v is msgspec.UNSET else v for v in values]


def _add_copeca(cols: Columns, rows: list[_Copeca], stem: str) -> bool:
    """Appends the rows mapped as `from_copeca` maps them; True when one has `control`.

    One pass per column, no call per row (`_extras` reads the flags)."""
    n = len(rows)
    flags, timed_out = _extras(rows)
    cost = [r.total_cost_usd for r in rows]
    # a $0 that is no price (`unpriced`): its cost is unknown, its outcome unchanged
    free = ([_copeca.unpriced(c, r.cost_source, (r.input_tokens, r.output_tokens,
                                                 r.cache_creation_tokens, r.cache_read_tokens))
             for r, c in zip(rows, cost, strict=True)] if 0 in cost else [False] * n)
    reps = [r.repetition or 0 for r in rows]
    task = [r.task for r in rows]
    arm = [r.mode for r in rows]
    model = [r.model for r in rows]
    control = [r.control for r in rows]
    cols.scenario += [stem] * n
    cols.run_id += [f"copeca:{t}:{a}:{m}:{rep}"
                    for t, a, m, rep in zip(task, arm, model, reps, strict=True)]
    cols.task_id += task
    cols.arm += arm
    cols.model += model
    cols.served_model += [None] * n
    cols.runner += [r.runner or "" for r in rows]
    cols.cli_version += [r.cli_version or None for r in rows]
    cols.category += [r.category or "" for r in rows]
    cols.language += [r.language or "" for r in rows]
    outcome = ["infra_error" if c is None else "timeout" if timeout
               else "agent_error" if r.error or r.exit_code else "ok"
               for r, c, timeout in zip(rows, cost, timed_out, strict=True)]
    graded = [r.correct for r in rows]
    if None in graded and any(g is None and o == "ok" for g, o in zip(graded, outcome,
                                                                        strict=True)):
        # a run that ended ok with no grade: read_rows names the line (`from_copeca`)
        raise msgspec.ValidationError("correct")
    cols.outcome += outcome
    cols.correct += [g is True for g in graded]
    if any(free):
        cols.cost_usd += [None if f else c for c, f in zip(cost, free, strict=True)]
        cols.cost_source += ["none" if f else _SOURCES.get(str(r.cost_source), "none")
                             for r, f in zip(rows, free, strict=True)]
        cols.cost_unknown_reason += [_copeca.UNPRICED if f else None if c is not None
                                     else _copeca.NO_COST
                                     for c, f in zip(cost, free, strict=True)]
    else:
        cols.cost_usd += cost
        cols.cost_source += [_SOURCES.get(str(r.cost_source), "none") for r in rows]
        cols.cost_unknown_reason += [None if c is not None else _copeca.NO_COST for c in cost]
    cols.control += [c is True for c in control]
    cols.tool_adopted += [r.tool_adopted for r in rows]
    cols.repetition += reps
    cols.tokens += [(r.input_tokens or 0, r.output_tokens or 0, r.cache_creation_tokens or 0,
                     r.cache_read_tokens or 0) for r in rows]
    cols.turns += [r.num_turns for r in rows]  # None: not reported (as `from_copeca`)
    cols.tool_calls += [r.num_tool_calls for r in rows]
    cols.duration_s += [None if r.duration_ms is None else r.duration_ms / 1000 for r in rows]
    cols.flags += flags
    cols.endpoint += [None] * n
    cols.pricing_updated += [None] * n
    cols.started_at += [r.timestamp for r in rows]
    cols.design += [None] * n
    return control.count(msgspec.UNSET) < n


def _extras(rows: list[_Copeca]) -> tuple[list[tuple[str, ...]], list[bool]]:
    """Each row's flags and whether it timed out, from its raw `adversarial_flags` and
    `metadata` texts, decoded once per distinct pair (a ValidationError there sends the file
    to `read_rows`, as a wrong type anywhere does).

    A file repeats a handful of pairs, mostly row after row: a row equal to the one before
    takes its result without a look-up (Raw is not hashable, and copying its bytes out cost
    more than the decode they save). The texts are read here, before the reader's buffer
    they point into is reused."""
    flags: list[tuple[str, ...]] = []
    timed_out: list[bool] = []
    seen: dict[tuple[bytes, bytes], tuple[tuple[str, ...], bool]] = {}
    last_flags = last_meta = None
    found: tuple[tuple[str, ...], bool] = ((), False)
    for r in rows:
        if r.adversarial_flags != last_flags or r.metadata != last_meta:
            last_flags, last_meta = r.adversarial_flags, r.metadata
            key = (bytes(last_flags), bytes(last_meta))
            found = seen.get(key) or seen.setdefault(key, _decode_extras(*key))
        flags.append(found[0])
        timed_out.append(found[1])
    return flags, timed_out


def _decode_extras(adversarial: bytes, metadata: bytes) -> tuple[tuple[str, ...], bool]:
    """A row's flags (those copeca's `adversarial_flags` sets, then `cost_divergence` when
    its `metadata` warns of one) and whether `timeout` is set."""
    own = _FLAGS.decode(adversarial) or {}
    flags = [k for k, v in own.items() if v]
    meta = _META.decode(metadata)
    if meta is not None and meta.vendor_cost_divergence_warning:
        flags.append("cost_divergence")
    return tuple(flags), bool(own.get("timeout"))


def _repeats(cols: Columns) -> int:
    """Renumber repeated copeca cells in place (see `renumber`); how many there were."""
    reps, count = renumber(cols.task_id, cols.arm, cols.model, cols.repetition)
    if count:
        cols.run_id = [rid if new == old else f"copeca:{t}:{a}:{m}:{new}"
                       for rid, t, a, m, old, new in zip(cols.run_id, cols.task_id, cols.arm,
                                                          cols.model, cols.repetition, reps,
                                                          strict=True)]
        cols.repetition = reps
    return count


def _sound(cols: Columns) -> bool:
    """What RunRecord would refuse and the strict types let through: a negative or
    non-finite cost, a non-finite duration, a negative repetition (copeca's)."""
    known: list[float] = ([c for c in cols.cost_usd if c is not None]
                          if None in cols.cost_usd else cast(list[float], cols.cost_usd))
    # a NaN or an infinity makes the sum non-finite (so does an overflow of huge costs: then
    # read_rows decides); with the sum finite, min is exact
    durations: list[float] = ([d for d in cols.duration_s if d is not None]
                              if None in cols.duration_s else cast(list[float], cols.duration_s))
    return (math.isfinite(sum(known)) and min(known, default=0.0) >= 0
            and math.isfinite(sum(durations))
            and min(cols.repetition, default=0) >= 0)


def _sound_parts(parts: list[Coded]) -> bool:
    """`_sound` of the records of the coded parts, in file order: the sums go on from one
    part to the next, as the sums of the whole file's lists."""
    costs: float = 0
    durations: float = 0
    for part in parts:
        costs = sum(part.known_costs.tolist(), costs)
        durations = sum(part.known_durations.tolist(), durations)
    return (math.isfinite(costs) and min(p.least_cost for p in parts) >= 0
            and math.isfinite(durations) and min(p.least_repetition for p in parts) >= 0)


@dataclass
class Coded:
    """A stretch of the file's records as the report's table stores them (`code`): the
    rows it reads (all but counted runs of unknown cost: `account_columns`) as label names
    and codes and typed arrays, and the rest as the sums and counts the table and the
    spend account add up. What a reading helper sends instead of its lists: the process
    that builds the table then has no row of it to unpickle or code, and arrays pickle as
    their bytes. Kept free of numpy (the helper never imports it)."""

    records: int
    """Records in the stretch, the table's rows and the others."""
    run_id_all: list[str]
    """Every record's run id (each must be unique in the whole file)."""
    run_id: list[str]
    """The rows' run ids."""
    labels: dict[str, tuple[tuple[str, ...], array[int]]]
    """Column → its rows' distinct names and each row's index among them (`code` sorts
    them, as `Labels.of`; `_joined` keeps the order they were first met in)."""
    cost_source_none: bool
    """A row's cost source was None: the labels are of the text `v or "none"`."""
    served: tuple[tuple[str, ...], array[int]] | None
    """The labels of `served_model or model`; None when no row names a served model."""
    numbers: dict[str, array[Any]]
    """outcome (codes into OUTCOMES), correct, cost (NaN: unknown), control, adopted (−1,
    0, 1), repetition, tokens (4 a row), turns, tool_calls (−1: not reported), duration
    (NaN: not reported)."""
    unreported: frozenset[str]
    flags: list[tuple[str, ...]]
    endpoints: Counter[str | None]
    scenario: str | None
    """The first row's scenario (None: no row)."""
    pricing: Iterable[tuple[Any, Any]] | None
    """The distinct (runner, pricing_updated) pairs; None when no record carries a date."""
    started: Iterable[Any]
    """The distinct `started_at` values."""
    outside_costs: list[float | None]
    """The costs of the records that never reached the agent, in file order."""
    unknown: list[tuple[str, str, str, str]]
    """The counted records of unknown cost: run id, model (served), arm, reason."""
    sources: Counter[str | None]
    """Cost sources of the counted rows of known cost."""
    flag_sets: Counter[tuple[str, ...]]
    """Every record's flags, counted."""
    versions: bool
    """Some record names its CLI version."""
    known_costs: array[float]
    """Every known cost, in file order (the reader's checks)."""
    least_cost: float
    known_durations: array[float]
    least_repetition: int
    design: Any = None
    """The design the stretch's last record naming one names (`Columns.design`); None:
    none does."""


_OUTCOME_CODE: dict[str, int] = {name: i for i, name in enumerate(OUTCOMES)}
_ADOPTED = {None: -1, False: 0, True: 1}
LABELLED = ("task_id", "arm", "model", "category", "language", "runner")
"""The text columns coded as they are (`cli_version` is coded with None as '')."""


def count_values(values: list[Any]) -> Counter[Any]:
    """Counter(values), without a hash per row when every value is the first (a C-level
    count: the usual cost source, the usual flags)."""
    if values and values.count(values[0]) == len(values):
        return Counter({values[0]: len(values)})
    return Counter(values)


def code(c: Columns) -> Coded:
    """The columns as `Coded`: the rows `account_columns` keeps coded as `_table` codes them
    (the same names, codes and numbers), and what the spend account and the reader's
    checks need of all the records."""
    n = len(c)
    outside = ([i for i, outcome in enumerate(c.outcome) if outcome in NOT_REACHED]
               if not set(c.outcome).isdisjoint(NOT_REACHED) else [])
    skip = set(outside)
    unknown = ([i for i, cost in enumerate(c.cost_usd) if cost is None and i not in skip]
               if None in c.cost_usd else [])
    sources = count_values(c.cost_source)
    if outside or unknown:
        sources.subtract(c.cost_source[i] for i in (*outside, *unknown))
    rows = c
    if unknown:
        gone = set(unknown)
        keep = [i for i in range(n) if i not in gone]
        rows = Columns(**{f: [values[i] for i in keep] for f, values in vars(c).items()})
    known = ([x for x in c.cost_usd if x is not None] if None in c.cost_usd
             else cast(list[float], c.cost_usd))
    durations = ([x for x in c.duration_s if x is not None] if None in c.duration_s
                 else cast(list[float], c.duration_s))
    source = rows.cost_source
    none_source = None in source
    return Coded(
        records=n, run_id_all=c.run_id, run_id=rows.run_id,
        labels={**{name: _labels(getattr(rows, name)) for name in LABELLED},
                "cli_version": _labels([v or "" for v in rows.cli_version]),
                "cost_source": _labels([v or "none" for v in source] if none_source
                                       else cast(list[str], source))},
        cost_source_none=none_source,
        served=(None if rows.served_model.count(None) == len(rows) else
                _labels([s or m for s, m in zip(rows.served_model, rows.model, strict=True)])),
        numbers=_numbers(rows),
        unreported=frozenset(name for name, values in (("turns", rows.turns),
                                                       ("tool_calls", rows.tool_calls),
                                                       ("duration", rows.duration_s))
                             if None in values),
        flags=rows.flags, endpoints=count_values(rows.endpoint),
        scenario=rows.scenario[0] if len(rows) else None,
        pricing=(None if c.pricing_updated.count(None) == n
                 else _distinct(zip(c.runner, c.pricing_updated, strict=True))),
        started=_distinct(c.started_at),
        outside_costs=[c.cost_usd[i] for i in outside],
        unknown=[(c.run_id[i], str(c.served_model[i] or c.model[i]), c.arm[i],
                  str(c.cost_unknown_reason[i] or "no reason given")) for i in unknown],
        sources=sources, flag_sets=count_values(c.flags), versions=any(c.cli_version),
        known_costs=array("d", known), least_cost=min(known, default=0.0),
        known_durations=array("d", durations), least_repetition=min(c.repetition, default=0),
        design=next((d for d in reversed(c.design) if d is not None), None))


def _joined(parts: list[Coded]) -> Coded:
    """The coded parts of consecutive stretches as one: what `code` gives for their
    records read as one stretch, but that each label's names come in the order they were
    first met, not sorted (`table_from_coded` sorts them)."""
    if len(parts) <= 1:
        return parts[0] if parts else code(Columns())
    none_source = any(p.cost_source_none for p in parts)  # then every source is `v or "none"`
    labels = {name: _union([p.labels[name] for p in parts])
              for name in (*LABELLED, "cli_version")}
    labels["cost_source"] = _union([
        (tuple(n or "none" for n in names), codes) if none_source and not p.cost_source_none
        else (names, codes) for p in parts for names, codes in (p.labels["cost_source"],)])
    run_id_all = list(chain.from_iterable(p.run_id_all for p in parts))
    every = all(p.run_id is p.run_id_all for p in parts)  # no run of unknown cost: one list
    endpoints: Counter[str | None] = Counter()
    sources: Counter[str | None] = Counter()
    flag_sets: Counter[tuple[str, ...]] = Counter()
    for part in parts:
        endpoints.update(part.endpoints)
        sources.update(part.sources)
        flag_sets.update(part.flag_sets)
    return Coded(
        records=sum(p.records for p in parts), run_id_all=run_id_all,
        run_id=run_id_all if every else list(chain.from_iterable(p.run_id for p in parts)),
        labels=labels, cost_source_none=none_source,
        served=(None if all(p.served is None for p in parts)
                else _union([p.served or p.labels["model"] for p in parts])),
        numbers={name: _arrays([p.numbers[name] for p in parts]) for name in parts[0].numbers},
        unreported=frozenset().union(*(p.unreported for p in parts)),
        flags=list(chain.from_iterable(p.flags for p in parts)), endpoints=endpoints,
        scenario=next((p.scenario for p in parts if p.scenario is not None), None),
        pricing=(None if all(p.pricing is None for p in parts) else
                 _distinct(chain.from_iterable(p.pricing for p in parts if p.pricing))),
        started=_distinct(chain.from_iterable(p.started for p in parts)),
        outside_costs=list(chain.from_iterable(p.outside_costs for p in parts)),
        unknown=list(chain.from_iterable(p.unknown for p in parts)),
        sources=sources, flag_sets=flag_sets, versions=any(p.versions for p in parts),
        known_costs=_arrays([p.known_costs for p in parts]),
        least_cost=min(p.least_cost for p in parts),
        known_durations=_arrays([p.known_durations for p in parts]),
        least_repetition=min(p.least_repetition for p in parts),
        design=next((p.design for p in reversed(parts) if p.design is not None), None))


def _union(pieces: list[tuple[tuple[str, ...], array[int]]]
           ) -> tuple[tuple[str, ...], array[int]]:
    """One label column of consecutive stretches: the names in the order first met, each
    stretch's codes mapped to them (as they are where its names come in that order)."""
    index: dict[str, int] = {}
    codes = array("q")
    for names, part in pieces:
        lut = [index.setdefault(name, len(index)) for name in names]
        if lut == list(range(len(lut))):
            codes.extend(part)
        else:
            codes.extend(array("q", map(lut.__getitem__, part)))
    return tuple(index), codes


def _arrays(pieces: list[array[Any]]) -> array[Any]:
    out = array(pieces[0].typecode)
    for piece in pieces:
        out.extend(piece)
    return out


def _labels(values: list[str]) -> tuple[tuple[str, ...], array[int]]:
    """Sorted distinct texts and each value's index among them (`Labels.of` of text)."""
    if values and values.count(values[0]) == len(values):
        return (values[0],), array("q", bytes(8 * len(values)))
    names = sorted(dict.fromkeys(values))
    index = {name: i for i, name in enumerate(names)}
    return tuple(names), array("q", map(index.__getitem__, values))


def _numbers(c: Columns) -> dict[str, array[Any]]:
    """The rows' numeric columns as `_table` stores them."""
    try:  # the usual values: one C-level pass
        adopted = array("b", map(_ADOPTED.__getitem__, c.tool_adopted))
    except (KeyError, TypeError):
        adopted = array("b", [-1 if a is None else int(bool(a)) for a in c.tool_adopted])
    outcome = c.outcome
    if outcome and outcome.count(outcome[0]) == len(outcome):  # every run ok, say: one look-up
        codes = array("q", [_OUTCOME_CODE[outcome[0]]]) * len(outcome)
    else:
        codes = array("q", map(_OUTCOME_CODE.__getitem__, outcome))
    return {"outcome": codes,
            "correct": array("b", c.correct),  # bools (the decoders' type)
            "cost": _floats(c.cost_usd), "control": array("b", c.control),
            "adopted": adopted, "repetition": array("q", c.repetition),
            "tokens": array("q", list(chain.from_iterable(c.tokens))),  # (a list first is
            # faster than the array taking the chain's items one by one)
            "turns": _counts(c.turns), "tool_calls": _counts(c.tool_calls),
            "duration": _floats(c.duration_s)}


def _floats(values: list[float | None]) -> array[float]:
    """None as NaN (as numpy's float array of the list)."""
    if None not in values:
        return array("d", cast(list[float], values))
    return array("d", [math.nan if v is None else v for v in values])


def _counts(values: list[int | None]) -> array[int]:
    """None (not reported) as −1."""
    if None not in values:
        return array("q", cast(list[int], values))
    return array("q", [-1 if v is None else v for v in values])


def _distinct(values: Iterable[Any]) -> Iterable[Any]:
    """The values once each when all are hashable (else all of them)."""
    every = list(values)
    try:
        return set(every)
    except TypeError:
        return every


_OURS = msgspec.json.Decoder(_Ours)
_COPECA = msgspec.json.Decoder(_Copeca)
_DESIGN = msgspec.json.Decoder(_Design | None)
_FLAGS = msgspec.json.Decoder(dict[str, bool | None] | None)
_META = msgspec.json.Decoder(_Meta | None)
