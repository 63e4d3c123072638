"""Records as columns: the one shape the statistics read, built from RunRecords or rows."""

from __future__ import annotations

import dataclasses
import datetime as dt
from collections import Counter
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import chain, compress
from operator import itemgetter
from typing import TYPE_CHECKING, Any, cast

import numpy as np
from numpy.typing import NDArray

from copeca_action.errors import ConfigError
from copeca_action.records import OUTCOMES, RetrievalSummary
from copeca_action.records._columns import Coded, Columns, count_values
from copeca_action.records._design import DesignKey, last_design
from copeca_action.records._kinds import died_flags
from copeca_action.report._spend import (
    SpendAccount,
    account_coded,
    account_columns,
    account_spend,
)

if TYPE_CHECKING:
    from copeca_action.records import RunRecord

OUTCOME_CODE: dict[str, int] = {name: i for i, name in enumerate(OUTCOMES)}
INFRA = OUTCOME_CODE["infra_error"]
NOT_RUN = OUTCOME_CODE["budget_stop"]
AGENT_ERROR = OUTCOME_CODE["agent_error"]
SUPERSEDABLE = ("infra_error", "budget_stop")
"""Outcomes a later record of the same run id replaces: a retry, or a run the budget
stopped and a resumed job ran."""
IDENTITY = ("task_id", "arm", "model", "repetition")
_ADOPTED: dict[object, int] = {None: -1, False: 0, True: 1}
"""`tool_adopted` → `RecordTable.adopted`."""


@dataclass(frozen=True)
class Labels:
    """A categorical column: integer codes into `names`."""

    codes: NDArray[np.int64]
    names: tuple[str, ...]

    @classmethod
    def of(cls, values: Sequence[object]) -> Labels:
        """Codes in sorted-name order; a dict pass (np.unique on objects is slow)."""
        if values and type(values[0]) is str and values.count(values[0]) == len(values):
            # one model, runner or version throughout (the usual case): a C-level count,
            # no hash per row (the reader makes new text objects for each record)
            return cls(np.zeros(len(values), dtype=np.int64), (values[0],))
        try:
            distinct = dict.fromkeys(values)
        except TypeError:  # an unhashable value: named by its text
            distinct = {}
        texts: Sequence[object] = values  # all text already (the usual case): no copy
        if not distinct or not all(type(v) is str for v in distinct):
            texts = [v if isinstance(v, str) else str(v) for v in values]
            distinct = dict.fromkeys(texts)
        names = sorted(cast(dict[str, None], distinct))
        if len(names) == 1:  # one model, runner or version throughout: no look-up per row
            return cls(np.zeros(len(texts), dtype=np.int64), (names[0],))
        index: dict[object, int] = {name: i for i, name in enumerate(names)}
        codes = np.fromiter(map(index.__getitem__, texts), dtype=np.int64, count=len(texts))
        return cls(codes, tuple(names))

    def take(self, mask: NDArray[np.bool_]) -> Labels:
        return Labels(self.codes[mask], self.names)

    def code(self, name: str) -> int:
        return self.names.index(name) if name in self.names else -1


@dataclass(frozen=True)
class RecordTable:
    """One row per run id (the last record of each id wins, so a retry supersedes its
    infra error)."""

    run_id: tuple[str, ...]
    task: Labels
    arm: Labels
    model: Labels
    served: Labels
    """The model that really answered (`served_model` when the record has it, else `model`)."""
    category: Labels
    language: Labels
    cli_version: Labels
    """'' when unknown."""
    runner: Labels
    cost_source: Labels
    """Where each run's cost came from: `vendor`, `computed` or `none` (nothing spent)."""
    outcome: NDArray[np.int64]
    """Index into records.OUTCOMES."""
    correct: NDArray[np.bool_]
    cost: NDArray[np.float64]
    control: NDArray[np.bool_]
    adopted: NDArray[np.int8]
    """1 used, 0 not used, -1 no validity rule."""
    repetition: NDArray[np.int64]
    tokens: NDArray[np.int64]
    """(rows, 4): input, output, cache_write, cache_read."""
    turns: NDArray[np.int64]
    """-1: not reported (the record has no `turns`), never counted as 0; so `tool_calls`.
    `duration` is NaN where not reported. `unreported` names the columns with any such run."""
    tool_calls: NDArray[np.int64]
    duration: NDArray[np.float64]
    flags: tuple[tuple[str, ...], ...]
    scenario: str = ""
    attempts_superseded: int = 0
    """Records replaced by a later record of the same run id (retries)."""
    correct_agent_errors: int = 0
    """agent_error runs graded correct: counted as wrong (an agent that failed did not
    answer)."""
    extra_warnings: tuple[str, ...] = field(default=())
    retrieval: tuple[RetrievalSummary | None, ...] = field(default=())
    """Per row, the run's retrieval metrics (None: not scored); empty when no row has any."""
    endpoints: tuple[tuple[str, int], ...] = field(default=())
    """Rows per RunRecord `endpoint` (`unknown` for records without one), sorted by name."""
    pricing: tuple[tuple[str, dt.date], ...] = field(default=())
    """Runner → the oldest price-table date its records carry (`pricing_updated`)."""
    run_date: dt.date | None = None
    """The day the last run started (records' `started_at`): staleness is judged against
    it, not against the day the report is read."""
    spend: SpendAccount = field(default_factory=SpendAccount)
    """Spend outside the rows: excluded and retried attempts, and counted runs whose cost
    is unknown (those are not rows: the statistics never see an unknown cost)."""
    design: DesignKey | None = None
    """The statistical design the records name (that of the last record naming one, in file
    order: the run's current design); None when none does (older records, copeca's)."""
    unreported: frozenset[str] = frozenset()
    """Of `turns`, `tool_calls` and `duration`, those some row did not report (-1 or NaN
    there): a mean or sum over such a row is unknown, not a mean of zeros."""

    def __len__(self) -> int:
        return len(self.run_id)

    @property
    def reached(self) -> NDArray[np.bool_]:
        """Runs counted in spend: everything that reached the agent, failed or not."""
        reached: NDArray[np.bool_] = (self.outcome != INFRA) & (self.outcome != NOT_RUN)
        return reached

    def flag_counts(self, mask: NDArray[np.bool_]) -> dict[str, int]:
        counts: Counter[str] = Counter()
        # the rows' non-empty flag tuples, picked in C (most runs raise no flag)
        for flags in filter(None, compress(self.flags, mask.tolist())):
            counts.update(flags)
        return dict(sorted(counts.items()))


def table_from_rows(rows: Iterable[Mapping[str, Any]], scenario: str = "",
                    warnings: Sequence[str] = (), source: str = "") -> RecordTable:
    """Columns from dicts shaped like RunRecord (already checked by the caller).

    A later record of a run id replaces an `infra_error` or `budget_stop` one (a retry, a
    resumed job). Any other repeat must be the same record: a run id for another task, arm,
    model or repetition, or two different results of one run, is a ConfigError naming the
    run id (`source`: the file, for the message), never a silent replacement."""
    latest: dict[str, Mapping[str, Any]] = {}
    every: list[Mapping[str, Any]] = []
    for row in rows:
        rid = str(row["run_id"])
        prev = latest.get(rid)
        if prev is not None:
            _check_repeat(rid, prev, row, source)
        latest[rid] = row
        every.append(row)
    total = len(every)
    kept, spend = account_spend(every, latest)
    total -= len(spend.unknown_runs)

    def col(name: str, default: Any = "") -> list[Any]:
        try:  # records we wrote carry every field: one C-level pass
            return list(map(itemgetter(name), kept))
        except KeyError:
            return [r.get(name, default) for r in kept]

    def tok(r: Mapping[str, Any]) -> tuple[int, int, int, int]:
        t = r.get("tokens") or {}
        return (t.get("input", 0), t.get("output", 0), t.get("cache_write", 0),
                t.get("cache_read", 0))

    columns = Columns(
        run_id=[str(r["run_id"]) for r in kept], task_id=col("task_id"), arm=col("arm"),
        model=col("model"), served_model=[r.get("served_model") for r in kept],
        runner=col("runner"), cli_version=col("cli_version", None),
        category=col("category"), language=col("language"), outcome=col("outcome"),
        correct=col("correct", False), cost_usd=col("cost_usd", 0.0),
        cost_source=col("cost_source", None),
        control=col("control", False), tool_adopted=col("tool_adopted", None),
        # a record without turns, tool calls or a duration did not report them: None, not 0
        repetition=col("repetition", 0), tokens=list(map(tok, kept)), turns=col("turns", None),
        tool_calls=col("tool_calls", None), duration_s=col("duration_s", None),
        flags=list(map(tuple, col("flags", ()))), endpoint=col("endpoint", None),
        scenario=col("scenario", ""))
    return _table(columns, spend, total - len(kept), scenario, warnings,
                  _retrieval_column(col("retrieval", None)),
                  _pricing_dates([r.get("runner") for r in every],
                                 [r.get("pricing_updated") for r in every]),
                  _run_date(r.get("started_at") for r in every),
                  last_design([r.get("design") for r in every]))


def table_from_columns(columns: Columns, scenario: str = "",
                       warnings: Sequence[str] = ()) -> RecordTable:
    """The table of records read as columns (`read_columns`: every run id once, no
    retrieval metrics): the table `table_from_rows` builds from the rows `read_rows` reads
    in the same file."""
    pricing = _pricing_dates(columns.runner, columns.pricing_updated)
    run_date = _run_date(columns.started_at)
    design = last_design(columns.design)
    keep, spend = account_columns(columns)
    if keep is not None:
        columns = Columns(**{f.name: _pick(getattr(columns, f.name), keep)
                             for f in dataclasses.fields(Columns)})
    return _table(columns, spend, 0, scenario, warnings, (), pricing, run_date, design)


def _pick(values: list[Any], keep: list[int]) -> list[Any]:
    return [values[i] for i in keep]


def table_from_coded(parts: Sequence[Coded], scenario: str = "",
                     warnings: Sequence[str] = ()) -> RecordTable:
    """`table_from_columns` of the records of the coded parts (`read_coded`), in file
    order: the parts' arrays joined and their labels merged (the names of all the parts,
    sorted; each part's codes mapped to them), the same table."""
    pricing = (() if all(p.pricing is None for p in parts)
               else _oldest(chain.from_iterable(p.pricing for p in parts if p.pricing)))
    run_date = _run_date(chain.from_iterable(p.started for p in parts))
    spend = account_coded(parts)

    def joined(name: str, dtype: type[np.generic]) -> NDArray[Any]:
        return np.concatenate([np.frombuffer(p.numbers[name], dtype=dtype) for p in parts])

    def labels(name: str) -> Labels:
        return _merged([p.labels[name] for p in parts])

    outcome = joined("outcome", np.int64)
    graded = joined("correct", np.int8).view(np.bool_)
    failed = outcome == AGENT_ERROR
    model = labels("model")
    served = model  # the usual case: no record names another served model
    if any(p.served is not None for p in parts):
        served = _merged([p.served or p.labels["model"] for p in parts])
    none = any(p.cost_source_none for p in parts)  # then every source is `v or "none"`
    cost_source = _merged([((tuple(n or "none" for n in names), codes)
                            if none and not p.cost_source_none else (names, codes))
                           for p in parts for names, codes in (p.labels["cost_source"],)])
    endpoints: Counter[str] = Counter()
    for part in parts:
        for name, count in part.endpoints.items():
            endpoints[name or "unknown"] += count
    first = next((p.scenario for p in parts if p.scenario is not None), None)
    if not scenario and first is not None:
        scenario = str(first)
    return RecordTable(
        run_id=tuple(chain.from_iterable(p.run_id for p in parts)),
        task=labels("task_id"),
        arm=labels("arm"),
        model=model,
        served=served,
        category=labels("category"),
        language=labels("language"),
        cli_version=labels("cli_version"),
        runner=labels("runner"),
        cost_source=cost_source,
        outcome=outcome,
        correct=graded & ~failed,
        cost=joined("cost", np.float64),
        control=joined("control", np.int8).view(np.bool_),
        adopted=joined("adopted", np.int8),
        repetition=joined("repetition", np.int64),
        tokens=joined("tokens", np.int64).reshape(-1, 4),
        turns=joined("turns", np.int64),
        tool_calls=joined("tool_calls", np.int64),
        duration=joined("duration", np.float64),
        flags=tuple(chain.from_iterable(p.flags for p in parts)),
        scenario=scenario,
        attempts_superseded=0,
        correct_agent_errors=int((graded & failed).sum()),
        spend=spend,
        extra_warnings=tuple(warnings),
        retrieval=(),
        endpoints=tuple(sorted(endpoints.items())),
        pricing=pricing,
        run_date=run_date,
        unreported=frozenset().union(*(p.unreported for p in parts)),
        design=last_design([p.design for p in parts]),
    )


def _merged(parts: Sequence[tuple[tuple[str, ...], Any]]) -> Labels:
    """One column's labels from its parts' (names, codes): `Labels.of` of the whole
    column (the sorted names of all the parts, each code the index of its name)."""
    names = tuple(sorted({name for part, _ in parts for name in part}))
    index = {name: i for i, name in enumerate(names)}
    codes = [np.frombuffer(c, dtype=np.int64) if p == names
             else np.array([index[n] for n in p], dtype=np.int64)[np.frombuffer(c, dtype=np.int64)]
             for p, c in parts]
    return Labels(np.concatenate(codes), names)


def _table(c: Columns, spend: SpendAccount, superseded: int, scenario: str,
           warnings: Sequence[str], retrieval: tuple[RetrievalSummary | None, ...],
           pricing: tuple[tuple[str, dt.date], ...] = (), run_date: dt.date | None = None,
           design: DesignKey | None = None) -> RecordTable:
    """The RecordTable of the rows the statistics read (one per run id, known cost)."""
    if not scenario and len(c):
        scenario = str(c.scenario[0])
    n = len(c)
    try:  # the usual values: one C-level pass
        adopted = np.fromiter(map(_ADOPTED.__getitem__, c.tool_adopted), dtype=np.int8, count=n)
    except (KeyError, TypeError):
        adopted = np.array([-1 if a is None else int(bool(a)) for a in c.tool_adopted],
                           dtype=np.int8)
    outcome = np.fromiter(map(OUTCOME_CODE.__getitem__, c.outcome), dtype=np.int64, count=n)
    graded = np.array(c.correct, dtype=bool)
    failed = outcome == AGENT_ERROR
    model = Labels.of(c.model)
    served = model  # the usual case: no record names another served model
    if c.served_model.count(None) != len(c):
        served = Labels.of([s or m for s, m in zip(c.served_model, c.model, strict=True)])
    endpoints: Counter[str] = Counter()
    for name, count in count_values(c.endpoint).items():  # counted per name, not per row
        endpoints[name or "unknown"] += count
    return RecordTable(
        run_id=tuple(c.run_id),
        task=Labels.of(c.task_id),
        arm=Labels.of(c.arm),
        model=model,
        served=served,
        category=Labels.of(c.category),
        language=Labels.of(c.language),
        cli_version=Labels.of([v or "" for v in c.cli_version]),
        runner=Labels.of(c.runner),
        cost_source=Labels.of(c.cost_source if None not in c.cost_source
                              else [v or "none" for v in c.cost_source]),
        outcome=outcome,
        correct=graded & ~failed,
        cost=np.array(c.cost_usd, dtype=np.float64),
        control=np.array(c.control, dtype=bool),
        adopted=adopted,
        repetition=np.array(c.repetition, dtype=np.int64),
        # one flat pass: np.array on a list of tuples first works out their shape (4× slower)
        tokens=np.fromiter(chain.from_iterable(c.tokens), dtype=np.int64,
                           count=4 * len(c.tokens)).reshape(-1, 4),
        turns=_counts(c.turns),
        tool_calls=_counts(c.tool_calls),
        duration=np.array(c.duration_s, dtype=np.float64),  # None → NaN
        flags=tuple(c.flags),
        scenario=scenario,
        attempts_superseded=superseded,
        correct_agent_errors=int((graded & failed).sum()),
        spend=spend,
        extra_warnings=tuple(warnings),
        retrieval=retrieval,
        endpoints=tuple(sorted(endpoints.items())),
        pricing=pricing,
        run_date=run_date,
        design=design,
        unreported=frozenset(name for name, values in (("turns", c.turns),
                                                       ("tool_calls", c.tool_calls),
                                                       ("duration", c.duration_s))
                             if None in values),
    )


def _counts(values: list[int | None]) -> NDArray[np.int64]:
    """A count column; -1 where a record did not report it (None)."""
    if None not in values:  # every record reports it (the usual file): no pass per row
        return np.array(values, dtype=np.int64)
    return np.array([-1 if v is None else v for v in values], dtype=np.int64)


def _as_date(value: Any) -> dt.date | None:
    """A date from a record field (a date or datetime object, or ISO text); None if none."""
    if isinstance(value, dt.datetime):
        return value.date()
    if isinstance(value, dt.date):
        return value
    if isinstance(value, str) and value:
        try:
            return dt.date.fromisoformat(value[:10])
        except ValueError:
            return None
    return None


def _pricing_dates(runners: Sequence[Any], values: Sequence[Any]
                   ) -> tuple[tuple[str, dt.date], ...]:
    """Runner → the oldest price-table date among the records' runners and
    `pricing_updated` values."""
    if values.count(None) == len(values):  # copeca's records and older ones carry none
        return ()
    return _oldest(_distinct(zip(runners, values, strict=True)))


def _oldest(pairs: Iterable[tuple[Any, Any]]) -> tuple[tuple[str, dt.date], ...]:
    """Runner → the oldest date among (runner, date) pairs."""
    oldest: dict[str, dt.date] = {}
    for runner, value in pairs:
        day = _as_date(value)
        name = str(runner or "")
        if day is not None and (name not in oldest or day < oldest[name]):
            oldest[name] = day
    return tuple(sorted(oldest.items()))


def _run_date(values: Iterable[Any]) -> dt.date | None:
    """The latest day among `started_at` values (None when none has one)."""
    # timestamps differ by the second: their day text (all `_as_date` reads) repeats
    days = map(_as_date, _distinct(v[:10] if type(v) is str else v for v in _distinct(values)))
    return max((d for d in days if d is not None), default=None)


def _distinct(values: Iterable[Any]) -> Collection[Any]:
    """The values once each when all are hashable (else all of them): a date is parsed
    once per distinct value, not once per record."""
    every = list(values)
    try:
        return set(every)
    except TypeError:
        return every


def _check_repeat(rid: str, prev: Mapping[str, Any], row: Mapping[str, Any],
                  source: str) -> None:
    where = f"{source}: " if source else ""
    moved = [k for k in IDENTITY if prev.get(k) != row.get(k)]
    if moved:
        was = ", ".join(f"{k} {prev.get(k)!r}" for k in moved)
        now = ", ".join(f"{k} {row.get(k)!r}" for k in moved)
        raise ConfigError(f"{where}run id {rid!r} is used by two different runs ({was}; then "
                          f"{now}): run ids must be unique per task, arm, model and "
                          "repetition")
    if prev.get("outcome") in SUPERSEDABLE or dict(prev) == dict(row):
        return
    differ = sorted(k for k in set(prev) | set(row) if prev.get(k) != row.get(k))
    raise ConfigError(f"{where}run id {rid!r} has two different results (outcome "
                      f"{prev.get('outcome')!r} then {row.get('outcome')!r}; fields that "
                      f"differ: {', '.join(differ[:8])}): only an infra_error or "
                      "budget_stop record may be replaced by a later one")


def _retrieval_column(values: list[Any]) -> tuple[RetrievalSummary | None, ...]:
    """Summaries (rows may hold them as dicts); () when no row has one, the usual case."""
    if all(v is None for v in values):
        return ()
    return tuple(v if v is None or isinstance(v, RetrievalSummary)
                 else RetrievalSummary.model_validate(v) for v in values)


def table_from_records(records: Iterable[RunRecord], scenario: str = "") -> RecordTable:
    rows = ({**r.model_dump(include=_FIELDS), "retrieval": r.retrieval,
             "flags": died_flags(r.outcome, r.error, r.flags)} for r in records)
    return table_from_rows(rows, scenario)


_FIELDS = {"run_id", "scenario", "task_id", "arm", "model", "served_model", "runner",
           "cli_version", "pricing_updated", "started_at",
           "repetition", "control", "category", "language", "outcome", "correct", "tokens",
           "cost_usd", "duration_s", "turns", "tool_calls", "tool_adopted", "flags", "endpoint",
           "cost_source", "cost_unknown_reason", "design"}
