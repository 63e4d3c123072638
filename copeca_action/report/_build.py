"""RunRecords → Report: arms, comparisons, breakdowns, verdict, warnings."""

from __future__ import annotations

import dataclasses
import datetime as dt
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray

from copeca_action.plan import BASE_SUFFIX
from copeca_action.records import OUTCOMES, RunRecord
from copeca_action.report._model import (
    AdoptedLine,
    ArmInterval,
    ArmSummary,
    Comparison,
    ComparisonKind,
    Exclusions,
    Interval,
    Line,
    Report,
    Verdict,
)
from copeca_action.report._retrieval import retrieval_section
from copeca_action.report._spend import judge_spend, spend_warnings
from copeca_action.report._stats import (
    DEFAULT_METHOD,
    HYBRID_BELOW,
    FloatArray,
    IntervalMethod,
    arm_bootstrap,
    paired_bootstrap,
)
from copeca_action.report._table import INFRA, NOT_RUN, RecordTable, table_from_records
from copeca_action.report._verdict import judge
from copeca_action.scenario import Scenario, Thresholds

BASELINE = "baseline"
FEW_TASKS = HYBRID_BELOW
"""Below this many tasks the headline interval uses the small-sample rule; warn."""
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

    @classmethod
    def from_scenario(cls, scenario: Scenario, **overrides: object) -> Settings:
        base = cls(thresholds=scenario.thresholds, seed=scenario.seed,
                   resamples=scenario.resamples)
        return dataclasses.replace(base, **overrides)  # type: ignore[arg-type]


@dataclass(frozen=True)
class _Sums:
    spend: FloatArray
    correct: FloatArray
    runs: NDArray[np.int64]


def build_report(records: Iterable[RunRecord] | RecordTable, settings: Settings | None = None,
                 *, scenario: str = "", source_format: str = "copeca-action") -> Report:
    """The whole analysis. Pure: the same records and settings give the same report."""
    s = settings or Settings()
    table = records if isinstance(records, RecordTable) else table_from_records(records)
    warnings: list[str] = list(table.extra_warnings)
    arms = [_arm_summary(table, code, name, s) for code, name in enumerate(table.arm.names)]
    pairs = _pairs(table.arm.names)
    comparisons = [_compare(table, kind, tool, base, s, warnings) for kind, tool, base in pairs]
    headline = _headline(comparisons)
    if headline is None:
        verdict: Verdict = "skipped"
        reasons = ["no tool arm with a baseline or base-ref arm to compare"
                   if len(table) else "no records"]
    else:
        verdict, reasons = comparisons[headline].verdict, comparisons[headline].reasons
    verdict, reasons, comparisons = judge_spend(table.spend, verdict, reasons, comparisons)
    warnings += spend_warnings(table.spend)
    warnings += _run_warnings(table, arms, s)
    infra = table.outcome == INFRA
    stopped = table.outcome == NOT_RUN
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
        thresholds=s.thresholds, seed=s.seed, resamples=s.resamples, alpha=s.alpha,
        interval_method=s.method,
        source_format="copeca" if source_format == "copeca" else "copeca-action",
        retrieval=retrieval_section(table, pairs, seed=s.seed, resamples=s.resamples,
                                    alpha=s.alpha, method=s.method))


# ---------------------------------------------------------------- arms


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
        cpc_usd=_cpc(spend, correct),
        outcomes={o: int(n) for o, n in zip(OUTCOMES, outcome_counts, strict=True) if n},
        tokens=dict(zip(("input", "output", "cache_write", "cache_read"),
                        (int(x) for x in tokens), strict=True)),
        mean_turns=float(t.turns[reached].mean()) if runs else None,
        mean_tool_calls=float(t.tool_calls[reached].mean()) if runs else None,
        duration_s=float(t.duration[reached].sum()),
        adoption_rate=float((t.adopted[ruled] == 1).mean()) if ruled.any() else None,
        flags=t.flag_counts(reached),
        models=sorted({t.model.names[c] for c in np.unique(t.model.codes[rows])}),
        cli_versions=sorted({t.cli_version.names[c] for c in np.unique(t.cli_version.codes[rows])}
                            - {""}),
        interval=_arm_interval(sums, s))


def _arm_interval(arm: _Sums, s: Settings) -> ArmInterval | None:
    """Over the tasks this arm ran, with the report's seed: on the same tasks as a
    comparison, the resamples are the ones its delta used."""
    ran = arm.runs > 0
    if not ran.any():
        return None
    b = arm_bootstrap(arm.spend[ran], arm.correct[ran], arm.runs[ran].astype(np.float64),
                      alpha=s.alpha, resamples=s.resamples, seed=s.seed, method=s.method)
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


def _headline(comparisons: list[Comparison]) -> int | None:
    return 0 if comparisons else None


def _sums(t: RecordTable, rows: NDArray[np.bool_], keys: NDArray[np.int64], n: int) -> _Sums:
    k = keys[rows]
    return _Sums(np.bincount(k, weights=t.cost[rows], minlength=n).astype(np.float64),
                 np.bincount(k, weights=t.correct[rows].astype(np.float64),
                             minlength=n).astype(np.float64),
                 np.bincount(k, minlength=n).astype(np.int64))


def _interval(tool: _Sums, base: _Sums, s: Settings, resamples: int, alpha: float,
              unit: str = "task") -> Interval:
    """Bootstrap over the clusters where both arms have at least one run."""
    paired = (tool.runs > 0) & (base.runs > 0)
    bs = paired_bootstrap(tool.spend[paired], tool.correct[paired], base.spend[paired],
                          base.correct[paired], alpha=alpha, resamples=resamples, seed=s.seed,
                          method=s.method, runs_t=tool.runs[paired], runs_b=base.runs[paired])
    return Interval(estimate=_num(bs.estimate), low=_num(bs.low), high=_num(bs.high),
                    level=1 - alpha, method=s.method, clusters=bs.n_clusters,
                    unit="repetition" if unit == "repetition" else "task", resamples=resamples)


def _compare(t: RecordTable, kind: ComparisonKind, tool: str, base: str, s: Settings,
             warnings: list[str]) -> Comparison:
    tc, bc = t.arm.code(tool), t.arm.code(base)
    n_tasks = len(t.task.names)
    tool_rows = t.reached & (t.arm.codes == tc)
    base_rows = t.reached & (t.arm.codes == bc)
    main = ~t.control
    st, sb = (_sums(t, r & main, t.task.codes, n_tasks) for r in (tool_rows, base_rows))
    headline = _interval(st, sb, s, s.resamples, s.alpha)
    control = None
    control_line = None
    if (t.control & (tool_rows | base_rows)).any():
        ct, cb = (_sums(t, r & t.control, t.task.codes, n_tasks) for r in (tool_rows, base_rows))
        control = _interval(ct, cb, s, s.resamples, s.alpha)
        control_line = _line("control", ct, cb, control, "", s)
    ruled = tool_rows & main & (t.adopted >= 0)
    adoption = float((t.adopted[ruled] == 1).mean()) if ruled.any() else None
    adopted = None
    if adoption is not None and adoption > 0:
        sa = _sums(t, tool_rows & main & (t.adopted == 1), t.task.codes, n_tasks)
        adopted = AdoptedLine(adoption_rate=adoption, runs=int(sa.runs.sum()),
                              delta=_interval(sa, sb, s, s.resamples, s.alpha))
    verdict, reasons = judge(
        estimate=headline.estimate, low=headline.low, high=headline.high,
        control_low=control.low if control else None,
        control_high=control.high if control else None,
        runs_tool=int(tool_rows.sum()), runs_base=int(base_rows.sum()), adoption=adoption,
        thresholds=s.thresholds, records_tool=int((t.arm.codes == tc).sum()),
        records_base=int((t.arm.codes == bc).sum()))
    name = f"{tool} vs {base}"
    warnings += _comparison_warnings(t, name, st, sb, headline, control, tc, bc, s)
    alert = headline.estimate is not None and headline.estimate > s.thresholds.alert
    if alert:
        warnings.append(f"{name}: cost per correct up {headline.estimate:+.1%}, above the alert "
                        f"threshold {s.thresholds.alert:.0%}")
    return Comparison(
        name=name, kind=kind, tool=tool, base=base, delta=headline, control_delta=control,
        adopted=adopted, verdict=verdict, reasons=reasons, alert=alert,
        capabilities=_lines_by(t, t.category.codes, t.category.names, tool_rows & main,
                               base_rows & main, s),
        languages=_lines_by(t, t.language.codes, t.language.names, tool_rows & main,
                            base_rows & main, s),
        models=_lines_by(t, t.model.codes, t.model.names, tool_rows & main, base_rows & main, s),
        tasks=_task_lines(t, tool_rows, base_rows, s),
        overall=_line("overall", st, sb, headline, "", s), control=control_line)


def _lines_by(t: RecordTable, codes: NDArray[np.int64], names: tuple[str, ...],
              tool_rows: NDArray[np.bool_], base_rows: NDArray[np.bool_],
              s: Settings) -> list[Line]:
    """One line per label (capability or language), clustering by task."""
    lines = []
    n_tasks = len(t.task.names)
    for code, name in enumerate(names):
        if not name:
            continue
        sel = codes == code
        st, sb = (_sums(t, r & sel, t.task.codes, n_tasks) for r in (tool_rows, base_rows))
        if st.runs.sum() == 0 and sb.runs.sum() == 0:
            continue
        paired = int(((st.runs > 0) & (sb.runs > 0)).sum())
        interval = (_interval(st, sb, s, s.breakdown_resamples, s.alpha)
                    if paired >= s.min_clusters else None)
        note = "" if interval else f"too few tasks ({paired}) for an interval"
        lines.append(_line(name, st, sb, interval, note))
    return lines


def _task_lines(t: RecordTable, tool_rows: NDArray[np.bool_], base_rows: NDArray[np.bool_],
                s: Settings) -> list[Line]:
    """One line per task, resampling repetitions (pairs of the same repetition index);
    tasks with the same number of repetitions are bootstrapped together in one batch."""
    n_tasks = len(t.task.names)
    width = int(t.repetition.max()) + 1 if len(t) else 1
    keys = t.task.codes * width + t.repetition
    st, sb = (_sums(t, r, keys, n_tasks * width) for r in (tool_rows, base_rows))
    shape = (n_tasks, width)
    used = ((st.runs > 0) | (sb.runs > 0)).reshape(shape)
    reps = used.sum(axis=1)
    has_t = st.runs.reshape(shape).sum(axis=1) > 0
    has_b = sb.runs.reshape(shape).sum(axis=1) > 0
    intervals: dict[int, Interval] = {}
    for n in np.unique(reps[has_t & has_b]):
        if n < s.min_clusters:
            continue
        group = np.flatnonzero(has_t & has_b & (reps == n))
        mask = used[group]

        def pick(a: FloatArray, g: NDArray[np.int64] = group, m: NDArray[np.bool_] = mask,
                 k: int = int(n)) -> FloatArray:
            return a.reshape(shape)[g][m].reshape(len(g), k)

        bs = paired_bootstrap(pick(st.spend), pick(st.correct), pick(sb.spend),
                              pick(sb.correct), alpha=s.alpha, resamples=s.breakdown_resamples,
                              seed=s.seed, method=s.method,
                              runs_t=pick(st.runs.astype(np.float64)),
                              runs_b=pick(sb.runs.astype(np.float64)))
        for j, task in enumerate(group):
            intervals[int(task)] = Interval(
                estimate=_num(bs.estimate[j]), low=_num(bs.low[j]), high=_num(bs.high[j]),
                level=1 - s.alpha, method=s.method, clusters=int(n), unit="repetition",
                resamples=s.breakdown_resamples)
    lines = []
    per_task = [_Sums(a.spend.reshape(shape).sum(1), a.correct.reshape(shape).sum(1),
                      a.runs.reshape(shape).sum(1)) for a in (st, sb)]
    for code, name in enumerate(t.task.names):
        if not (has_t[code] or has_b[code]):
            continue
        one = [_Sums(a.spend[code:code + 1], a.correct[code:code + 1], a.runs[code:code + 1])
               for a in per_task]
        interval = intervals.get(code)
        note = ""
        if interval is None:
            note = ("only one arm ran" if not (has_t[code] and has_b[code])
                    else f"too few repetitions ({int(reps[code])}) for an interval")
        lines.append(_line(name, one[0], one[1], interval, note))
    return lines


def _line(key: str, st: _Sums, sb: _Sums, interval: Interval | None, note: str,
          arms: Settings | None = None) -> Line:
    """With `arms` (the settings), each arm's values also get their intervals."""
    rt, rb = int(st.runs.sum()), int(sb.runs.sum())
    ct, cb = float(st.correct.sum()), float(sb.correct.sum())
    return Line(key=key, runs_tool=rt, runs_base=rb, accuracy_tool=ct / rt if rt else None,
                accuracy_base=cb / rb if rb else None,
                cpc_tool=_cpc(float(st.spend.sum()), ct), cpc_base=_cpc(float(sb.spend.sum()), cb),
                delta=interval, note=note,
                interval_tool=_arm_interval(st, arms) if arms else None,
                interval_base=_arm_interval(sb, arms) if arms else None)


def _cpc(spend: float, correct: float) -> float:
    """Scalar cost per correct (the array version is for the bootstrap)."""
    return spend / correct if correct > 0 else math.inf


# ---------------------------------------------------------------- warnings


def _comparison_warnings(t: RecordTable, name: str, st: _Sums, sb: _Sums, headline: Interval,
                         control: Interval | None, tc: int, bc: int, s: Settings) -> list[str]:
    out = []
    paired = (st.runs > 0) & (sb.runs > 0)
    unpaired = int(((st.runs > 0) ^ (sb.runs > 0)).sum())
    if unpaired:
        out.append(f"{name}: {unpaired} task(s) ran in only one arm and are left out of the "
                   "comparison")
    if 0 < int(paired.sum()) < FEW_TASKS:
        out.append(f"{name}: only {int(paired.sum())} tasks; the interval uses the small-sample "
                   "rule (wider); more tasks narrow it more than more repetitions")
    if control is None:
        out.append(f"{name}: no control tasks, so drift between the arms cannot be checked")
    elif control.estimate is not None and abs(control.estimate) > s.thresholds.control_tolerance:
        out.append(f"{name}: control delta {control.estimate:+.1%} is outside "
                   f"±{s.thresholds.control_tolerance:.0%} (drift between arms?)")
    for label, col in (("CLI versions", t.cli_version), ("models", t.model)):
        a = {col.names[c] for c in np.unique(col.codes[t.arm.codes == tc])} - {""}
        b = {col.names[c] for c in np.unique(col.codes[t.arm.codes == bc])} - {""}
        if a and b and a != b:
            out.append(f"{name}: {label} differ between arms ({', '.join(sorted(a))} vs "
                       f"{', '.join(sorted(b))})")
    if headline.estimate is not None and math.isinf(headline.estimate):
        out.append(f"{name}: the tool arm answered nothing correctly (cost per correct ∞)")
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
    for arm in arms:
        if 0 < arm.runs < s.thresholds.min_runs:
            out.append(f"arm {arm.arm}: only {arm.runs} runs (minimum {s.thresholds.min_runs})")
        if arm.runs and arm.correct == 0:
            out.append(f"arm {arm.arm}: nothing correct, cost per correct is ∞")
        if arm.flags.get("cost_divergence"):
            out.append(f"arm {arm.arm}: {arm.flags['cost_divergence']} run(s) where the vendor "
                       "cost and the token-priced cost diverge")
    if len(t) and t.reached.any():
        per_cell = np.bincount(t.task.codes[t.reached] * len(t.arm.names)
                               + t.arm.codes[t.reached])
        if per_cell[per_cell > 0].max() == 1:
            out.append("a single repetition per task and arm: run-to-run noise is not measured "
                       "apart from task differences")
    today = s.today or dt.date.today()
    for runner in t.runner.names:
        updated = s.pricing_updated.get(runner)
        if updated and (today - updated).days > STALE_PRICING_DAYS:
            out.append(f"runner {runner}: prices last checked {updated.isoformat()}, more than "
                       f"{STALE_PRICING_DAYS} days ago (computed costs may be stale)")
    return out


def _num(value: float | FloatArray) -> float | None:
    v = float(value)
    return None if math.isnan(v) else v


def _unique(items: list[str]) -> list[str]:
    return list(dict.fromkeys(items))
