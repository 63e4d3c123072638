"""Read results.jsonl fast, in our format or in the format of the `copeca` CLI.

Rows come back as RunRecord-shaped dicts. Each line is checked cheaply (required fields,
types, known outcome); a line that fails is re-validated with RunRecord so the error names
the line and the field exactly. copeca records are mapped field by field (see
docs/methodology.md, "Reading copeca results").
"""

from __future__ import annotations

import datetime as dt
import functools
import itertools
from pathlib import Path
from typing import Annotated, Any, NotRequired, cast

import numpy as np
import pydantic_core
from pydantic import Field, TypeAdapter, ValidationError
from typing_extensions import TypedDict  # pydantic needs it on Python < 3.12

from copeca_action.errors import ConfigError, Problem
from copeca_action.records._copeca import (
    NO_COST,
    UNPRICED,
    Format,
    copeca_messages,
    detect_format,
    renumber,
    unpriced,
)
from copeca_action.records._design import DIGEST_PATTERN
from copeca_action.records._kinds import (
    MAX_COUNT,
    OUTCOMES,
    UNGRADED,
    Endpoint,
    Outcome,
    died_flags,
    missing_cost,
    ungraded,
)
from copeca_action.records._lines import bounded_lines
from copeca_action.records._retrieval import RetrievalSummary

_BOM = b"\xef\xbb\xbf"
_REQUIRED = ("run_id", "task_id", "arm", "model", "outcome")
_OUTCOMES = frozenset(OUTCOMES)




def read_rows(path: Path, notes: list[str] | None = None
              ) -> tuple[list[dict[str, Any]], Format]:
    """Every record of a results file as a RunRecord-shaped dict, and the file's format.
    Streams the file in slices, so memory holds the slim rows, not the file. A truncated
    last line (a crash mid-append: no newline, not JSON) is skipped, as in read_records.
    What the reader had to decide about a copeca file (repeated cells counted as further
    repetitions, fields copeca did not write) is appended to `notes` when given."""
    try:
        handle = path.open("rb")
    except OSError as exc:
        raise ConfigError(f"cannot read results: {exc.strerror}", path) from exc
    with handle:
        lines = ((n, raw) for n, raw in bounded_lines(handle, path) if raw.strip())
        rows: list[dict[str, Any]] = []
        fmt: Format | None = None
        while part := list(itertools.islice(lines, _SLICE)):
            fmt = fmt or detect_format(_first(part[0][1]))
            rows += (_copeca_slice(path, part) if fmt == "copeca"
                     else _slice(path, part))
    if fmt == "copeca":
        found = copeca_notes(rows)
        if notes is not None:
            notes += found
    return rows, fmt or "copeca-action"


def copeca_notes(rows: list[dict[str, Any]]) -> list[str]:
    """Number repeated copeca cells as further repetitions (see `renumber`; the rows'
    `repetition` and `run_id` change in place) and say what the copeca records could not
    tell."""
    reps, repeats = renumber([r["task_id"] for r in rows], [r["arm"] for r in rows],
                             [r["model"] for r in rows], [r["repetition"] for r in rows])
    for row, rep in zip(rows, reps, strict=True):
        if rep != row["repetition"]:
            row["repetition"] = rep
            row["run_id"] = "copeca:{}:{}:{}:{}".format(row["task_id"], row["arm"],
                                                        row["model"], rep)
    return copeca_messages(len(rows), repeats, any("control" in r for r in rows),
                           any(r.get("cli_version") for r in rows))


def _slice(path: Path, part: list[tuple[int, bytes]]) -> list[dict[str, Any]]:
    """One validating parse of many lines, materialising only what is analysed."""
    try:
        return _settled(path, [n for n, _ in part], cast(list[dict[str, Any]], _adapters()[
            0].validate_json(b"[" + b",".join(raw for _, raw in part) + b"]")))
    except ValidationError as exc:
        first = exc.errors()[0]
        if first["type"] != "json_invalid":
            loc = first["loc"]
            field = ".".join(str(p) for p in loc[1:]) or None
            raise ConfigError(Problem(str(path), first["msg"], part[int(loc[0])][0],
                                      field)) from exc
    rows, numbers = [], []
    for number, raw in part:  # a line is not JSON: find it
        row = _parse(path, number, raw)
        if row is not None:
            try:
                rows.append(cast(dict[str, Any], _adapters()[2].validate_python(row)))
            except ValidationError as exc:
                _raise(exc, path, number)
            numbers.append(number)
    return _settled(path, numbers, rows)


def _settled(path: Path, numbers: list[int], rows: list[dict[str, Any]]
             ) -> list[dict[str, Any]]:
    """The rows (of the lines `numbers`) with what a missing field means settled, never by
    a default that would invent a result: a run that reached the agent without `cost_usd`
    has an unknown cost (`missing_cost`, as RunRecord gives it), not $0; a run that ended
    `ok` without `correct` is refused (a grade left out is no wrong answer)."""
    for number, row in zip(numbers, rows, strict=True):
        row.update(missing_cost(row))
        if (error := row.pop("error", None)) is not None:
            row["flags"] = died_flags(row["outcome"], error, row.get("flags", []))
        if ungraded(row):
            raise ConfigError(Problem(str(path), f"missing: {UNGRADED}", number, "correct"))
    return rows


def _copeca_slice(path: Path, part: list[tuple[int, bytes]]) -> list[dict[str, Any]]:
    """copeca lines are large (answer text, tool sequences): parse only the fields read."""
    stem = path.stem
    numbers = [n for n, _ in part]
    try:
        parsed = cast(list[dict[str, Any]], _adapters()[1].validate_json(
            b"[" + b",".join(raw for _, raw in part) + b"]"))
    except ValidationError:  # a line is not JSON or not an object: find it
        kept = [(n, row) for n, raw in part if (row := _parse(path, n, raw)) is not None]
        numbers, parsed = [n for n, _ in kept], [row for _, row in kept]
    slim = [from_copeca(row, stem) for row in parsed]
    if not _quick_ok(slim):
        for number, row in zip(numbers, slim, strict=True):
            _validate(row, path, number)
    return slim


def _parse(path: Path, number: int, raw: bytes) -> dict[str, Any] | None:
    """One line as a dict; None for a truncated final line (no newline)."""
    try:
        row = pydantic_core.from_json(raw)
    except ValueError as exc:
        if not raw.endswith(b"\n"):
            return None
        if raw.startswith(_BOM):
            raise ConfigError(Problem(str(path), "starts with a UTF-8 byte-order mark "
                                      "(expected JSON lines in UTF-8 without one: save the "
                                      "file without a BOM)", number)) from exc
        raise ConfigError(Problem(str(path), f"not JSON: {exc}", number)) from exc
    if not isinstance(row, dict):
        raise ConfigError(Problem(str(path), "expected a JSON object per line", number))
    return row


def _raise(exc: ValidationError, path: Path, number: int,
           names: dict[str, str] | None = None) -> None:
    first = exc.errors()[0]
    field = ".".join(str(p) for p in first["loc"]) or None
    if names and field in names:
        field = names[field]
    raise ConfigError(Problem(str(path), first["msg"], number, field)) from exc


_SLICE = 1024
"""Lines validated per call: large enough to amortise the call, small enough for memory."""


class _Tokens(TypedDict, total=False):
    input: NonNegInt
    output: NonNegInt
    cache_write: NonNegInt
    cache_read: NonNegInt


_Digest = Annotated[str, Field(pattern=DIGEST_PATTERN)]


class _Design(TypedDict):
    thresholds: _Digest
    adaptive: NotRequired[_Digest | None]


class _Row(TypedDict):
    """The fields the analysis reads; the rest of a line is parsed but not kept."""

    run_id: str
    task_id: str
    arm: str
    model: str
    outcome: Outcome
    scenario: NotRequired[str]
    runner: NotRequired[str]
    cli_version: NotRequired[str | None]
    repetition: NotRequired[NonNegInt]
    control: NotRequired[bool]
    category: NotRequired[str]
    language: NotRequired[str]
    correct: NotRequired[bool]
    cost_usd: NotRequired[Annotated[float, Field(ge=0, allow_inf_nan=False)] | None]
    cost_source: NotRequired[str]
    cost_unknown_reason: NotRequired[str | None]
    served_model: NotRequired[str | None]
    tokens: NotRequired[_Tokens]
    turns: NotRequired[NonNegInt]
    tool_calls: NotRequired[NonNegInt]
    duration_s: NotRequired[Annotated[float, Field(ge=0, allow_inf_nan=False)]]
    tool_adopted: NotRequired[bool | None]
    flags: NotRequired[list[str]]
    retrieval: NotRequired[RetrievalSummary | None]
    endpoint: NotRequired[Endpoint | None]
    design: NotRequired[_Design | None]
    pricing_updated: NotRequired[dt.date | None]
    started_at: NotRequired[dt.datetime | None]
    error: NotRequired[str | None]
    """Read for `died_flags` only, then dropped (`_settled`)."""


NonNegInt = Annotated[int, Field(ge=0, le=MAX_COUNT)]


class _CopecaRow(TypedDict, total=False):
    """The fields of a copeca record that from_copeca reads (values as they come)."""

    task: Any
    mode: Any
    model: Any
    runner: Any
    repetition: Any
    category: Any
    language: Any
    correct: Any
    total_cost_usd: Any
    cost_source: Any
    input_tokens: Any
    output_tokens: Any
    cache_creation_tokens: Any
    cache_read_tokens: Any
    duration_ms: Any
    num_turns: Any
    num_tool_calls: Any
    tool_adopted: Any
    error: Any
    exit_code: Any
    adversarial_flags: Any
    metadata: Any
    control: Any
    cli_version: Any
    timestamp: Any


@functools.cache
def _adapters() -> tuple[TypeAdapter[list[_Row]], TypeAdapter[list[_CopecaRow]],
                         TypeAdapter[_Row]]:
    """Built on first use: only `analyze` pays for them, not every command's start-up."""
    return TypeAdapter(list[_Row]), TypeAdapter(list[_CopecaRow]), TypeAdapter(_Row)


def _first(raw: bytes) -> dict[str, Any]:
    try:
        row = pydantic_core.from_json(raw)
    except ValueError:
        return {}
    return row if isinstance(row, dict) else {}


def _quick_ok(rows: list[dict[str, Any]]) -> bool:
    """Column-wise checks of what the analysis reads; any doubt → per-row validation."""
    try:
        for key in _REQUIRED:
            if {type(r[key]) for r in rows} - {str}:
                return False
        if {r["outcome"] for r in rows} - _OUTCOMES:
            return False
        if {type(r.get("correct", False)) for r in rows} - {bool}:
            return False
        counts = [r[key] for key in ("repetition", "turns", "tool_calls") for r in rows
                  if key in r]  # no turns or tool calls: not reported (`from_copeca`)
        counts += [n for r in rows for n in r["tokens"].values()]
        if {type(n) for n in counts} - {int} or not 0 <= min(counts) <= max(counts) <= MAX_COUNT:
            return False
        costs = np.array([c for r in rows if (c := r.get("cost_usd", 0.0)) is not None],
                         dtype=np.float64)
        durations = np.array([r["duration_s"] for r in rows if "duration_s" in r],
                             dtype=np.float64)
    except (KeyError, TypeError, ValueError, OverflowError):
        return False
    return bool(np.all(np.isfinite(costs)) and np.all(costs >= 0)
                and np.all(np.isfinite(durations)) and np.all(durations >= 0))


def _validate(row: dict[str, Any], path: Path, number: int) -> None:
    """A mapped copeca line checked as a RunRecord; a bad one is named by copeca's field."""
    try:
        from copeca_action.records._record import RunRecord  # only to name a bad line

        RunRecord.model_validate({"scenario": "", "task_hash": "", **row})
    except ValidationError as exc:
        _raise(exc, path, number, _COPECA_FIELDS)


_COPECA_FIELDS = {"task_id": "task", "arm": "mode", "cost_usd": "total_cost_usd",
                  "tokens.input": "input_tokens", "tokens.output": "output_tokens",
                  "tokens.cache_write": "cache_creation_tokens",
                  "tokens.cache_read": "cache_read_tokens", "turns": "num_turns",
                  "tool_calls": "num_tool_calls", "duration_s": "duration_ms",
                  "started_at": "timestamp"}
"""Our field → the copeca field it is read from, where the names differ."""


def from_copeca(row: dict[str, Any], scenario: str = "") -> dict[str, Any]:
    """A copeca result record as a RunRecord-shaped dict.

    copeca writes one line per run with `task, mode, model, runner, repetition, correct,
    total_cost_usd, cost_source (vendor|modeled), input/output/cache_creation/cache_read
    _tokens, num_turns, num_tool_calls, duration_ms, tool_adopted, error, exit_code,
    adversarial_flags`. A run that raised in its harness has no `total_cost_usd`: an
    infra error. A `vendor` $0 for a run that used tokens is no price (`unpriced`): an
    unknown cost, never $0. `control` and `cli_version` (copeca writes both since June
    2026) are kept when present; copeca has no task hash. Keys copeca did not write are left out
    (RunRecord's defaults apply), which keeps 100k rows small; so are `num_turns`,
    `num_tool_calls` and `duration_ms` when absent or null: not reported, which the report
    shows as n/a, never as 0 (a reader of the rows tells an absent key from a 0).
    """
    g = row.get
    flags_in = g("adversarial_flags") or {}
    flags = [k for k, v in flags_in.items() if v] if type(flags_in) is dict else []
    meta = g("metadata")
    if meta and meta.get("vendor_cost_divergence_warning"):
        flags.append("cost_divergence")
    cost = g("total_cost_usd")
    tokens = (g("input_tokens"), g("output_tokens"), g("cache_creation_tokens"),
              g("cache_read_tokens"))
    free_by_default = unpriced(cost, g("cost_source"), tokens)
    if cost is None:
        outcome = "infra_error"
    elif flags_in and flags_in.get("timeout"):
        outcome = "timeout"
    elif g("error") or g("exit_code"):
        outcome = "agent_error"
    else:
        outcome = "ok"
    task, mode, model, rep = g("task", ""), g("mode", ""), g("model", ""), g("repetition") or 0
    out = {
        "run_id": f"copeca:{task}:{mode}:{model}:{rep}", "task_id": task, "arm": mode,
        "model": model, "runner": g("runner") or "", "repetition": rep,
        "category": g("category") or "", "language": g("language") or "",
        "outcome": outcome, "correct": correct if type(correct := g("correct")) is bool
        or outcome == "ok" else False,  # a run that ended ok with no grade is refused
        "tokens": {"input": g("input_tokens") or 0, "output": g("output_tokens") or 0,
                   "cache_write": g("cache_creation_tokens") or 0,
                   "cache_read": g("cache_read_tokens") or 0},
        "cost_usd": None if cost is None or free_by_default else float(cost),
        "cost_source": "none" if free_by_default else _SOURCES.get(str(g("cost_source")),
                                                                     "none"),
        "tool_adopted": g("tool_adopted"), "flags": flags,
    }
    for key, field, scale in (("turns", "num_turns", None), ("tool_calls", "num_tool_calls", None),
                              ("duration_s", "duration_ms", 1000)):
        if (value := g(field)) is not None:  # absent or null: not reported, never 0
            out[key] = value if scale is None else value / scale
    if g("control") is True:
        out["control"] = True
    elif "control" in row:
        out["control"] = False
    if isinstance(stamp := g("timestamp"), str) and stamp:
        out["started_at"] = stamp  # as text: the report reads only its date
    version = g("cli_version")
    if isinstance(version, str) and version:
        out["cli_version"] = version
    if cost is None:  # spent or not, nobody knows: never 0
        out["cost_unknown_reason"] = NO_COST
    elif free_by_default:  # spent, at a price nobody had: never 0
        out["cost_unknown_reason"] = UNPRICED
    if scenario:
        out["scenario"] = scenario
    return out


_SOURCES = {"vendor": "vendor", "modeled": "computed"}
