"""Per-run retrieval metrics with ContextBench's definitions.

Granularities: **file** (sets of paths), **symbol** (definitions overlapping the bytes),
**span** (bytes), **editloc** (old-file lines an edit touched). For each:
coverage = |pred ∩ gold| / |gold|, precision = |pred ∩ gold| / |pred|, F1 their harmonic mean.
Conventions (ContextBench's): empty gold → coverage 1.0; empty prediction → precision 1.0;
F1 is 0.0 when coverage + precision is 0.

Trajectory (per granularity): the steps are the model steps that viewed something; after step
t the cumulative coverage is that of the union of steps 1..t; AUC-coverage is the mean of those
values over the T steps; redundancy = 1 − |union over steps| / Σ_t |step t|. With no steps,
AUC and redundancy are 0.0.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

from copeca_action._util.model import RecordModel
from copeca_action.retrieval._intervals import Interval, intersection_measure, measure, merge

if TYPE_CHECKING:  # the report imports the models here; it needs no repository code
    from copeca_action.retrieval._editloc import LineKey
    from copeca_action.retrieval._repo import Repo
    from copeca_action.retrieval._viewed import Viewed

GRANULARITIES = ("file", "symbol", "span", "editloc")
CONTEXT_GRANULARITIES = ("file", "symbol", "span")


class Score(RecordModel):
    """One granularity of one run: the sizes, then the ratios derived from them."""

    intersection: int
    gold: int
    """|gold|: files, symbols, bytes or lines."""
    pred: int
    """|prediction| in the same unit."""
    coverage: float
    precision: float
    f1: float


class TrajectoryScore(RecordModel):
    """How the viewed context grew over the steps of one run, at one granularity."""

    coverage_by_step: list[float]
    """Cumulative coverage after each viewing step."""
    auc: float
    """Mean of `coverage_by_step` (0.0 with no steps)."""
    redundancy: float
    """1 − |union| / Σ per-step sizes (0.0 when nothing was viewed)."""
    viewed_union: int
    viewed_total: int


class RunRetrieval(RecordModel):
    """Retrieval metrics of one run. A granularity is None when the task has no gold for it
    (no `gold_context`; for editloc: no `gold_edit_lines` or no patch)."""

    schema_version: Literal[1] = 1
    run_id: str | None = None
    task_id: str | None = None
    """The cluster for the report's task-level bootstrap."""
    steps: int = 0
    """Trajectory length: steps that viewed at least one file."""
    file: Score | None = None
    symbol: Score | None = None
    span: Score | None = None
    editloc: Score | None = None
    trajectory_file: TrajectoryScore | None = None
    trajectory_symbol: TrajectoryScore | None = None
    trajectory_span: TrajectoryScore | None = None
    dropped_paths: list[str] = []
    """Paths the agent named that are not files of the repository (left out of every metric)."""


def ratios(intersection: float, gold: float, pred: float) -> tuple[float, float, float]:
    """(coverage, precision, F1) with the empty-gold / empty-prediction conventions."""
    coverage = intersection / gold if gold > 0 else 1.0
    precision = intersection / pred if pred > 0 else 1.0
    total = coverage + precision
    return coverage, precision, (2 * coverage * precision / total if total > 0 else 0.0)


def score(intersection: int, gold: int, pred: int) -> Score:
    coverage, precision, f1 = ratios(intersection, gold, pred)
    return Score(intersection=intersection, gold=gold, pred=pred, coverage=coverage,
                 precision=precision, f1=f1)


@dataclass
class Context:
    """A set of code at the three context granularities (a step, a union, or the gold)."""

    files: set[str] = field(default_factory=set)
    spans: dict[str, list[Interval]] = field(default_factory=dict)
    """Normal-form byte intervals per file."""
    symbols: set[int] = field(default_factory=set)
    """Ids of the definitions touched (`Repo.symbol(id)` gives the definition)."""

    def size(self, granularity: str) -> int:
        if granularity == "file":
            return len(self.files)
        if granularity == "symbol":
            return len(self.symbols)
        return sum(measure(ivs) for ivs in self.spans.values())

    def overlap(self, other: Context, granularity: str) -> int:
        if granularity == "file":
            return len(self.files & other.files)
        if granularity == "symbol":
            return len(self.symbols & other.symbols)
        return sum(intersection_measure(ivs, other.spans[f])
                   for f, ivs in self.spans.items() if f in other.spans)

    def update(self, other: Context) -> None:
        self.files |= other.files
        self.symbols |= other.symbols
        for f, ivs in other.spans.items():
            self.spans[f] = merge([*self.spans.get(f, []), *ivs])


def build_context(repo: Repo, files: Iterable[str],
                  ranges: Iterable[tuple[str, tuple[int, int] | None]]) -> Context:
    """A Context from file names and line ranges (None: the whole file), all repo-relative.
    Symbols are the definitions overlapping the resulting bytes."""
    context = Context(files=set(files))
    raw: dict[str, list[Interval]] = {}
    for path, lines in ranges:
        source = repo.file(path)
        context.files.add(path)
        if source is None:
            continue
        interval = (0, source.size) if lines is None else source.lines_to_bytes(*lines)
        if interval is not None:
            raw.setdefault(path, []).append(interval)
    for path, ivs in raw.items():
        normal = merge(ivs)
        if not normal:
            continue
        context.spans[path] = normal
        source = repo.file(path)
        assert source is not None
        context.symbols |= source.symbol_index().overlapping(normal, source.symbol_base)
    return context


def context_of(repo: Repo, items: Iterable[Viewed]) -> Context:
    items = list(items)
    return build_context(
        repo, (i.file for i in items),
        ((i.file, None if i.whole else i.lines) for i in items if i.shows_content))


def final_scores(pred: Context, gold: Context) -> dict[str, Score]:
    return {g: score(pred.overlap(gold, g), gold.size(g), pred.size(g))
            for g in CONTEXT_GRANULARITIES}


def trajectory_scores(steps: Sequence[Context], gold: Context,
                      union: Context | None = None) -> dict[str, TrajectoryScore]:
    """Per-granularity trajectory metrics; `union` (if given, empty) ends as the union of all
    steps, so the caller need not build it again."""
    union = Context() if union is None else union
    by_step: dict[str, list[float]] = {g: [] for g in CONTEXT_GRANULARITIES}
    totals = dict.fromkeys(CONTEXT_GRANULARITIES, 0)
    gold_sizes = {g: gold.size(g) for g in CONTEXT_GRANULARITIES}
    for step in steps:
        union.update(step)
        for g in CONTEXT_GRANULARITIES:
            totals[g] += step.size(g)
            by_step[g].append(ratios(union.overlap(gold, g), gold_sizes[g], 1)[0])
    out: dict[str, TrajectoryScore] = {}
    for g in CONTEXT_GRANULARITIES:
        values = by_step[g]
        union_size = union.size(g)
        out[g] = TrajectoryScore(
            coverage_by_step=values,
            auc=sum(values) / len(values) if values else 0.0,
            redundancy=1.0 - union_size / totals[g] if totals[g] > 0 else 0.0,
            viewed_union=union_size, viewed_total=totals[g])
    return out


def editloc_score(pred: set[LineKey], gold: set[LineKey]) -> Score:
    return score(len(pred & gold), len(gold), len(pred))


def run_metrics(repo: Repo, viewed: Sequence[Viewed],
                gold_context: Iterable[tuple[str, tuple[int, int]]],
                gold_edit: set[LineKey] | None = None,
                pred_edit: set[LineKey] | None = None,
                final: Context | None = None, run_id: str | None = None,
                dropped: Sequence[str] = (), task_id: str | None = None) -> RunRetrieval:
    """Every metric of one run. `final` is the context the prediction ends with (default: the
    union of all steps, which is what an agent has seen by the end)."""
    gold_spans = list(gold_context)
    by_step: dict[int, list[Viewed]] = {}
    for item in viewed:
        by_step.setdefault(item.step, []).append(item)
    step_contexts = [context_of(repo, by_step[s]) for s in sorted(by_step)]
    fields: dict[str, object] = {"run_id": run_id, "task_id": task_id,
                                 "steps": len(step_contexts),
                                 "dropped_paths": list(dropped)}
    if gold_spans:
        gold = build_context(repo, (f for f, _ in gold_spans), gold_spans)
        union = Context()
        for g, traj in trajectory_scores(step_contexts, gold, union).items():
            fields[f"trajectory_{g}"] = traj
        for g, value in final_scores(union if final is None else final, gold).items():
            fields[g] = value
    if gold_edit and pred_edit is not None:
        fields["editloc"] = editloc_score(pred_edit, gold_edit)
    return RunRetrieval.model_validate(fields)
