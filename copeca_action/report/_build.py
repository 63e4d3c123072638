"""RunRecords → Report: arms, comparisons, breakdowns, verdict, warnings."""

from __future__ import annotations

import contextlib
import dataclasses
import datetime as dt
import functools
import math
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

from copeca_action._util.arrays import distinct
from copeca_action._util.blas import on_one_blas_thread
from copeca_action._util.forked import Beside
from copeca_action._util.percent import threshold_text
from copeca_action.plan import BASE_SUFFIX
from copeca_action.records import OUTCOMES, SIMULATED
from copeca_action.report._model import (
    WORST_FIRST,
    AdoptedLine,
    ArmInterval,
    ArmSummary,
    Comparison,
    ComparisonKind,
    Exclusions,
    Interval,
    Line,
    Look,
    Multiplicity,
    Power,
    Report,
    Spend,
    Verdict,
)
from copeca_action.report._retrieval import retrieval_section
from copeca_action.report._spend import (
    MAX_RUN_COST_USD,
    cost_over,
    invalidate,
    judge_unknowns,
    spend_unknown,
    spend_warnings,
)
from copeca_action.report._spending import current_look, look_alpha, schedule, spent
from copeca_action.report._stats import (
    DEFAULT_METHOD,
    SMALL_SAMPLE_BELOW,
    FloatArray,
    IntervalMethod,
    arm_bootstrap,
    paired_bootstrap,
)
from copeca_action.report._table import (
    INFRA,
    NOT_RUN,
    Labels,
    RecordTable,
    table_from_records,
)
from copeca_action.report._verdict import judge, pct_text, undefined_reason
from copeca_action.scenario._settings import Adaptive, Thresholds

if TYPE_CHECKING:
    from copeca_action.records import RunRecord
    from copeca_action.scenario import Scenario

BASELINE = "baseline"
FEW_TASKS = SMALL_SAMPLE_BELOW
"""Below this many tasks the headline interval is wide; warn."""
MIN_CONTROL_TASKS = 5
"""The control gate needs at least this many paired control tasks: with 1–3 the control
interval is unbounded in 89–100% of experiments, and a gate on its point estimate fires on
noise (bench/stats.py)."""
POWER_RESAMPLES = 200
"""Bootstrap resamples per simulated experiment of `Comparison.power` (its 80% quantile moves
by a few points at most against 1,000; the figure is a planning aid, not a verdict)."""
LISTED_TASKS = 8
"""Warnings name at most this many tasks."""
STALE_PRICING_DAYS = 60


@dataclass(frozen=True)
class Settings:
    """Everything besides the records that changes a report; all of it is written into it."""

    thresholds: Thresholds = field(default_factory=Thresholds)
    seed: int = 0
    resamples: int = 10_000
    alpha: float = 0.05
    method: IntervalMethod = DEFAULT_METHOD
    breakdown_resamples: int = 2_000
    """Per-capability/language/task lines: fewer resamples (they are many and secondary)."""
    min_clusters: int = 5
    """Fewer tasks (or repetitions, for a task line) than this: "too few", no interval."""
    pricing_updated: Mapping[str, dt.date] = field(default_factory=dict)
    """Runner name → the date its prices were last checked (stale pricing warns)."""
    today: dt.date | None = None
    power_experiments: int = 400
    """Simulated experiments for each comparison's minimum detectable effects
    (`Comparison.power`); 0 leaves them out (the engine's stopping looks do)."""
    adaptive: Adaptive | None = None
    """The scenario's adaptive schedule. When enabled, the report judges at the alpha of the
    look its records reached (`alpha` is then ignored): the engine's stopping decision, the
    report, the bundle and the comment are one decision at one alpha."""
    design_mismatch: str | None = None
    """Why these settings are not the design the records were run under (`analyze` of the
    records of an adaptive run without its scenario, or with another): the verdict and every
    comparison are then `invalid` for it, never a verdict at an alpha or thresholds the run
    did not decide with."""

    @classmethod
    def from_scenario(cls, scenario: Scenario, **overrides: object) -> Settings:
        base = cls(thresholds=scenario.thresholds, seed=scenario.seed,
                   resamples=scenario.resamples, adaptive=scenario.adaptive)
        return dataclasses.replace(base, **overrides)  # type: ignore[arg-type]


def resolve_look(table: RecordTable, s: Settings) -> tuple[Settings, Look | None]:
    """The settings a report judges with: under adaptive sampling, alpha is the share of the
    look that the records' repetition count reached."""
    adaptive = s.adaptive
    if adaptive is None or not adaptive.enabled:
        return s, None
    reached = table.repetition[table.reached]
    done = int(reached.max()) + 1 if reached.size else 0
    k = current_look(adaptive, done)
    reps = schedule(adaptive)
    look = Look(look=k, looks=len(reps), repetitions=done, alpha_look=look_alpha(adaptive, k),
                alpha_spent=spent(adaptive, reps[k - 1]), alpha=adaptive.alpha)
    return dataclasses.replace(s, alpha=look.alpha_look), look


def split_alpha(table: RecordTable, s: Settings) -> tuple[Settings, Multiplicity | None]:
    """The settings a report of several tool arms judges with: each of the k comparisons of
    a kind at alpha / k (Bonferroni), so that the worst-case verdict (`_summary`) calls a
    false regression or improvement among them with probability at most alpha. The one
    place the split is made: every interval of the report is then at 1 − alpha / k."""
    k = alpha_shares(table.arm.names)
    if k < 2:
        return s, None
    m = Multiplicity(comparisons=k, alpha_family=s.alpha, alpha=s.alpha / k)
    return dataclasses.replace(s, alpha=m.alpha), m


def alpha_shares(arms: Iterable[str]) -> int:
    """How many comparisons of arms `arms` share the alpha (`split_alpha`): the tool arms
    compared with one base, the most of a kind (0 or 1: no split). `plan --power` sizes a
    design at the alpha the report will judge it with."""
    return max(Counter(kind for kind, _, _ in _pairs(tuple(arms))).values(), default=0)


@dataclass(frozen=True)
class _Sums:
    spend: FloatArray
    correct: FloatArray
    runs: NDArray[np.int64]
    turns: FloatArray | None = None
    """Summed turns per cluster (only where a line reports mean turns)."""


@on_one_blas_thread
def build_report(records: Iterable[RunRecord] | RecordTable, settings: Settings | None = None,
                 *, scenario: str = "", source_format: str = "copeca-action") -> Report:
    """The whole analysis. Pure: the same records and settings give the same report."""
    table = records if isinstance(records, RecordTable) else table_from_records(records)
    s, look = resolve_look(table, settings or Settings())
    s, multiplicity = split_alpha(table, s)
    warnings: list[str] = list(table.extra_warnings)
    pairs = _pairs(table.arm.names)
    # a run above MAX_RUN_COST_USD makes the verdict invalid (judge_costs), which says so:
    # numpy's overflow warnings on the way would only repeat it as noise
    largest = _largest_costs(table)
    quiet = (np.errstate(over="ignore", invalid="ignore")
             if max(largest.values(), default=0.0) > MAX_RUN_COST_USD
             else contextlib.nullcontext())
    draws = _simulated_draws(table, pairs, s)
    fork_power = draws >= FORK_POWER_DRAWS
    # the per-task lines take the other CPU when the power simulations do not (md, html:
    # no `power`); beside them they would only take turns with them on it
    fork_lines = not fork_power and len(table) * s.breakdown_resamples >= FORK_LINE_DRAWS
    # beside the power simulations, the child also bootstraps the lines by capability,
    # language and model: this process, with the arms, the comparisons and the per-task
    # lines, was the one waited for
    lines_beside = fork_power and draws >= BESIDE_BREAKDOWN_DRAWS
    with quiet, Beside(functools.partial(_powers_and_breakdowns, table, pairs, s,
                                         multiplicity, lines_beside),
                       fork=fork_power) as beside, \
            Beside(functools.partial(_all_task_lines, table, pairs, s),
                   fork=fork_lines) as task_lines:
        arms = [_arm_summary(table, code, name, s) for code, name in enumerate(table.arm.names)]
        compared = [_compare(table, kind, tool, base, s, warnings) for kind, tool, base in pairs]
        parts = (None if lines_beside
                 else [_breakdown_parts(table, tool, base, s) for _, tool, base in pairs])
        # this process's own work (the per-task lines, or the lines child's answer) before it
        # waits for the power child: waiting first left this process idle meanwhile
        tasks = task_lines.result()
        powers, beside_parts = beside.result()
        if parts is None:
            parts = beside_parts or [_breakdown_parts(table, tool, base, s)
                                     for _, tool, base in pairs]
        fields = [f | _breakdowns(part, f["delta"]) for f, part in zip(compared, parts,
                                                                       strict=True)]
        comparisons = [Comparison(**f, tasks=lines, power=power)
                       for f, lines, power in zip(fields, tasks, powers, strict=True)]
    # an unknown cost, or one that is no price, makes its arms' comparisons invalid before
    # the verdict sums them up: the headline and each tool's reason are the judged ones
    unknowns = [u for u in (spend_unknown(table.spend), cost_over(largest)) if u is not None]
    comparisons = invalidate(unknowns, comparisons)
    headline = _headline(comparisons)
    if headline is None:
        verdict: Verdict = "skipped"
        reasons = ["no tool arm with a baseline or base-ref arm to compare"
                   if len(table) else "no records"]
    else:
        verdict, reasons = _summary(comparisons, headline)
    hidden = not pairs and bool(_pairs(tuple(sorted({*table.arm.names,
                                                     *table.spend.unknown_arms}))))
    verdict, reasons = judge_unknowns(
        unknowns, verdict, reasons, comparisons, unknown_hid_a_comparison=hidden,
        regressions=[comparisons[i].name for i in _deciding(comparisons)
                     if comparisons[i].verdict == "regression"])
    if s.design_mismatch is not None and headline is not None:
        comparisons, verdict, reasons = _undesigned(s.design_mismatch, comparisons, reasons)
    warnings += spend_warnings(table.spend)
    warnings += _run_warnings(table, arms, s)
    infra = table.outcome == INFRA
    stopped = table.outcome == NOT_RUN
    counted = float(sum(a.spend_usd for a in arms))
    spend = Spend(total_usd=counted + table.spend.excluded_usd, counted_usd=counted,
                  excluded_usd=table.spend.excluded_usd,
                  excluded_attempts=table.spend.excluded_attempts,
                  unknown_attempts=len(table.spend.unknown_runs) + table.spend.excluded_unknown,
                  cost_sources=dict(table.spend.sources),
                  lower_bound_attempts=table.spend.lower_bound_attempts,
                  died_attempts=table.spend.died_attempts,
                  died_lower_bound=table.spend.died_lower_bound)
    return Report(
        scenario=scenario or table.scenario, records=len(table), verdict=verdict,
        verdict_reasons=reasons, headline=headline, comparisons=comparisons, arms=arms,
        warnings=_unique(warnings),
        exclusions=Exclusions(
            infra_error_runs=sorted(table.run_id[i] for i in np.flatnonzero(infra)),
            not_run=sorted(table.run_id[i] for i in np.flatnonzero(stopped)),
            superseded_attempts=table.attempts_superseded,
            spend_usd=table.spend.excluded_usd, spend_attempts=table.spend.excluded_attempts,
            spend_unknown_attempts=table.spend.excluded_unknown,
            unknown_cost_runs=list(table.spend.unknown_runs),
            unknown_cost_models=list(table.spend.unknown_models)),
        spend=spend,
        thresholds=s.thresholds, seed=s.seed, resamples=s.resamples, alpha=s.alpha,
        interval_method=s.method,
        source_format="copeca" if source_format == "copeca" else "copeca-action",
        retrieval=retrieval_section(table, pairs, seed=s.seed, resamples=s.resamples,
                                    alpha=s.alpha, method=s.method),
        look=look, multiplicity=multiplicity,
        endpoints=dict(table.endpoints),
        simulated=any(k in SIMULATED for k, _ in table.endpoints))


# ---------------------------------------------------------------- arms


def _largest_costs(t: RecordTable) -> dict[str, float]:
    """Each arm's largest run cost among the runs that reached the agent."""
    out = {}
    for code, name in enumerate(t.arm.names):
        cost = t.cost[t.reached & (t.arm.codes == code)]
        if cost.size:
            out[name] = float(cost.max())
    return out


def _arm_summary(t: RecordTable, code: int, name: str, s: Settings) -> ArmSummary:
    rows = t.arm.codes == code
    reached = rows & t.reached
    sums = _sums(t, reached, t.task.codes, len(t.task.names))
    runs = int(reached.sum())
    spend = float(t.cost[reached].sum())
    correct = int(t.correct[reached].sum())
    ruled = reached & (t.adopted >= 0)
    outcome_counts = np.bincount(t.outcome[rows], minlength=len(OUTCOMES))
    tokens = t.tokens[reached].sum(axis=0)
    return ArmSummary(
        arm=name, records=int(rows.sum()), runs=runs,
        infra_errors=int((rows & (t.outcome == INFRA)).sum()),
        not_run=int((rows & (t.outcome == NOT_RUN)).sum()),
        spend_usd=spend, correct=correct, accuracy=correct / runs if runs else None,
        cpc_usd=_cpc(spend, correct) if runs else None,
        outcomes={o: int(n) for o, n in zip(OUTCOMES, outcome_counts, strict=True) if n},
        tokens=dict(zip(("input", "output", "cache_write", "cache_read"),
                        (int(x) for x in tokens), strict=True)),
        mean_turns=_reported_mean(t, "turns", t.turns[reached]),
        mean_tool_calls=_reported_mean(t, "tool_calls", t.tool_calls[reached]),
        duration_s=None if "duration" in t.unreported and bool(
            np.isnan(t.duration[reached]).any()) else float(t.duration[reached].sum()),
        adoption_rate=float((t.adopted[ruled] == 1).mean()) if ruled.any() else None,
        flags=t.flag_counts(reached),
        models=sorted({t.model.names[c] for c in distinct(t.model.codes[rows])}),
        cli_versions=sorted({t.cli_version.names[c] for c in distinct(t.cli_version.codes[rows])}
                            - {""}),
        interval=_arm_interval(sums, s))


def _reported_mean(t: RecordTable, name: str, values: NDArray[np.int64]) -> float | None:
    """The mean of a count over runs; None with no run, or when a run did not report it
    (-1): the mean over the runs is then unknown, never a mean that counts it as 0."""
    if not values.size or (name in t.unreported and bool((values < 0).any())):
        return None
    return float(values.mean())


def _arm_interval(arm: _Sums, s: Settings, task_means: bool = False) -> ArmInterval | None:
    """Over the tasks this arm ran, with the report's seed: on the same tasks as a
    comparison, the resamples are the ones its delta used. `task_means`: the cost per
    correct of per-task means (a comparison's lines), else of sums (the arm's own)."""
    ran = arm.runs > 0
    if not ran.any():
        return None
    b = arm_bootstrap(arm.spend[ran], arm.correct[ran], arm.runs[ran].astype(np.float64),
                      alpha=s.alpha, resamples=s.resamples, seed=s.seed, method=s.method,
                      task_means=task_means)
    one = b.n_clusters < 2
    return ArmInterval(cpc_low=None if one else float(b.cpc_low),
                       cpc_high=None if one else float(b.cpc_high),
                       accuracy_low=float(b.accuracy_low), accuracy_high=float(b.accuracy_high),
                       design_effect=float(b.design_effect), level=1 - s.alpha, method=s.method,
                       clusters=b.n_clusters, resamples=s.resamples)


# ---------------------------------------------------------------- comparisons


def _pairs(arms: tuple[str, ...]) -> list[tuple[ComparisonKind, str, str]]:
    """head vs base (the regression question) first, then tool vs baseline (its value)."""
    tools = [a for a in arms if a != BASELINE and not a.endswith(BASE_SUFFIX)]
    out: list[tuple[ComparisonKind, str, str]] = []
    for tool in tools:
        if tool + BASE_SUFFIX in arms:
            out.append(("head_vs_base", tool, tool + BASE_SUFFIX))
    for tool in tools:
        if BASELINE in arms:
            out.append(("tool_vs_baseline", tool, BASELINE))
    return out


def _deciding(comparisons: list[Comparison]) -> list[int]:
    """The comparisons the verdict summarises: every tool's head vs base when the base-ref
    arms exist (the regression question), else every tool's tool vs baseline."""
    kind = ("head_vs_base" if any(c.kind == "head_vs_base" for c in comparisons)
            else "tool_vs_baseline")
    return [i for i, c in enumerate(comparisons) if c.kind == kind]


def _headline(comparisons: list[Comparison]) -> int | None:
    """The comparison that decides the verdict: the worst of the deciding ones
    (`WORST_FIRST`), the first of equals; with one tool, its one deciding comparison."""
    return min(_deciding(comparisons), key=lambda i: WORST_FIRST.index(comparisons[i].verdict),
               default=None)


def _undesigned(why: str, comparisons: list[Comparison], reasons: list[str]
                ) -> tuple[list[Comparison], Verdict, list[str]]:
    """Every comparison and the verdict `invalid` for `why` (the settings are not the
    records' design, `Settings.design_mismatch`): a regression too, since its interval is
    not at the alpha the run decided with."""
    marked = [c.model_copy(update={"verdict": "invalid", "reasons": [why, *c.reasons]})
              for c in comparisons]
    return marked, "invalid", [why, *(r for r in reasons if r != why)]


def _summary(comparisons: list[Comparison], headline: int) -> tuple[Verdict, list[str]]:
    """The report's verdict and why: the headline's; with several tools, one reason per
    deciding comparison, worst first, each naming its comparison, so a regression of one
    tool is never hidden behind another's improvement."""
    head = comparisons[headline]
    family = _deciding(comparisons)
    if len(family) < 2:
        return head.verdict, head.reasons
    worst_first = sorted(family, key=lambda i: WORST_FIRST.index(comparisons[i].verdict))
    return head.verdict, [f"{comparisons[i].name}: {comparisons[i].verdict} ("
                          + "; ".join(comparisons[i].reasons) + ")" for i in worst_first]


def _sums(t: RecordTable, rows: NDArray[np.bool_], keys: NDArray[np.int64], n: int) -> _Sums:
    k = keys[rows]
    turns = t.turns[rows].astype(np.float64)
    if "turns" in t.unreported:  # a run that did not report turns: its cluster's sum is NaN
        turns[turns < 0] = np.nan
    return _Sums(np.bincount(k, weights=t.cost[rows], minlength=n).astype(np.float64),
                 np.bincount(k, weights=t.correct[rows].astype(np.float64),
                             minlength=n).astype(np.float64),
                 np.bincount(k, minlength=n).astype(np.int64),
                 np.bincount(k, weights=turns, minlength=n).astype(np.float64))


def _interval(tool: _Sums, base: _Sums, s: Settings, resamples: int, alpha: float,
              unit: str = "task") -> Interval:
    """Bootstrap over the clusters where both arms have at least one run, on per-task means
    (mean spend and accuracy per run of each arm): every task weighs the same in both arms
    whatever runs each arm lost."""
    paired = (tool.runs > 0) & (base.runs > 0)
    rt, rb = tool.runs[paired].astype(np.float64), base.runs[paired].astype(np.float64)
    bs = paired_bootstrap(tool.spend[paired], tool.correct[paired], base.spend[paired],
                          base.correct[paired], alpha=alpha, resamples=resamples, seed=s.seed,
                          method=s.method, runs_t=rt, runs_b=rb, task_means=True)
    estimate = _num(bs.estimate)
    return Interval(estimate=estimate, low=_num(bs.low), high=_num(bs.high),
                    level=1 - alpha, method=s.method, clusters=bs.n_clusters,
                    unit="repetition" if unit == "repetition" else "task", resamples=resamples,
                    effective_clusters=_effective(tool, base, paired),
                    undefined="" if estimate is not None else undefined_reason(
                        bs.n_clusters, float(tool.correct[paired].sum()),
                        float(base.correct[paired].sum())))


def _means(a: _Sums, keep: NDArray[np.bool_]) -> tuple[FloatArray, FloatArray]:
    """Per-task mean spend and accuracy of the `keep` tasks."""
    runs = a.runs[keep].astype(np.float64)
    return a.spend[keep] / runs, a.correct[keep] / runs


def _effective(tool: _Sums, base: _Sums, paired: NDArray[np.bool_]) -> float | None:
    """Kish's effective number of tasks, (Σw)²/Σw², for the weights the ratio gives each task
    (its mean spend, and its accuracy, summed over both arms), the smaller of the two: how many
    equally weighted tasks would carry the same information. 30 tasks of which 3 hold most
    of the spend are effectively about 3."""
    if not paired.any():
        return None
    st, ct = _means(tool, paired)
    sb, cb = _means(base, paired)
    out = []
    for w in (st + sb, ct + cb):
        total, square = float(w.sum()), float((w * w).sum())
        if total > 0 and square > 0:
            out.append(min(total * total / square, float(paired.sum())))
    return min(out) if out else None


def _compare(t: RecordTable, kind: ComparisonKind, tool: str, base: str, s: Settings,
             warnings: list[str]) -> dict[str, Any]:
    """A comparison's fields but its breakdowns (`_breakdowns`) and power (`_powers`)."""
    tc, bc = t.arm.code(tool), t.arm.code(base)
    n_tasks = len(t.task.names)
    tool_rows = t.reached & (t.arm.codes == tc)
    base_rows = t.reached & (t.arm.codes == bc)
    main = ~t.control
    st, sb = (_sums(t, r & main, t.task.codes, n_tasks) for r in (tool_rows, base_rows))
    headline = _interval(st, sb, s, s.resamples, s.alpha)
    paired = (st.runs > 0) & (sb.runs > 0)
    control = None
    control_line = None
    control_tasks = 0
    if (t.control & (tool_rows | base_rows)).any():
        ct, cb = (_sums(t, r & t.control, t.task.codes, n_tasks) for r in (tool_rows, base_rows))
        control = _interval(ct, cb, s, s.resamples, s.alpha)
        control_line = _line("control", ct, cb, control, "", s)
        control_tasks = control.clusters
    gate = control if control is not None and control_tasks >= MIN_CONTROL_TASKS else None
    ruled = tool_rows & main & (t.adopted >= 0)
    adoption = float((t.adopted[ruled] == 1).mean()) if ruled.any() else None
    adopted = None
    if adoption is not None and adoption > 0:
        sa = _sums(t, tool_rows & main & (t.adopted == 1), t.task.codes, n_tasks)
        adopted = AdoptedLine(adoption_rate=adoption, runs=int(sa.runs.sum()),
                              delta=_interval(sa, sb, s, s.resamples, s.alpha))
    name = f"{tool} vs {base}"
    differences = _arm_differences(t, tc, bc)
    undeclared = [d for key, d in differences if key not in s.thresholds.compare_across]
    cost_unknown = (tool in t.spend.unknown_arms, base in t.spend.unknown_arms)
    verdict, reasons = judge(
        estimate=headline.estimate, low=headline.low, high=headline.high,
        control_low=gate.low if gate else None,
        control_high=gate.high if gate else None,
        runs_tool=int(tool_rows.sum()), runs_base=int(base_rows.sum()), adoption=adoption,
        thresholds=s.thresholds, records_tool=int((t.arm.codes == tc).sum()),
        records_base=int((t.arm.codes == bc).sum()), paired_tasks=int(paired.sum()),
        main_tasks=int(((st.runs > 0) | (sb.runs > 0)).sum()),
        unpaired=(int(((st.runs > 0) & ~paired).sum()), int(((sb.runs > 0) & ~paired).sum())),
        differences=undeclared, undefined=headline.undefined, cost_unknown=cost_unknown)
    if adoption is not None and adoption < s.thresholds.min_adoption:
        reasons = _failed_not_unused(t, ruled, reasons)
    warnings += _comparison_warnings(t, name, st, sb, headline, control, s,
                                     cost_unknown=any(cost_unknown))
    warnings += [f"{name}: {d} (declared in thresholds.compare_across)"
                 for key, d in differences if key in s.thresholds.compare_across]
    estimate = headline.estimate
    alert = estimate is not None and estimate > s.thresholds.alert
    if alert and estimate is not None:
        warnings.append(f"{name}: cost per correct up {pct_text(estimate, (s.thresholds.alert,))}"
                        f", above the alert threshold {threshold_text(s.thresholds.alert)}")
    return dict(
        name=name, kind=kind, tool=tool, base=base, delta=headline, control_delta=control,
        adopted=adopted, verdict=verdict, reasons=reasons, alert=alert,
        overall=_line("overall", st, sb, headline, "", s), control=control_line)


def _failed_not_unused(t: RecordTable, ruled: NDArray[np.bool_],
                       reasons: list[str]) -> list[str]:
    """A low adoption's reasons, saying how many of the runs without the tool were runs where
    it failed (`tool_failed`): those are not the agent's choice."""
    unused = np.flatnonzero(ruled & (t.adopted == 0))
    failed = sum("tool_failed" in t.flags[i] for i in unused)
    if not failed:
        return reasons
    return [*reasons, f"in {failed} of the {len(unused)} run(s) without the tool, the tool "
                      "under test failed (flag tool_failed): it broke, the agent did not pass "
                      "it by"]


def _main_rows(t: RecordTable, tool: str, base: str) -> list[NDArray[np.bool_]]:
    """Each arm's rows that reached the agent on non-control tasks."""
    return [t.reached & (t.arm.codes == t.arm.code(a)) & ~t.control for a in (tool, base)]


def _all_task_lines(t: RecordTable, pairs: list[tuple[ComparisonKind, str, str]],
                    s: Settings) -> list[list[Line]]:
    """Each comparison's per-task lines (`_task_lines`), in order: computed beside the rest
    of the report when the power simulations are not (`Beside`)."""
    out = []
    for _, tool, base in pairs:
        tc, bc = t.arm.code(tool), t.arm.code(base)
        out.append(_task_lines(t, t.reached & (t.arm.codes == tc),
                               t.reached & (t.arm.codes == bc), s,
                               cost_unknown=bool({tool, base} & set(t.spend.unknown_arms))))
    return out


_HEADLINE = "headline"
"""In `_LineParts`: the line shows its comparison's delta (it has every run of it)."""
_LineParts = tuple[str, "_Sums", "_Sums", "Interval | str | None", str]
"""A breakdown line before its comparison's delta is known: key, sums, interval (or
`_HEADLINE`), note."""


def _breakdown_parts(t: RecordTable, tool: str, base: str, s: Settings
                     ) -> dict[str, list[_LineParts]]:
    """A comparison's lines by capability, language and model (`_lines_by`), but for the
    headline's interval, which a line with every run shows (`_breakdowns` puts it in)."""
    tool_rows, base_rows = _main_rows(t, tool, base)
    return {key: _lines_by(t, labels.codes, labels.names, tool_rows, base_rows, s)
            for key, labels in (("capabilities", t.category), ("languages", t.language),
                                ("models", t.model))}


def _breakdowns(parts: dict[str, list[_LineParts]], headline: Interval
                ) -> dict[str, list[Line]]:
    """The lines by capability, language and model; `headline`: the comparison's delta."""
    return {key: [_line(name, st, sb, headline if isinstance(interval, str) else interval, note)
                  for name, st, sb, interval, note in lines]
            for key, lines in parts.items()}


def _powers_and_breakdowns(t: RecordTable, pairs: list[tuple[ComparisonKind, str, str]],
                           s: Settings, multiplicity: Multiplicity | None, breakdowns: bool
                           ) -> tuple[list[Power | None], list[dict[str, list[_LineParts]]] | None]:
    """`_powers`, and with `breakdowns` each comparison's `_breakdown_parts`: what is
    computed beside the rest of the report (`Beside`)."""
    return (_powers(t, pairs, s, multiplicity),
            [_breakdown_parts(t, tool, base, s) for _, tool, base in pairs] if breakdowns
            else None)


def _powers(t: RecordTable, pairs: list[tuple[ComparisonKind, str, str]],
            s: Settings, multiplicity: Multiplicity | None = None) -> list[Power | None]:
    """Each comparison's minimum detectable effects (`_power`), in order: what is computed
    beside the rest of the report (`Beside`)."""
    out = []
    n_tasks = len(t.task.names)
    for _, tool, base in pairs:
        tool_rows, base_rows = _main_rows(t, tool, base)
        st, sb = (_sums(t, r, t.task.codes, n_tasks) for r in (tool_rows, base_rows))
        out.append(_power(t, base_rows, st, sb, s, multiplicity))
    return out


def _simulated_draws(t: RecordTable, pairs: list[tuple[ComparisonKind, str, str]],
                     s: Settings) -> int:
    """About how many runs the comparisons' power simulations draw (experiments × tasks ×
    runs per task and arm): what decides whether they are worth a process of their own."""
    total = 0
    n_tasks = len(t.task.names)
    for _, tool, base in pairs:
        st, sb = (_sums(t, r, t.task.codes, n_tasks) for r in _main_rows(t, tool, base))
        paired = (st.runs > 0) & (sb.runs > 0)
        total += s.power_experiments * int(sb.runs[paired].sum())
    return total


FORK_POWER_DRAWS = 2_000_000
"""From this many simulated runs, the power simulations run in a forked child beside the
rest of the report (`Beside`): at 100k records (20M draws, 0.25 s) that saves a third of the
report's time; below, the fork costs about what it saves (bench/analyze_perf.py). The numbers
are the same either way. The child also bootstraps the lines by capability, language and
model (`_breakdown_parts`; this process puts in the headline's interval where a line shows
it): with them here, this process (the arms, the comparisons, the per-task lines) was the
one waited for, by about 0.04 s of 0.35 at 100k records."""


BESIDE_BREAKDOWN_DRAWS = 20_000_000
"""From this many simulated runs (100k records: 20 million) the power child also bootstraps
the lines by capability, language and model. Below, its simulation is short and this
process's part is not the longer one: at 10k records (2 million) moving the lines there made
this process slower (its comparisons took 0.056–0.063 s of CPU against 0.034–0.036 s, two
processes on two cores sharing the cache), not faster."""


FORK_LINE_DRAWS = 20_000_000
"""From this many records × breakdown resamples (10,000 records at 2,000), the per-task lines
run in a forked child when the power simulations do not (`analyze --format md|html`, which
show no `power`); the numbers are the same either way."""


def _power(t: RecordTable, base_rows: NDArray[np.bool_], st: _Sums, sb: _Sums,
           s: Settings, multiplicity: Multiplicity | None = None) -> Power | None:
    """The design's minimum detectable effects, with this report's base-arm runs (on the
    paired tasks) as the population, at the alpha the report judges with: split between
    the tools (`multiplicity`) at each look of an adaptive design too."""
    paired = (st.runs > 0) & (sb.runs > 0)
    if s.power_experiments <= 0 or int(paired.sum()) < 2:
        return None
    rows = base_rows & paired[t.task.codes] & np.isfinite(t.cost)  # an unknown cost is no data
    if len(distinct(t.task.codes[rows])) < 2:
        return None
    codes = t.task.codes[rows]
    order = np.argsort(codes, kind="stable")
    bounds = np.flatnonzero(np.diff(codes[order])) + 1
    cost = np.split(t.cost[rows][order], bounds)
    correct = np.split(t.correct[rows][order].astype(np.float64), bounds)
    runs = np.concatenate([st.runs[paired], sb.runs[paired]])
    models = max(1, len(distinct(t.model.codes[rows])))
    adaptive = s.adaptive if s.adaptive is not None and s.adaptive.enabled else None
    # adaptive: the design is the schedule, every look simulated up to its maximum (as
    # plan --power sizes it), whichever look these records stopped at
    reps = (adaptive.max_repetitions if adaptive is not None
            else max(1, round(float(np.median(runs)) / models)))
    from copeca_action.report._power import Design, Pilot, power  # its simulation code

    r = power(Design(int(paired.sum()), reps, models=models), fail=s.thresholds.fail,
              alpha=multiplicity.alpha_family if multiplicity else s.alpha,
              comparisons=multiplicity.comparisons if multiplicity else 1, adaptive=adaptive,
              pilot=Pilot(cost=cost, correct=correct, source="this report's base arm"),
              experiments=s.power_experiments, resamples=POWER_RESAMPLES, seed=s.seed)
    return Power(improvement=r.improvement if r.improvement > -1 else None,
                 regression=r.regression if math.isfinite(r.regression) else None,
                 tasks=int(paired.sum()), repetitions=reps * models,
                 experiments=s.power_experiments)


_BASES = {"vendor": "the CLI's own figure (vendor)",
          "computed": "tokens × the runners' prices (computed)"}


def _arm_differences(t: RecordTable, tc: int, bc: int) -> list[tuple[str, str]]:
    """What differs between the arms' runs besides the tool: served models, CLI versions
    (runs that reached the agent; unknown versions are not compared), and the cost basis
    when the arms share none (every tool run priced one way, every base run the other: a
    few runs that fell back to the other basis in one arm are the spend line's warning)."""
    out = []

    def used(col: Labels, code: int, unknown: str) -> set[str]:
        rows = t.reached & (t.arm.codes == code)
        return {col.names[c] for c in distinct(col.codes[rows])} - {unknown}

    for key, label, col in (("model", "models", t.served), ("cli_version", "CLI versions",
                                                            t.cli_version)):
        a, b = used(col, tc, ""), used(col, bc, "")
        if a and b and a != b:
            out.append((key, f"{label} differ between the arms ({', '.join(sorted(a))} vs "
                             f"{', '.join(sorted(b))})"))
    a, b = used(t.cost_source, tc, "none"), used(t.cost_source, bc, "none")
    if a and b and not a & b:
        tool, base = t.arm.names[tc], t.arm.names[bc]
        out.append(("cost_source", f"the arms' costs share no basis ({tool}: "
                    + ", ".join(_BASES.get(x, x) for x in sorted(a)) + f"; {base}: "
                    + ", ".join(_BASES.get(x, x) for x in sorted(b)) + ")"))
    return out


def _lines_by(t: RecordTable, codes: NDArray[np.int64], names: tuple[str, ...],
              tool_rows: NDArray[np.bool_], base_rows: NDArray[np.bool_],
              s: Settings) -> list[_LineParts]:
    """One line per label (capability or language), clustering by task. A line with every
    run of the headline (one language, one model) is the headline's population: it shows
    the headline's interval (`_HEADLINE` here), not a second bootstrap of the same runs at
    the breakdowns' fewer resamples, which printed another interval for the same numbers."""
    lines: list[_LineParts] = []
    n_tasks = len(t.task.names)
    either = tool_rows | base_rows
    for code, name in enumerate(names):
        if not name:
            continue
        sel = codes == code
        st, sb = (_sums(t, r & sel, t.task.codes, n_tasks) for r in (tool_rows, base_rows))
        if st.runs.sum() == 0 and sb.runs.sum() == 0:
            continue
        paired = int(((st.runs > 0) & (sb.runs > 0)).sum())
        interval: Interval | str | None = (
            None if paired < s.min_clusters
            else _HEADLINE if not (either & ~sel).any()
            else _interval(st, sb, s, s.breakdown_resamples, s.alpha))
        note = "" if interval else f"too few tasks ({paired}) for an interval"
        lines.append((name, st, sb, interval, note))
    return lines


def _task_lines(t: RecordTable, tool_rows: NDArray[np.bool_], base_rows: NDArray[np.bool_],
                s: Settings, cost_unknown: bool = False) -> list[Line]:
    """One line per task, resampling repetitions (pairs of the same repetition index);
    tasks with the same number of repetitions are bootstrapped together in one batch.
    `cost_unknown`: an arm had runs left out for an unknown cost (a task "one arm ran" may
    have run in both, at a cost not known in one)."""
    n_tasks = len(t.task.names)
    # each task's sums as Python numbers: the same double arithmetic as numpy's, without
    # its cost per call (500 tasks × a dozen calls was a fifth of the lines' time)
    per_task: list[tuple[list[float], list[float], list[int]]] = [
        ([0.0] * n_tasks, [0.0] * n_tasks, [0] * n_tasks) for _ in range(2)]
    reps = [0] * n_tasks
    intervals: dict[int, Interval] = {}
    for tasks, keys, in_batch, width in _task_cells(t):
        st, sb = (_sums(t, r if in_batch is None else r & in_batch, keys, len(tasks) * width)
                  for r in (tool_rows, base_rows))
        shape = (len(tasks), width)
        used = ((st.runs > 0) | (sb.runs > 0)).reshape(shape)
        count = used.sum(axis=1)
        both = (st.runs.reshape(shape).sum(axis=1) > 0) & (sb.runs.reshape(shape).sum(axis=1) > 0)
        for n in distinct(count[both]):
            if n < s.min_clusters:
                continue
            group = np.flatnonzero(both & (count == n))
            mask = used[group]

            def pick(a: FloatArray, g: NDArray[np.int64] = group, m: NDArray[np.bool_] = mask,
                     k: int = int(n), shape: tuple[int, int] = shape) -> FloatArray:
                return a.reshape(shape)[g][m].reshape(len(g), k)

            bs = paired_bootstrap(pick(st.spend), pick(st.correct), pick(sb.spend),
                                  pick(sb.correct), alpha=s.alpha,
                                  resamples=s.breakdown_resamples, seed=s.seed, method=s.method,
                                  runs_t=pick(st.runs.astype(np.float64)),
                                  runs_b=pick(sb.runs.astype(np.float64)))
            correct_t, correct_b = pick(st.correct).sum(axis=1), pick(sb.correct).sum(axis=1)
            for j, task in enumerate(tasks[group].tolist()):
                estimate = _num(bs.estimate[j])
                intervals[task] = Interval(
                    estimate=estimate, low=_num(bs.low[j]), high=_num(bs.high[j]),
                    level=1 - s.alpha, method=s.method, clusters=int(n), unit="repetition",
                    resamples=s.breakdown_resamples,
                    undefined="" if estimate is not None else undefined_reason(
                        int(n), float(correct_t[j]), float(correct_b[j])))
        codes = tasks.tolist()
        for a, (spend, correct, runs) in zip((st, sb), per_task, strict=True):
            for code, *sums in zip(codes, a.spend.reshape(shape).sum(1).tolist(),
                                   a.correct.reshape(shape).sum(1).tolist(),
                                   a.runs.reshape(shape).sum(1).tolist(), strict=True):
                spend[code], correct[code], runs[code] = sums
        for code, n in zip(codes, count.tolist(), strict=True):
            reps[code] = n
    first = np.zeros(n_tasks, dtype=np.int64)
    first[t.task.codes[::-1]] = np.arange(len(t))[::-1]  # a row of each task
    rows = first.tolist()
    control = t.control.tolist()
    category = t.category.codes.tolist()
    main = [(~t.control & r) for r in (tool_rows, base_rows)]
    totals = [(float(t.cost[m].sum()), float(t.correct[m].sum())) for m in main]
    lines = []
    for code, name in enumerate(t.task.names):
        tool, base = ((spend[code], correct[code], runs[code])
                      for spend, correct, runs in per_task)
        if not (tool[2] or base[2]):
            continue
        interval = intervals.get(code)
        note = ""
        if interval is None:
            note = (("only one arm ran" + (" with runs of known cost" if cost_unknown else ""))
                    if not (tool[2] and base[2])
                    else f"too few repetitions ({reps[code]}) for an interval")
        row = rows[code]
        lines.append(_task_line(name, tool, base, interval, note,
                                category=t.category.names[category[row]],
                                control=control[row],
                                effect=None if control[row] else _effect(tool, base, totals)))
    return lines


_TASK_CELLS = 1 << 20
"""Task × repetition cells `_task_lines` holds at once (each arm's sums: 32 MB) when repetition
numbers are sparse or many."""


_Cells = tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.bool_] | None, int]


def _task_cells(t: RecordTable) -> list[_Cells]:
    """Batches of tasks for `_task_lines`: (their codes, each row's cell key, the rows in the
    batch (None: all), the cells per task). A cell is (task, repetition): usually the
    repetition number itself, every task at once. Where that matrix would be large (a
    repetition numbered 10^9, or many tasks each with its own numbers), a task's cells are
    its repetitions in order, and tasks go in batches of about `_TASK_CELLS` cells, so a
    stray number costs no memory: each task's line is the same either way but for the
    sums' last bits (the zeros of unused repetitions are not added)."""
    n_tasks = len(t.task.names)
    width = int(t.repetition.max()) + 1 if len(t) else 1
    if n_tasks * width <= max(4 * len(t), _TASK_CELLS):
        return [(np.arange(n_tasks), t.task.codes * width + t.repetition, None, width)]
    order = np.lexsort((t.repetition, t.task.codes))
    task, rep = t.task.codes[order], t.repetition[order]
    new_cell = np.ones(len(t), dtype=bool)
    new_cell[1:] = (task[1:] != task[:-1]) | (rep[1:] != rep[:-1])
    cell = np.cumsum(new_cell) - 1
    first = np.zeros(n_tasks, dtype=np.int64)
    first[task[::-1]] = cell[::-1]  # each task's first cell
    rank = np.empty(len(t), dtype=np.int64)
    rank[order] = cell - first[task]  # each row's repetition's place in its task
    count = np.bincount(task[new_cell], minlength=n_tasks)
    batches = []
    tasks: list[int] = []
    for code in np.argsort(count, kind="stable").tolist():
        if tasks and (len(tasks) + 1) * int(count[code]) > _TASK_CELLS:
            batches.append(tasks)
            tasks = []
        tasks.append(code)
    batches.append(tasks)
    out: list[_Cells] = []
    for batch in batches:
        codes = np.array(batch, dtype=np.int64)
        width = max(1, int(count[codes].max()))
        local = np.zeros(n_tasks, dtype=np.int64)
        local[codes] = np.arange(len(codes))
        rows = np.zeros(n_tasks, dtype=bool)
        rows[codes] = True
        out.append((codes, np.asarray(local[t.task.codes] * width + rank, dtype=np.int64),
                    np.asarray(rows[t.task.codes], dtype=np.bool_), width))
    return out


_Task = tuple[float, float, int]
"""One arm's spend, correct answers and runs on one task."""


def _task_line(key: str, tool: _Task, base: _Task, interval: Interval | None, note: str,
               **task: Any) -> Line:
    """`_line` of one task (its per-task means when both arms ran it, else each arm's own
    sums), in Python numbers."""
    (spend_t, correct_t, rt), (spend_b, correct_b, rb) = tool, base
    paired = rt > 0 and rb > 0
    cpc_t: float | None
    cpc_b: float | None
    if paired:
        cpc_t, cpc_b = _cpc(spend_t / rt, correct_t / rt), _cpc(spend_b / rb, correct_b / rb)
    else:  # an arm that did not run the task has no cost per correct (None), not ∞
        cpc_t = _cpc(spend_t, correct_t) if rt else None
        cpc_b = _cpc(spend_b, correct_b) if rb else None
    return Line(key=key, runs_tool=rt, runs_base=rb,
                accuracy_tool=correct_t / rt if rt else None,
                accuracy_base=correct_b / rb if rb else None, cpc_tool=cpc_t, cpc_base=cpc_b,
                delta=interval, note=note, spend_tool=spend_t, spend_base=spend_b,
                correct_tool=round(correct_t), correct_base=round(correct_b), tasks=int(paired),
                **task)


def _effect(tool: _Task, base: _Task, totals: list[tuple[float, float]]) -> float | None:
    """A task's share in log(cpc_tool / cpc_base) over the non-control tasks, to first
    order: (its share of the tool arm's spend − its share of its correct answers) minus the
    same for the base arm. Positive pushes the headline up. None: a task one arm did not run,
    or an arm with nothing correct or no spend."""
    (spend_t, correct_t), (spend_b, correct_b) = totals
    if not (tool[2] and base[2]) or min(spend_t, correct_t, spend_b, correct_b) <= 0:
        return None
    return float((tool[0] / spend_t - tool[1] / correct_t)
                 - (base[0] / spend_b - base[1] / correct_b))


def _line(key: str, st: _Sums, sb: _Sums, interval: Interval | None, note: str,
          arms: Settings | None = None) -> Line:
    """Runs, accuracy and cost per correct of each arm on the tasks both arms ran, from
    per-task means: exactly the population and estimand of `interval`, so
    cpc_tool / cpc_base − 1 is its estimate. With no task in common, each arm's own tasks.
    Spend, correct answers and mean turns are sums over the same tasks' runs. With `arms`
    (the settings), each arm's values also get their intervals."""
    paired = (st.runs > 0) & (sb.runs > 0)
    tasks = int(paired.sum())
    cpc_t: float | None
    cpc_b: float | None
    if paired.any():
        (mst, mct), (msb, mcb) = _means(st, paired), _means(sb, paired)
        cpc_t, cpc_b = _cpc(float(mst.sum()), float(mct.sum())), _cpc(float(msb.sum()),
                                                                     float(mcb.sum()))
        st, sb = (_Sums(a.spend[paired], a.correct[paired], a.runs[paired],
                        None if a.turns is None else a.turns[paired]) for a in (st, sb))
    else:  # an arm with no run has no cost per correct (None), not ∞ ("nothing correct")
        cpc_t, cpc_b = (_cpc(float(a.spend.sum()), float(a.correct.sum()))
                        if a.runs.sum() else None for a in (st, sb))
    rt, rb = int(st.runs.sum()), int(sb.runs.sum())
    ct, cb = float(st.correct.sum()), float(sb.correct.sum())

    def turns(x: _Sums, runs: int) -> float | None:
        """None with no run, or when a run did not report its turns (a NaN sum)."""
        if x.turns is None or not runs:
            return None
        total = float(x.turns.sum())
        return None if math.isnan(total) else total / runs

    return Line(key=key, runs_tool=rt, runs_base=rb, accuracy_tool=ct / rt if rt else None,
                accuracy_base=cb / rb if rb else None, cpc_tool=cpc_t, cpc_base=cpc_b,
                delta=interval, note=note,
                interval_tool=_arm_interval(st, arms, task_means=True) if arms else None,
                interval_base=_arm_interval(sb, arms, task_means=True) if arms else None,
                spend_tool=float(st.spend.sum()), spend_base=float(sb.spend.sum()),
                correct_tool=round(ct), correct_base=round(cb),
                mean_turns_tool=turns(st, rt), mean_turns_base=turns(sb, rb), tasks=tasks)


def _cpc(spend: float, correct: float) -> float:
    """Scalar cost per correct (the array version is for the bootstrap)."""
    return spend / correct if correct > 0 else math.inf


# ---------------------------------------------------------------- warnings


def _comparison_warnings(t: RecordTable, name: str, st: _Sums, sb: _Sums, headline: Interval,
                         control: Interval | None, s: Settings,
                         cost_unknown: bool = False) -> list[str]:
    out = []
    paired = (st.runs > 0) & (sb.runs > 0)
    unpaired = int(((st.runs > 0) ^ (sb.runs > 0)).sum())
    if unpaired:
        # runs of unknown cost are not in st, sb: the task may have run, at an unknown cost
        known = " with runs of known cost" if cost_unknown else ""
        out.append(f"{name}: {unpaired} task(s){known} ran in only one arm and are left out "
                   "of the comparison")
    if 0 < int(paired.sum()) < FEW_TASKS:
        out.append(f"{name}: only {int(paired.sum())} tasks; the interval is wide; more tasks "
                   "narrow it more than more repetitions")
    differ = np.flatnonzero(paired & (st.runs != sb.runs))
    if differ.size:
        shown = ", ".join(f"{t.task.names[i]} ({st.runs[i]}/{sb.runs[i]})"
                          for i in differ[:LISTED_TASKS])
        more = f" and {differ.size - LISTED_TASKS} more" if differ.size > LISTED_TASKS else ""
        out.append(f"{name}: run counts differ between the arms on {differ.size} task(s) "
                   f"(tool/base runs: {shown}{more}); each task's runs are averaged before the "
                   "ratio, so this does not bias the delta, but those tasks are measured less "
                   "precisely in one arm")
    eff = headline.effective_clusters
    if eff is not None and headline.clusters >= FEW_TASKS and eff < headline.clusters / 2:
        out.append(f"{name}: {headline.clusters} tasks weigh like {eff:.1f} equal ones (a few "
                   "tasks hold most of the spend or of the correct answers)")
    if control is None:
        out.append(f"{name}: no control tasks, so drift between the arms cannot be checked")
    elif control.clusters < MIN_CONTROL_TASKS:
        out.append(f"{name}: control drift not checked: {control.clusters} control tasks, need "
                   f"{MIN_CONTROL_TASKS}")
    elif (control.low is not None and control.high is not None
          and (control.low > 0 or control.high < 0)
          and not (control.low > s.thresholds.control_tolerance
                   or control.high < -s.thresholds.control_tolerance)):
        tol = s.thresholds.control_tolerance
        lines = (-tol, 0.0, tol)
        out.append(f"{name}: the control delta's interval [{pct_text(control.low, lines)}, "
                   f"{pct_text(control.high, lines)}] excludes zero but does not lie outside "
                   f"±{threshold_text(tol)} (some drift between the arms?)")
    correct = [float(a.correct[paired].sum()) for a in (st, sb)]
    spent = [float(a.spend[paired].sum()) for a in (st, sb)]
    if correct[0] == 0 and correct[1] > 0:
        out.append(f"{name}: the tool arm answered nothing correctly (cost per correct ∞)")
    for arm, other, free, effect in ((0, 1, "tool", "−100%"), (1, 0, "base", "+∞")):
        if spent[arm] == 0 and spent[other] > 0 and correct[arm] > 0:
            out.append(f"{name}: the {free} arm spent nothing on the {int(paired.sum())} tasks "
                       f"both arms ran (every counted run cost $0, so its cost per correct is "
                       f"$0): against $0 any cost is a delta of {effect}, and that decides the "
                       "verdict; is its model priced at 0, or did its runs report no usage?")
    return out


def _run_warnings(t: RecordTable, arms: list[ArmSummary], s: Settings) -> list[str]:
    out = []
    infra = int((t.outcome == INFRA).sum())
    if infra:
        out.append(f"{infra} run(s) excluded as infra errors (the harness failed, not the "
                   "agent); see exclusions")
    stopped = int((t.outcome == NOT_RUN).sum())
    if stopped:
        out.append(f"{stopped} run(s) not run: the scenario budget was spent")
    if t.correct_agent_errors:
        out.append(f"{t.correct_agent_errors} agent_error run(s) were graded correct; they count "
                   "as wrong (the agent failed before answering)")
    for arm in arms:
        if 0 < arm.runs < s.thresholds.min_runs:
            out.append(f"arm {arm.arm}: only {arm.runs} runs (minimum {s.thresholds.min_runs})")
        if arm.runs and arm.correct == 0:
            out.append(f"arm {arm.arm}: nothing correct, cost per correct is ∞")

        if arm.flags.get("cost_divergence"):
            out.append(f"arm {arm.arm}: {arm.flags['cost_divergence']} run(s) where the vendor "
                       "cost and the token-priced cost diverge")
        if arm.flags.get("model_remapped"):
            code = t.arm.code(arm.arm)
            served = sorted({t.served.names[t.served.codes[i]] for i in range(len(t))
                             if t.arm.codes[i] == code and "model_remapped" in t.flags[i]})
            out.append(f"arm {arm.arm}: {arm.flags['model_remapped']} run(s) were answered by "
                       f"another model than the one asked for ({', '.join(served)}); their "
                       "cost follows the model served")
        if arm.flags.get("tool_failed"):
            out.append(f"arm {arm.arm}: the tool under test failed in "
                       f"{arm.flags['tool_failed']} run(s) (flag tool_failed: every call to it "
                       "came back an error, or its hook failed (an error status, no start or a "
                       "timeout) and the tool went unused); their cost and answers count as "
                       "the tool's result")
        if arm.flags.get("tests_modified"):
            out.append(f"arm {arm.arm}: {arm.flags['tests_modified']} run(s) changed test or "
                       "test-runner files (dropped before grading)")
    if len(t) and t.reached.any():
        per_cell = np.bincount(t.task.codes[t.reached] * len(t.arm.names)
                               + t.arm.codes[t.reached])
        if per_cell[per_cell > 0].max() == 1:
            out.append("a single repetition per task and arm: run-to-run noise is not measured "
                       "apart from task differences")
    # against the run's date (a report read a year later does not go stale), with the dates
    # the records carry (any runner, bundled or custom), else the bundled tables' own
    today = s.today or t.run_date or dt.date.today()
    carried = dict(t.pricing)
    for runner in t.runner.names:
        updated = carried.get(runner) or s.pricing_updated.get(runner)
        if updated and (today - updated).days > STALE_PRICING_DAYS:
            out.append(f"runner {runner}: prices last checked {updated.isoformat()}, more than "
                       f"{STALE_PRICING_DAYS} days before the run ({today.isoformat()}): "
                       "computed costs may be stale")
        elif updated and runner in carried and (updated - today).days > 1:
            # the records' own date later than their run: a typo (2062) that silences the
            # above (the bundled tables' date may well be later than an old run's)
            out.append(f"runner {runner}: prices last checked {updated.isoformat()}, after the "
                       f"run ({today.isoformat()}): the date is wrong, so how old the prices "
                       "are is unknown; computed costs may be stale")
    return out


def _num(value: float | FloatArray) -> float | None:
    v = float(value)
    return None if math.isnan(v) else v


def _unique(items: list[str]) -> list[str]:
    return list(dict.fromkeys(items))
