"""A finished Report → the PR comment's data and the action's outputs.

Only reads: every number comes from the Report (and the bundle's name, digest and key id);
nothing is recomputed here, so the comment, report.md and the signed summary agree.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from copeca_action import __version__
from copeca_action.github._comment_data import (
    AdoptionLine,
    Bounds,
    CapabilityRow,
    CommentData,
    ComparisonRow,
    Estimate,
    FlagRow,
    Footer,
    Headline,
    MetricRow,
    RetrievalRow,
    RunFacts,
    TaskRow,
    Unit,
)
from copeca_action.report import (
    WORST_FIRST,
    ArmInterval,
    ArmSummary,
    Comparison,
    Interval,
    Report,
)
from copeca_action.scenario import Task

_FRACTION_WORDS = ("coverage", "precision", "recall", "f1", "auc", "redundancy")


@dataclass(frozen=True)
class BundleInfo:
    """The bundle as written and verified (None: no bundle)."""

    path: Path | None
    sha256: str | None
    keyid: str | None


def finite(value: float | None) -> float | None:
    return None if value is None or not math.isfinite(value) else value


def _not_nan(value: float | None) -> float | None:
    """Infinite bounds stay (shown as ±∞: a bound can be unbounded); NaN is not a number."""
    return None if value is None or math.isnan(value) else value


def estimate(i: Interval | None) -> Estimate | None:
    if i is None:
        return None
    return Estimate(delta=_not_nan(i.estimate), ci_low=_not_nan(i.low),
                    ci_high=_not_nan(i.high))


def _ratio(tool: float | None, base: float | None) -> Estimate | None:
    """A point change without an interval (spend): the report gives no CI for it."""
    if tool is None or base is None or base == 0:
        return None
    return Estimate(delta=tool / base - 1)


def _per_run(spend: float | None, runs: int) -> float | None:
    return None if spend is None or not runs else spend / runs


def cpc_bounds(i: ArmInterval | None) -> Bounds | None:
    if i is None or i.cpc_low is None or i.cpc_high is None:
        return None
    return Bounds(low=i.cpc_low, high=finite(i.cpc_high))


def accuracy_bounds(i: ArmInterval | None) -> Bounds | None:
    return None if i is None else Bounds(low=i.accuracy_low, high=i.accuracy_high)


def metric_rows(c: Comparison, base: ArmSummary, tool: ArmSummary) -> list[MetricRow]:
    """Every row on one population, the headline's (`overall`: the non-control tasks its
    delta compares), each arm's values with its own interval where it has one; reports
    written before the line had spend and turns fall back to the whole arm's."""
    main = c.overall
    cpc_b, cpc_t = (main.cpc_base, main.cpc_tool) if main else (base.cpc_usd, tool.cpc_usd)
    acc_b, acc_t = ((main.accuracy_base, main.accuracy_tool) if main
                    else (base.accuracy, tool.accuracy))
    ib, it = (main.interval_base, main.interval_tool) if main else (base.interval,
                                                                    tool.interval)
    rows = [MetricRow(metric="Cost per correct", unit="usd", baseline=finite(cpc_b),
                      tool=finite(cpc_t), estimate=estimate(c.delta),
                      baseline_ci=cpc_bounds(ib), tool_ci=cpc_bounds(it))]
    acc = None if acc_b is None or acc_t is None else Estimate(delta=acc_t - acc_b)
    rows.append(MetricRow(metric="Accuracy", unit="fraction", baseline=acc_b, tool=acc_t,
                          estimate=acc, delta_kind="points", baseline_ci=accuracy_bounds(ib),
                          tool_ci=accuracy_bounds(it)))
    one = main is not None and main.spend_tool is not None and main.spend_base is not None
    spend_b, spend_t = ((main.spend_base, main.spend_tool) if one and main
                        else (base.spend_usd, tool.spend_usd))
    runs_b, runs_t = (main.runs_base, main.runs_tool) if one and main else (base.runs, tool.runs)
    turns_b, turns_t = ((main.mean_turns_base, main.mean_turns_tool) if one and main
                        else (base.mean_turns, tool.mean_turns))
    # per run: the arms' sums are over different run counts whenever a run was lost (an
    # infra error, a budget stop), and a raw ratio of them measured the lost runs, not the
    # tool; an arm with no run has no spend per run (n/a, never a "−100%" change)
    per_b, per_t = _per_run(spend_b, runs_b), _per_run(spend_t, runs_t)
    rows.append(MetricRow(metric="Spend per run", unit="usd", baseline=per_b, tool=per_t,
                          estimate=_ratio(per_t, per_b)))
    rows.append(MetricRow(metric="Runs", unit="count", baseline=runs_b, tool=runs_t))
    if turns_t is not None or turns_b is not None:
        rows.append(MetricRow(metric="Turns per run", unit="mean", baseline=turns_b,
                              tool=turns_t, estimate=_ratio(turns_t, turns_b)))
    if c.control_delta is not None:
        ctl = c.control
        rows.append(MetricRow(metric="Cost per correct", unit="usd",
                              baseline=finite(ctl.cpc_base) if ctl else None,
                              tool=finite(ctl.cpc_tool) if ctl else None,
                              estimate=estimate(c.control_delta), control=True,
                              baseline_ci=cpc_bounds(ctl.interval_base) if ctl else None,
                              tool_ci=cpc_bounds(ctl.interval_tool) if ctl else None))
    return rows


def capability_rows(c: Comparison, tasks: Mapping[str, Task]) -> list[CapabilityRow]:
    """Capability lines are on non-control tasks; so is their count of tasks."""
    per_category: dict[str, int] = {}
    for line in c.tasks:
        task = tasks.get(line.key)
        control = line.control if line.control is not None else bool(task and task.control)
        category = line.category or (task.category if task else "")
        if category and not control:
            per_category[category] = per_category.get(category, 0) + 1
    return [CapabilityRow(category=line.key,
                          tasks=line.tasks if line.tasks is not None
                          else per_category.get(line.key, 0),
                          baseline_accuracy=line.accuracy_base,
                          tool_accuracy=line.accuracy_tool, estimate=estimate(line.delta))
            for line in c.capabilities]


RETRIEVAL_HEADLINE = ("trajectory.span.auc", "span.coverage", "span.precision")
"""The comment's three retrieval metrics (how early, how much, how precise); the report
has the rest."""


def retrieval_rows(report: Report, c: Comparison,
                   keys: tuple[str, ...] | None = RETRIEVAL_HEADLINE) -> list[RetrievalRow]:
    """The comparison's retrieval lines (only `keys`, in that order; None: all of them)."""
    if report.retrieval is None:
        return []
    for comp in report.retrieval.comparisons:
        if comp.name == c.name:
            unit: Unit
            rows = []
            lines = (comp.lines if keys is None else
                     [ln for k in keys for ln in comp.lines if ln.metric == k])
            for line in lines:
                unit = ("fraction" if any(w in line.metric.lower() for w in _FRACTION_WORDS)
                        else "number")
                rows.append(RetrievalRow(metric=f"{line.label} ({line.aggregation})",
                                         baseline=finite(line.base), tool=finite(line.tool),
                                         unit=unit))
            return rows
    return []


def flag_rows(base: ArmSummary, tool: ArmSummary) -> list[FlagRow]:
    names = sorted(set(base.flags) | set(tool.flags))
    return [FlagRow(flag=n, baseline=base.flags.get(n, 0), tool=tool.flags.get(n, 0),
                    detail=f"{base.flags.get(n, 0)} of {base.runs} / "
                    f"{tool.flags.get(n, 0)} of {tool.runs} runs") for n in names]


def _correct(accuracy: float | None, runs: int) -> int:
    return 0 if accuracy is None else round(accuracy * runs)


def task_rows(c: Comparison, tasks: Mapping[str, Task]) -> list[TaskRow]:
    """Largest effect on the headline first (report `Line.effect`), then tasks without one
    (one arm only, control tasks), by id; category and control come from the report (they
    travel with the records, so `merge` keeps them), the corpus only for older reports."""
    rows = []
    for line in c.tasks:
        task = tasks.get(line.key)
        rows.append(TaskRow(
            task_id=line.key, category=line.category or (task.category if task else ""),
            control=line.control if line.control is not None else bool(task and task.control),
            effect=line.effect,
            baseline_correct=_correct(line.accuracy_base, line.runs_base),
            baseline_runs=line.runs_base,
            tool_correct=_correct(line.accuracy_tool, line.runs_tool), tool_runs=line.runs_tool,
            # ∞ (ran, nothing correct) stays ∞; None (no run there) is n/a, as in report.md
            baseline_cost_usd=_not_nan(line.cpc_base), tool_cost_usd=_not_nan(line.cpc_tool),
            note=line.note))
    rows.sort(key=lambda r: (r.effect is None, -abs(r.effect or 0.0), r.task_id))
    return rows


def shared_note(rows: list[TaskRow]) -> str:
    """A note every task row has (e.g. too few repetitions for an interval): said once."""
    notes = {r.note for r in rows}
    return notes.pop() if len(rows) > 1 and len(notes) == 1 else ""


@dataclass(frozen=True)
class Measured:
    """The commits the comment names (github/_engine.py `measured_commits`)."""

    commits: list[tuple[str, str]]
    """(label, sha): the tool's commit as measured, then for head vs base the base's."""
    merged_from: tuple[str, str] | None = None
    """(PR head, base commit) when the measured commit is the PR's merge commit."""
    pr_head: str | None = None
    """The PR head when the measured commit is neither it nor its merge commit."""


def run_facts(report: Report, commits: list[tuple[str, str]],
              measured: Measured | None = None) -> RunFacts:
    sp = report.spend
    counted = sum(a.spend_usd for a in report.arms)
    return RunFacts(spend_usd=sp.total_usd if sp is not None else counted,
                    excluded_usd=sp.excluded_usd if sp is not None else 0.0,
                    excluded_attempts=sp.excluded_attempts if sp is not None else 0,
                    unknown_attempts=sp.unknown_attempts if sp is not None else 0,
                    lower_bound_attempts=sp.lower_bound_attempts if sp is not None else 0,
                    died_attempts=sp.died_attempts if sp is not None else 0,
                    died_lower_bound=sp.died_lower_bound if sp is not None else 0,
                    # a run that did not report its duration: agent time unknown, not 0
                    duration_s=None if any(a.duration_s is None for a in report.arms)
                    else sum(a.duration_s or 0.0 for a in report.arms),
                    runs=sum(a.runs for a in report.arms),
                    models=sorted({m for a in report.arms for m in a.models}),
                    cli_versions=sorted({v for a in report.arms for v in a.cli_versions}),
                    commits=measured.commits if measured else commits,
                    merged_from=measured.merged_from if measured else None,
                    pr_head=measured.pr_head if measured else None)


def warnings_for(report: Report, base: ArmSummary | None, tool: ArmSummary | None,
                 bundle: BundleInfo) -> list[str]:
    out = list(report.warnings)
    if base is not None and tool is not None:
        if sorted(base.cli_versions) != sorted(tool.cli_versions):
            out.append(f"CLI versions differ between arms: {base.arm} "
                       f"{', '.join(base.cli_versions) or 'none'}; {tool.arm} "
                       f"{', '.join(tool.cli_versions) or 'none'}.")
        if sorted(base.models) != sorted(tool.models):
            out.append(f"Models differ between arms: {base.arm} {', '.join(base.models)}; "
                       f"{tool.arm} {', '.join(tool.models)}.")
    if bundle.path is not None and bundle.keyid is None:
        out.append("The bundle is unsigned: set the `signing-key` input so anyone can verify "
                   "who produced these numbers.")
    return out


def comparison_rows(report: Report) -> list[ComparisonRow]:
    """Every comparison with its own verdict: the deciding ones (the headline's kind) worst
    first, as the report's reasons list them, then the others in the report's order."""
    head = report.headline_comparison
    kind = head.kind if head is not None else None
    rows = [ComparisonRow(name=c.name, verdict=c.verdict, deciding=c.kind == kind,
                          estimate=estimate(c.delta) or Estimate(delta=None))
            for c in report.comparisons]
    return sorted(rows, key=lambda r: (not r.deciding,
                                       WORST_FIRST.index(r.verdict) if r.deciding else 0))


def comment_data(report: Report, bundle: BundleInfo, *, comment_id: str,
                 tasks: Mapping[str, Task], run_url: str | None = None,
                 full_report: str = "",
                 commits: list[tuple[str, str]] | None = None,
                 measured: Measured | None = None) -> CommentData:
    """`commits`: (label, sha) of what was compared, e.g. [("PR head", …), ("base", …)];
    `measured`, when given, says it with the merge commit's parents (it wins)."""
    c = report.headline_comparison
    arms = {a.arm: a for a in report.arms}
    base = arms.get(c.base) if c else None
    tool = arms.get(c.tool) if c else None
    level = c.delta.level if c else 1 - report.alpha
    footer = Footer(alert_threshold=report.thresholds.alert,
                    fail_threshold=report.thresholds.fail,
                    control_tolerance=report.thresholds.control_tolerance, seed=report.seed,
                    resamples=report.resamples, confidence=level, scenario=report.scenario,
                    bundle_name=bundle.path.name if bundle.path else None,
                    bundle_sha256=bundle.sha256, key_id=bundle.keyid, run_url=run_url,
                    version=__version__)
    data: dict[str, object] = {
        "comment_id": comment_id, "verdict": report.verdict,
        # one reason per comparison (several tools) or per rule that applied (an unknown
        # cost beside the interval's): kept apart as report.md and report.html keep them
        "verdict_reason": "; ".join(report.verdict_reasons),
        "footer": footer,
        "warnings": warnings_for(report, base, tool, bundle), "full_report": full_report,
        "simulated": report.simulation_note, "run": run_facts(report, commits or [], measured),
        "look": report.look_note}
    if report.multiplicity is not None:
        data.update(multiplicity=report.multiplicity.note,
                    comparisons=comparison_rows(report))
    if c is not None and base is not None and tool is not None:
        head_est = estimate(c.delta)
        assert head_est is not None
        data.update(
            headline=Headline(estimate=head_est,
                              versus="base" if c.kind == "head_vs_base" else "baseline",
                              comparison=c.name if report.multiplicity is not None else ""),
            metrics=metric_rows(c, base, tool), capabilities=capability_rows(c, tasks),
            retrieval=retrieval_rows(report, c), flags=flag_rows(base, tool),
            tasks=task_rows(c, tasks))
        data["task_note"] = shared_note(data["tasks"])  # type: ignore[arg-type]
        if c.overall is not None and c.overall.tasks is not None:
            n = c.overall.tasks
            data["population"] = (f"{n} non-control task{'' if n == 1 else 's'} both arms "
                                  "ran (the tasks the headline compares)")
        if c.adopted is not None:
            adopted = estimate(c.adopted.delta)
            assert adopted is not None
            data["adoption"] = AdoptionLine(adoption=c.adopted.adoption_rate, estimate=adopted)
    return CommentData.model_validate(data)


def _num(value: float | None) -> str:
    """An output's number: `Infinity` / `-Infinity` for an unbounded one (a GitHub expression
    reads them as ±∞, as JavaScript's and Python's number parsing do); empty when there is no
    number (unknown, undefined), never a digit that was not computed. An expression reads an
    empty string as 0, so a workflow tests `!= ''` first (docs/action.md)."""
    if value is not None and math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    value = finite(value)
    return "" if value is None else f"{value:.6g}"


def output_values(report: Report, bundle: BundleInfo, report_path: Path | None) -> dict[str, str]:
    """The action's outputs (DESIGN.md); the badge and comment url are set when published."""
    c = report.headline_comparison
    arms = {a.arm: a for a in report.arms}
    out = {"verdict": report.verdict, "simulated": "true" if report.simulated else "false",
           "bundle-path": str(bundle.path) if bundle.path else "",
           "bundle-sha256": bundle.sha256 or "",
           "report-path": str(report_path) if report_path else ""}
    if c is not None:
        out.update({"delta": _num(c.delta.estimate), "delta-ci-low": _num(c.delta.low),
                    "delta-ci-high": _num(c.delta.high),
                    # the interval's level: 0.95, or the adaptive look's / the split alpha's
                    "delta-ci-level": _num(c.delta.level),
                    "control-delta": _num(c.control_delta.estimate) if c.control_delta else "",
                    "cpc-baseline": _num(c.overall.cpc_base) if c.overall else
                    _num(arms[c.base].cpc_usd) if c.base in arms else "",
                    "cpc-tool": _num(c.overall.cpc_tool) if c.overall else
                    _num(arms[c.tool].cpc_usd) if c.tool in arms else ""})
    return out
