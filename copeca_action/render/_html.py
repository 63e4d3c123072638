"""The self-contained HTML report: one file, inline CSS and SVG, no network, works from file://.

The Report carries every statistic. Two pictures need more than it holds and take small
optional inputs: the per-run costs and start times (`RunPoint`, for the cost distribution,
the per-task scatter and spend over time) and the mean cumulative gold-context coverage by
step (`CoverageCurve`, from the retrieval metrics). A chart without its input is left out.
"""

from __future__ import annotations

import base64
import datetime as dt
import hashlib
import math
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from markupsafe import Markup
from pydantic import BaseModel, ConfigDict

from copeca_action._util.percent import level_text, threshold_text
from copeca_action.records import RetrievalSummary, RunRecord
from copeca_action.records._kinds import NOT_REACHED
from copeca_action.render import _svg
from copeca_action.render._markdown import (
    control_lines,
    delta_lines,
    interval_text,
    method_md,
    no_cpc,
    pct,
    share,
    usd,
)
from copeca_action.render._templates import asset, without_bidi
from copeca_action.render._templates import environment as jinja_environment
from copeca_action.render._trend import TrendRun, trend_svg
from copeca_action.report import ArmInterval, ArmSummary, Comparison, Interval, Line, Report


class HtmlInput(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class RunPoint(HtmlInput):
    """What the run-level charts need of one run (the last record of its run id)."""

    task_id: str
    arm: str
    cost_usd: float
    correct: bool = False
    reached: bool = True
    """Counted in spend (not an infra error, not stopped by the budget)."""
    started_at: dt.datetime | None = None
    duration_s: float = 0.0


class CoverageCurve(HtmlInput):
    """Mean cumulative share of the gold context an arm's runs had viewed after each step."""

    arm: str
    coverage_by_step: list[float]
    """Element k: mean over runs of the coverage after step k+1 (a run that stopped earlier
    keeps its last value)."""
    runs: int
    granularity: str = "span"

    @classmethod
    def from_runs(cls, arm: str, per_run: Sequence[Sequence[float]],
                  granularity: str = "span") -> CoverageCurve:
        """Average per-run curves (e.g. retrieval's `TrajectoryScore.coverage_by_step`)."""
        steps = max((len(c) for c in per_run), default=0)
        mean = [sum((c[min(k, len(c) - 1)] if c else 0.0) for c in per_run) / len(per_run)
                for k in range(steps)]
        return cls(arm=arm, coverage_by_step=mean, runs=len(per_run), granularity=granularity)


def coverage_curves(records: Iterable[RunRecord | Mapping[str, Any]],
                    granularity: str = "span") -> list[CoverageCurve]:
    """One curve per arm from the records' `retrieval` (a later record of a run id wins);
    runs that were not scored, or did not reach the agent, are left out. [] when none is."""
    latest: dict[str, tuple[str, RetrievalSummary | None]] = {}
    for i, r in enumerate(records):
        outcome: object
        if isinstance(r, RunRecord):
            key, arm, outcome, value = r.run_id, r.arm, r.outcome, r.retrieval
        else:
            key, arm, outcome = str(r.get("run_id", i)), str(r["arm"]), r.get("outcome")
            raw = r.get("retrieval")
            value = raw if raw is None or isinstance(raw, RetrievalSummary) else \
                RetrievalSummary.model_validate(raw)
        latest[key] = (arm, value if outcome not in NOT_REACHED else None)
    per_arm: dict[str, list[list[float]]] = defaultdict(list)
    for arm, value in latest.values():
        traj = getattr(value, f"trajectory_{granularity}", None) if value else None
        if traj is not None:
            per_arm[arm].append(traj.coverage_by_step)
    return [CoverageCurve.from_runs(arm, curves, granularity)
            for arm, curves in sorted(per_arm.items())]


class Verification(HtmlInput):
    """What a reader checks the report against; both optional."""

    bundle_sha256: str | None = None
    keyid: str | None = None
    """The Ed25519 key id that signed the bundle; None: unsigned."""


def run_points(records: Iterable[RunRecord | Mapping[str, Any]]) -> list[RunPoint]:
    """RunPoints from RunRecords or RunRecord-shaped rows; a later record of a run id wins."""
    latest: dict[str, RunPoint] = {}
    for i, r in enumerate(records):
        row: Mapping[str, Any] = r.model_dump() if isinstance(r, RunRecord) else r
        started = row.get("started_at")
        if isinstance(started, str):
            started = dt.datetime.fromisoformat(started.replace("Z", "+00:00"))
        latest[str(row.get("run_id", i))] = RunPoint(
            task_id=str(row["task_id"]), arm=str(row["arm"]),
            cost_usd=float(row.get("cost_usd") or 0.0), correct=bool(row.get("correct")),
            reached=row.get("outcome") not in NOT_REACHED,
            started_at=started, duration_s=float(row.get("duration_s") or 0.0))
    return list(latest.values())


# ---------------------------------------------------------------- tables


@dataclass(frozen=True)
class Cell:
    text: str
    value: float | str | None = None
    """Sort key (numbers sort numerically; ∞ as Infinity)."""

    @property
    def sort(self) -> str:
        v = self.value
        if v is None:
            return ""
        if isinstance(v, float) and math.isinf(v):
            return "Infinity" if v > 0 else "-Infinity"
        return str(v)


@dataclass(frozen=True)
class Table:
    id: str
    caption: str
    head: Sequence[str]
    rows: Sequence[Sequence[Cell]]
    numeric: frozenset[int] = frozenset()
    """Right-aligned columns."""


@dataclass(frozen=True)
class Figure:
    id: str
    title: str
    svg: Markup | None
    """None: nothing to draw (the table and note still say why)."""
    note: str
    table: Table


def _num(v: float | None) -> float | None:
    return None if v is None or math.isnan(v) else v


def _usd_cell(v: float | None) -> Cell:
    return Cell(usd(v), _num(v))


def _share_cell(v: float | None) -> Cell:
    return Cell(share(v), v)


def _pct_cell(v: float | None, lines: Iterable[float] = (0.0,)) -> Cell:
    return Cell(pct(v, lines), _num(v))


# ---------------------------------------------------------------- colours


def arm_classes(report: Report, runs: Sequence[RunPoint],
                coverage: Sequence[CoverageCurve]) -> dict[str, str]:
    """A stable colour class per arm: report order first, then any arm only the inputs name."""
    names = [a.arm for a in report.arms]
    for extra in [p.arm for p in runs] + [c.arm for c in coverage]:
        if extra not in names:
            names.append(extra)
    return {name: f"c{i % _svg.PALETTE}" for i, name in enumerate(names)}


# ---------------------------------------------------------------- figures


def _delta_row(label: str, i: Interval | None, group: str, cls: str, note: str = "",
               lines: Iterable[float] = (0.0,)) -> _svg.ForestRow:
    text = interval_text(i, lines) if i is not None else (note or "n/a")
    return _svg.ForestRow(label=label, estimate=None if i is None else i.estimate,
                          low=None if i is None else i.low, high=None if i is None else i.high,
                          text=text, group=group, cls=cls)


def forest_figure(report: Report, colours: Mapping[str, str]) -> Figure | None:
    """Every comparison's delta (all runs, tool-used runs), then the control rows apart."""
    if not report.comparisons:
        return None
    rows: list[_svg.ForestRow] = []
    table: list[list[Cell]] = []
    main, control = delta_lines(report.thresholds), control_lines(report.thresholds)
    for c in report.comparisons:
        cls = colours.get(c.tool, "c0")
        tool, base = _cpc(report, c.tool), _cpc(report, c.base)
        rows.append(_delta_row(f"{c.name}", c.delta, "", cls, lines=main))
        table.append(_forest_cells(c, "all runs", c.delta, tool, base, main))
        if c.adopted is not None:
            rows.append(_delta_row(f"  └ tool used ({share(c.adopted.adoption_rate)} "
                                   "adoption)", c.adopted.delta, "", cls, lines=main))
            table.append(_forest_cells(c, f"runs where the tool was used "
                                       f"({c.adopted.runs})", c.adopted.delta, None, None,
                                       main))
    for c in report.comparisons:
        if c.control_delta is not None:
            rows.append(_delta_row(c.name, c.control_delta, "control tasks (should be ≈ 0)",
                                   "control", lines=control))
            table.append(_forest_cells(c, "control tasks", c.control_delta, None, None,
                                       control))
    t = report.thresholds
    refs = [(t.fail, f"fail +{threshold_text(t.fail)}")]
    if t.alert < t.fail:
        refs.append((t.alert, f"alert +{threshold_text(t.alert)}"))
    svg = _svg.forest("forest", "Delta of cost per correct answer, tool vs base, with its "
                      "confidence interval", rows, refs)
    note = ("Each row: the change in cost per correct answer of the tool arm against its base, "
            "a square at the estimate and a line across the confidence interval; left of 0 is "
            "cheaper. Control rows use tasks the tool should not change.")
    return Figure("forest", "Cost per correct answer: tool vs base", svg, note,
                  Table("forest-table", "Deltas of cost per correct answer",
                        ["comparison", "runs", "cpc tool", "cpc base", "delta", "CI low",
                         "CI high", "level", "tasks", "verdict"], table,
                        frozenset({2, 3, 4, 5, 6, 7, 8})))


def _cpc(report: Report, arm: str) -> float | None:
    """The arm's cost per correct on the headline population (the comparison's `overall`
    line: the tasks its delta compares); the whole arm's only in reports without it."""
    for c in report.comparisons:
        if c.overall is not None and arm in (c.tool, c.base):
            return c.overall.cpc_tool if arm == c.tool else c.overall.cpc_base
    return next((a.cpc_usd for a in report.arms if a.arm == arm), None)


def _forest_cells(c: Comparison, which: str, i: Interval, tool: float | None,
                  base: float | None, lines: Iterable[float]) -> list[Cell]:
    return [Cell(c.name), Cell(which), _usd_cell(tool) if tool is not None else Cell(""),
            _usd_cell(base) if base is not None else Cell(""), _pct_cell(i.estimate, lines),
            _pct_cell(i.low, lines), _pct_cell(i.high, lines), Cell(level_text(i.level), i.level),
            Cell(str(i.clusters), i.clusters),
            Cell(c.verdict if which == "all runs" else "")]


def capability_figure(report: Report, c: Comparison, colours: Mapping[str, str]
                      ) -> Figure | None:
    if not c.capabilities:
        return None
    cls = colours.get(c.tool, "c0")
    rows = [_delta_row(ln.key, ln.delta, "", cls, "" if ln.delta else ln.note)
            for ln in c.capabilities]
    t = report.thresholds
    table = _lines_table("capability-table", "Per capability", "capability", c.capabilities)
    if all(r.estimate is None for r in rows):
        return Figure("capabilities", "Where the cost moved, by capability", None,
                      f"{c.name}: no capability had enough tasks for an interval; the numbers "
                      "are below.", table)
    svg = _svg.forest("capabilities", f"Delta of cost per correct by capability: {c.name}",
                      rows, [(t.fail, f"fail +{threshold_text(t.fail)}")])
    note = (f"{c.name}: the same delta within each task category; a row without a mark had "
            "too few tasks for an interval.")
    return Figure("capabilities", "Where the cost moved, by capability", svg, note, table)


def _lines_table(tid: str, caption: str, key: str, lines: Sequence[Line]) -> Table:
    rows = []
    for ln in lines:
        d = ln.delta
        rows.append([Cell(ln.key), Cell(str(ln.runs_tool), ln.runs_tool),
                     Cell(str(ln.runs_base), ln.runs_base), _share_cell(ln.accuracy_tool),
                     _share_cell(ln.accuracy_base), _usd_cell(ln.cpc_tool),
                     _usd_cell(ln.cpc_base), _pct_cell(d.estimate if d else None),
                     Cell(f"[{pct(d.low)}, {pct(d.high)}]" if d else ln.note,
                          _num(d.low) if d and d.low is not None else None)])
    return Table(tid, caption, [key, "runs tool", "runs base", "accuracy tool",
                                "accuracy base", "cpc tool", "cpc base", "delta", "CI"],
                 rows, frozenset(range(1, 9)))


def _mean_costs(runs: Sequence[RunPoint]) -> dict[tuple[str, str], float]:
    sums: dict[tuple[str, str], list[float]] = defaultdict(list)
    for p in runs:
        if p.reached:
            sums[(p.task_id, p.arm)].append(p.cost_usd)
    return {k: sum(v) / len(v) for k, v in sums.items()}


def scatter_figure(c: Comparison, runs: Sequence[RunPoint], colours: Mapping[str, str]
                   ) -> Figure | None:
    """Per task: (mean cost per run, accuracy) of the base arm → the tool arm."""
    if not c.tasks:
        return None
    mean = _mean_costs(runs)

    def at(key: str, arm: str, acc: float | None, cpc: float | None
           ) -> tuple[float, float] | None:
        if acc is None:
            return None
        cost = mean.get((key, arm))
        if cost is None and cpc is not None and math.isfinite(cpc) and acc > 0:
            cost = cpc * acc  # spend/correct × correct/runs = spend/runs
        return None if cost is None else (cost, acc)

    moves, rows = [], []
    for ln in c.tasks:
        b, t = at(ln.key, c.base, ln.accuracy_base, ln.cpc_base), at(
            ln.key, c.tool, ln.accuracy_tool, ln.cpc_tool)
        moves.append(_svg.Move(f"{ln.key}: {_pt(b)} → {_pt(t)}", b, t))
        rows.append([Cell(ln.key), _usd_cell(b[0] if b else None),
                     _usd_cell(t[0] if t else None), _share_cell(ln.accuracy_base),
                     _share_cell(ln.accuracy_tool), _usd_cell(ln.cpc_base),
                     _usd_cell(ln.cpc_tool),
                     _pct_cell(ln.delta.estimate if ln.delta else None)])
    svg = _svg.arrows("scatter", f"Per task, cost per run against accuracy: {c.base} → "
                      f"{c.tool}", moves, colours.get(c.base, "c0"), colours.get(c.tool, "c1"),
                      usd)
    missing = sum(1 for m in moves if m.base is None or m.tool is None)
    unrun = sum(1 for ln in c.tasks if not (ln.runs_base and ln.runs_tool))
    why = [f"{unrun} with no run of an arm"] if unrun else []
    if missing > unrun:
        why.append(f"{missing - unrun} with no run costs given and nothing correct")
    note = (f"One arrow per task from {c.base} (hollow) to {c.tool} (filled): left is cheaper "
            "per run, up is more accurate." + (f" {missing} task(s) lack a point "
                                              f"({'; '.join(why)})." if missing else ""))
    return Figure("scatter", "Which tasks got cheaper, and which lost accuracy", svg, note,
                  Table("task-table", f"Per task: {c.name}",
                        ["task", "cost/run base", "cost/run tool", "accuracy base",
                         "accuracy tool", "cpc base", "cpc tool", "delta"], rows,
                        frozenset(range(1, 8))))


def _pt(p: tuple[float, float] | None) -> str:
    return "n/a" if p is None else f"{usd(p[0])} per run, {share(p[1])} correct"


def cost_figure(runs: Sequence[RunPoint], colours: Mapping[str, str]) -> Figure | None:
    by_arm: dict[str, list[float]] = defaultdict(list)
    for p in runs:
        if p.reached:
            by_arm[p.arm].append(p.cost_usd)
    if not by_arm:
        return None
    order = sorted(by_arm, key=lambda a: list(colours).index(a) if a in colours else 0)
    spreads = [_svg.Spread(a, by_arm[a], colours.get(a, "c0")) for a in order]
    rows = []
    for s in spreads:
        mn, q1, md, q3, mx = _svg.quartiles(s.values)
        rows.append([Cell(s.label), Cell(str(len(s.values)), len(s.values)), _usd_cell(mn),
                     _usd_cell(q1), _usd_cell(md), _usd_cell(q3), _usd_cell(mx),
                     _usd_cell(sum(s.values))])
    svg = _svg.boxes("costs", "Distribution of the cost of one run, per arm", spreads, usd)
    note = ("Every run that reached the agent, failed or not: the box spans the middle half, "
            "the bar marks the median, the whiskers reach the cheapest and dearest run.")
    return Figure("costs", "What one run costs", svg, note,
                  Table("cost-table", "Cost of one run, per arm",
                        ["arm", "runs", "min", "q1", "median", "q3", "max", "spend"], rows,
                        frozenset(range(1, 8))))


def coverage_figure(curves: Sequence[CoverageCurve], colours: Mapping[str, str]
                    ) -> Figure | None:
    drawn = [c for c in curves if c.coverage_by_step]
    if not drawn:
        return None
    series = [_svg.Series(f"{c.arm} ({c.runs})", [(k + 1.0, v) for k, v in
                                                  enumerate(c.coverage_by_step)],
                          colours.get(c.arm, "c0")) for c in drawn]
    steps = max(len(c.coverage_by_step) for c in drawn)
    rows = [[Cell(str(k + 1), k + 1)] + [
        _share_cell(c.coverage_by_step[min(k, len(c.coverage_by_step) - 1)]) for c in drawn]
        for k in range(steps)]
    gran = ", ".join(sorted({c.granularity for c in drawn}))
    svg = _svg.lines("coverage", "Cumulative gold-context coverage by step, per arm", series,
                     "step", f"gold context seen ({gran})", lambda v: f"{v:g}",
                     lambda v: f"{v:.0%}", y_max=1.0)
    note = ("How early each arm found the code the task needs: the mean share of the gold "
            f"context ({gran}) viewed after each step.")
    return Figure("coverage", "How early each arm found the right code", svg, note,
                  Table("coverage-table", "Mean cumulative gold-context coverage",
                        ["step"] + [c.arm for c in drawn], rows,
                        frozenset(range(len(drawn) + 1))))


def spend_figure(runs: Sequence[RunPoint], colours: Mapping[str, str]) -> Figure | None:
    """Running total of spend: against wall-clock minutes when every run has a start time,
    else against run order."""
    reached = [p for p in runs if p.reached]
    if not reached:
        return None
    timed = all(p.started_at is not None for p in reached)
    if timed:
        t0 = min(_aware(p.started_at) for p in reached if p.started_at)
        keyed = [((_aware(p.started_at) - t0).total_seconds() / 60 + p.duration_s / 60, p)
                 for p in reached if p.started_at]
        keyed.sort(key=lambda kp: kp[0])
    else:
        keyed = [(float(i + 1), p) for i, p in enumerate(reached)]
    totals: dict[str, float] = defaultdict(float)
    total = 0.0
    points: dict[str, list[tuple[float, float]]] = defaultdict(lambda: [(0.0, 0.0)])
    for x, p in keyed:
        total += p.cost_usd
        totals[p.arm] += p.cost_usd
        points["all arms"].append((x, total))
        points[p.arm].append((x, totals[p.arm]))
    series = [_svg.Series("all arms", points["all arms"], "total", step=True)] + [
        _svg.Series(a, points[a], colours.get(a, "c0"), step=True)
        for a in colours if a in totals]
    x_label = "minutes since the first run started" if timed else "runs, in record order"
    svg = _svg.lines("spend", "Cumulative spend of the scenario", series, x_label, "spend",
                     (lambda v: f"{v:g}") if timed else (lambda v: f"{v:.0f}"), _svg.money)
    rows = [[Cell(a), Cell(str(len(points[a]) - 1), len(points[a]) - 1), _usd_cell(totals[a]),
             Cell(f"{totals[a] / total:.0%}" if total else "n/a",
                  totals[a] / total if total else None)]
            for a in colours if a in totals]
    rows.append([Cell("all arms"), Cell(str(len(reached)), len(reached)), _usd_cell(total),
                 Cell("100%", 1.0)])
    span = f" over {keyed[-1][0]:.1f} minutes" if timed else ""
    return Figure("spend", "Spend over time", svg,
                  f"Running total of what the runs cost{span}, all arms and per arm.",
                  Table("spend-table", "Spend per arm", ["arm", "runs", "spend", "share"],
                        rows, frozenset({1, 2, 3})))


def _aware(t: dt.datetime | None) -> dt.datetime:
    assert t is not None
    return t if t.tzinfo else t.replace(tzinfo=dt.UTC)


# ---------------------------------------------------------------- the page


def population_table(c: Comparison, cost_unknown: bool = False) -> Table | None:
    """The headline table: each arm of the deciding comparison on its `overall` line, the
    tasks its delta compares (non-control); the same numbers as report.md and the comment.
    `cost_unknown`: the report left runs out for an unknown cost (`no_cpc`)."""
    o = c.overall
    if o is None:
        return None
    level = next((f" ({level_text(i.level)} CI)" for i in (o.interval_tool, o.interval_base)
                  if i is not None), " (CI)")
    rows = []
    for arm, runs, spend, correct, acc, cpc, i, turns in (
            (c.base, o.runs_base, o.spend_base, o.correct_base, o.accuracy_base, o.cpc_base,
             o.interval_base, o.mean_turns_base),
            (c.tool, o.runs_tool, o.spend_tool, o.correct_tool, o.accuracy_tool, o.cpc_tool,
             o.interval_tool, o.mean_turns_tool)):
        rows.append([Cell(arm), _usd_cell(cpc), _cpc_interval_cell(cpc, i, cost_unknown),
                     _share_cell(acc),
                     _accuracy_ci_cell(i), _usd_cell(spend),
                     Cell("n/a" if correct is None else str(correct), correct),
                     Cell(str(runs), runs),
                     Cell("n/a" if turns is None else f"{turns:.1f}", turns)])
    tasks = "" if o.tasks is None else f"{o.tasks} "
    return Table("population-table", f"{c.name} on the headline population: the {tasks}"
                 "non-control tasks the delta compares",
                 ["arm", "cost per correct", f"cost per correct{level}", "accuracy",
                  f"accuracy{level}", "spend", "correct", "runs", "turns per run"], rows,
                 frozenset(range(1, 9)))


def _cpc_interval_cell(cpc: float | None, i: ArmInterval | None,
                       cost_unknown: bool = False) -> Cell:
    if cpc is None:
        return Cell(no_cpc(cost_unknown))
    if i is None:
        return Cell("n/a")
    if i.cpc_low is None or i.cpc_high is None:
        return Cell("one task: no interval")
    if math.isinf(cpc):
        return Cell(f"≥ {usd(i.cpc_low)} (nothing correct)", i.cpc_low)
    return Cell(f"{usd(i.cpc_low)} – {usd(i.cpc_high)}", i.cpc_low)


def arms_table(report: Report) -> Table:
    """Per arm over every task it ran, control included (not the headline population); each
    arm's cost per correct and accuracy come with their own intervals (`ArmSummary.interval`).
    """
    level = next((f" ({level_text(a.interval.level)} CI)" for a in report.arms
                  if a.interval), " (CI)")
    rows = [[Cell(a.arm), Cell(str(a.runs), a.runs), _usd_cell(a.spend_usd),
             Cell(str(a.correct), a.correct), _share_cell(a.accuracy),
             _accuracy_ci_cell(a.interval), _usd_cell(a.cpc_usd),
             _cpc_ci_cell(a, bool(report.exclusions.unknown_cost_runs)),
             _share_cell(a.adoption_rate),
             Cell("n/a" if a.mean_turns is None else f"{a.mean_turns:.1f}", a.mean_turns),
             Cell("n/a" if a.mean_tool_calls is None else f"{a.mean_tool_calls:.1f}",
                  a.mean_tool_calls),
             Cell("n/a" if a.duration_s is None else f"{a.duration_s / 60:.1f} min",
                  a.duration_s),
             Cell(str(a.infra_errors), a.infra_errors), Cell(str(a.not_run), a.not_run)]
            for a in report.arms]
    return Table("arms-table", "Every task each arm ran, control tasks included",
                 ["arm", "runs", "spend", "correct", "accuracy", f"accuracy{level}",
                  "cost per correct", f"cost per correct{level}", "adoption", "mean turns",
                  "mean tool calls", "agent time", "infra errors", "not run"], rows,
                 frozenset(range(1, 14)))


def _accuracy_ci_cell(i: ArmInterval | None) -> Cell:
    if i is None:
        return Cell("n/a")
    return Cell(f"{i.accuracy_low:.0%} – {i.accuracy_high:.0%}", i.accuracy_low)


def _cpc_ci_cell(a: ArmSummary, cost_unknown: bool = False) -> Cell:
    """The interval's text; sorted by its lower bound. Nothing correct: only a lower bound."""
    return _cpc_interval_cell(a.cpc_usd, a.interval, cost_unknown)


def flags_table(report: Report) -> Table | None:
    names = sorted({f for a in report.arms for f in a.flags})
    if not names:
        return None
    rows = [[Cell(f)] + [Cell(str(a.flags.get(f, 0)), a.flags.get(f, 0)) for a in report.arms]
            for f in names]
    return Table("flags-table", "Behaviour flags: runs flagged, per arm",
                 ["flag"] + [a.arm for a in report.arms], rows,
                 frozenset(range(1, len(report.arms) + 1)))


def environment_rows(report: Report, environment: Mapping[str, str] | None
                     ) -> list[tuple[str, str]]:
    rows = [(f"{a.arm}: models", ", ".join(a.models) or "n/a") for a in report.arms]
    rows += [(f"{a.arm}: CLI versions", ", ".join(a.cli_versions) or "unknown")
             for a in report.arms]
    rows += [(k, v) for k, v in (environment or {}).items()]
    return rows


def render_html(report: Report, *, runs: Sequence[RunPoint] = (),
                coverage: Sequence[CoverageCurve] = (),
                verification: Verification | None = None, scenario_yaml: str | None = None,
                environment: Mapping[str, str] | None = None,
                trend: Sequence[TrendRun] = ()) -> str:
    """The whole report as one HTML document: it formats, it never computes a statistic.
    `trend`: earlier runs from the history (github/_history.py), oldest first, drawn as a
    trend chart; the report itself never reads the history."""
    colours = arm_classes(report, runs, coverage)
    head = report.headline_comparison or (report.comparisons[0] if report.comparisons
                                          else None)
    figures = [forest_figure(report, colours),
               scatter_figure(head, runs, colours) if head else None,
               capability_figure(report, head, colours) if head else None,
               cost_figure(runs, colours), coverage_figure(coverage, colours),
               spend_figure(runs, colours)]
    script = asset("report.js")
    digest = base64.b64encode(hashlib.sha256(script.encode()).digest()).decode()
    return without_bidi(jinja_environment().get_template("report.html.j2").render(
        report=report, head=head, figures=[f for f in figures if f is not None],
        arms=arms_table(report), flags=flags_table(report),
        population=(population_table(head, bool(report.exclusions.unknown_cost_runs))
                    if head else None),
        trend=trend_svg(trend) if trend else None, trend_runs=len(trend),
        legend=[(a, colours[a]) for a in colours],
        method=method_md(report), delta_lines=delta_lines(report.thresholds),
        control_lines=control_lines(report.thresholds),
        verification=verification, scenario_yaml=scenario_yaml,
        environment=environment_rows(report, environment),
        style=Markup(asset("report.css")), script=Markup(script), script_hash=digest))
