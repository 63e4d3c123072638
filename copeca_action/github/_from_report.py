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
    Estimate,
    FlagRow,
    Footer,
    Headline,
    MetricRow,
    RetrievalRow,
    TaskRow,
    Unit,
)
from copeca_action.render import mermaid_chart
from copeca_action.report import ArmInterval, ArmSummary, Comparison, Interval, Report
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


def cpc_bounds(i: ArmInterval | None) -> Bounds | None:
    if i is None or i.cpc_low is None or i.cpc_high is None:
        return None
    return Bounds(low=i.cpc_low, high=finite(i.cpc_high))


def accuracy_bounds(i: ArmInterval | None) -> Bounds | None:
    return None if i is None else Bounds(low=i.accuracy_low, high=i.accuracy_high)


def metric_rows(c: Comparison, base: ArmSummary, tool: ArmSummary) -> list[MetricRow]:
    """Cost per correct and accuracy on the headline's tasks (non-control, as `delta`), when
    the report carries them, each with its arm's own interval; spend and runs are the whole
    arm's."""
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
    rows.append(MetricRow(metric="Spend", unit="usd", baseline=base.spend_usd,
                          tool=tool.spend_usd, estimate=_ratio(tool.spend_usd, base.spend_usd)))
    rows.append(MetricRow(metric="Runs", unit="count", baseline=base.runs, tool=tool.runs))
    if tool.mean_turns is not None or base.mean_turns is not None:
        rows.append(MetricRow(metric="Turns per run", unit="number", baseline=base.mean_turns,
                              tool=tool.mean_turns,
                              estimate=_ratio(tool.mean_turns, base.mean_turns)))
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
    per_category: dict[str, int] = {}
    for line in c.tasks:
        task = tasks.get(line.key)
        if task is not None:
            per_category[task.category] = per_category.get(task.category, 0) + 1
    return [CapabilityRow(category=line.key, tasks=per_category.get(line.key, 0),
                          baseline_accuracy=line.accuracy_base,
                          tool_accuracy=line.accuracy_tool) for line in c.capabilities]


def retrieval_rows(report: Report, c: Comparison) -> list[RetrievalRow]:
    if report.retrieval is None:
        return []
    for comp in report.retrieval.comparisons:
        if comp.name == c.name:
            unit: Unit
            rows = []
            for line in comp.lines:
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
    rows = []
    for line in c.tasks:
        task = tasks.get(line.key)
        rows.append(TaskRow(
            task_id=line.key, category=task.category if task else "",
            control=bool(task and task.control),
            baseline_correct=_correct(line.accuracy_base, line.runs_base),
            baseline_runs=line.runs_base,
            tool_correct=_correct(line.accuracy_tool, line.runs_tool), tool_runs=line.runs_tool,
            baseline_cost_usd=finite(line.cpc_base), tool_cost_usd=finite(line.cpc_tool),
            note=line.note))
    return rows


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


def comment_data(report: Report, bundle: BundleInfo, *, comment_id: str,
                 tasks: Mapping[str, Task], run_url: str | None = None,
                 full_report: str = "") -> CommentData:
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
        "verdict_reason": " ".join(report.verdict_reasons), "footer": footer,
        "warnings": warnings_for(report, base, tool, bundle), "full_report": full_report,
        "chart": mermaid_chart(report)}
    if c is not None and base is not None and tool is not None:
        head_est = estimate(c.delta)
        assert head_est is not None
        data.update(
            headline=Headline(estimate=head_est,
                              versus="base" if c.kind == "head_vs_base" else "baseline"),
            metrics=metric_rows(c, base, tool), capabilities=capability_rows(c, tasks),
            retrieval=retrieval_rows(report, c), flags=flag_rows(base, tool),
            tasks=task_rows(c, tasks))
        if c.adopted is not None:
            adopted = estimate(c.adopted.delta)
            assert adopted is not None
            data["adoption"] = AdoptionLine(adoption=c.adopted.adoption_rate, estimate=adopted)
    return CommentData.model_validate(data)


def _num(value: float | None) -> str:
    value = finite(value)
    return "" if value is None else f"{value:.6g}"


def output_values(report: Report, bundle: BundleInfo, report_path: Path | None) -> dict[str, str]:
    """The action's outputs (DESIGN.md); the badge and comment url are set when published."""
    c = report.headline_comparison
    arms = {a.arm: a for a in report.arms}
    out = {"verdict": report.verdict,
           "bundle-path": str(bundle.path) if bundle.path else "",
           "bundle-sha256": bundle.sha256 or "",
           "report-path": str(report_path) if report_path else ""}
    if c is not None:
        out.update({"delta": _num(c.delta.estimate), "delta-ci-low": _num(c.delta.low),
                    "delta-ci-high": _num(c.delta.high),
                    "control-delta": _num(c.control_delta.estimate) if c.control_delta else "",
                    "cpc-baseline": _num(arms[c.base].cpc_usd) if c.base in arms else "",
                    "cpc-tool": _num(arms[c.tool].cpc_usd) if c.tool in arms else ""})
    return out
