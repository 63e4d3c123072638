"""Known Reports for the HTML tests (unit and browser), built from generated RunRecords.

Each case carries the inputs of `render_html` and the number of marks each chart must draw.
Imported by name: tests are not packages.
"""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from copeca_action.records import RunRecord
from copeca_action.render import CoverageCurve, RunPoint, Verification, run_points
from copeca_action.report import Report, Settings, build_report, table_from_records
from copeca_action.report._simulate import Population, make_rows

T0 = dt.datetime(2026, 11, 21, 9, 0, tzinfo=dt.UTC)
HOSTILE = '<script>alert("x")</script><img src=x onerror=alert(1)>{{ 7*7 }}"\'&amp;'


@dataclass
class Case:
    report: Report
    runs: list[RunPoint]
    coverage: list[CoverageCurve] = field(default_factory=list)
    verification: Verification | None = None
    scenario_yaml: str | None = None
    environment: dict[str, str] | None = None
    marks: dict[str, int] = field(default_factory=dict)
    """data-chart → the number of `.mark` elements it must hold (absent: no such chart)."""

    def kwargs(self) -> dict[str, Any]:
        return {"runs": self.runs, "coverage": self.coverage,
                "verification": self.verification, "scenario_yaml": self.scenario_yaml,
                "environment": self.environment}


def records(tasks: int, reps: int, *, ratio: float = 0.8, control: int = 0, seed: int = 1,
            edit: Callable[[dict[str, Any]], dict[str, Any]] = lambda r: r,
            **kw: Any) -> list[RunRecord]:
    rows = make_rows(Population(cost_ratio=ratio), tasks, reps, np.random.default_rng(seed),
                     control_tasks=control, **kw)
    return [RunRecord(**edit({**r, "started_at": T0 + dt.timedelta(seconds=45 * i),
                              "duration_s": 30.0 + i % 7,
                              "flags": ["tool_storm"] if i % 9 == 0 else []}))
            for i, r in enumerate(rows)]


def _report(recs: list[RunRecord], warnings: tuple[str, ...] = (), scenario: str = "",
            ) -> Report:
    table = table_from_records(recs, scenario)
    if warnings:
        table = type(table)(**{**table.__dict__, "extra_warnings": warnings})
    return build_report(table, Settings(resamples=400, breakdown_resamples=200))


def coverage_curves() -> list[CoverageCurve]:
    return [CoverageCurve.from_runs("baseline", [[0.1, 0.3, 0.5, 0.6], [0.2, 0.2, 0.7]]),
            CoverageCurve.from_runs("codesearch", [[0.4, 0.8, 0.9], [0.5, 1.0]])]


def expected_marks(report: Report, runs: list[RunPoint], coverage: list[CoverageCurve]
                   ) -> dict[str, int]:
    """What each chart must draw, counted from the Report and inputs (not from the HTML)."""
    out: dict[str, int] = {}
    if report.comparisons:
        out["forest"] = sum(
            (c.delta.estimate is not None)
            + (c.adopted is not None and c.adopted.delta.estimate is not None)
            + (c.control_delta is not None and c.control_delta.estimate is not None)
            for c in report.comparisons)
        head = report.headline_comparison or report.comparisons[0]
        ran = {(p.task_id, p.arm) for p in runs if p.reached}

        def point(task: str, arm: str, acc: float | None, cpc: float) -> bool:
            """A point needs an accuracy and a cost per run (from runs, or cpc × accuracy)."""
            return acc is not None and ((task, arm) in ran or (math.isfinite(cpc) and acc > 0))

        if head.tasks:  # no scatter when no task has a line (e.g. every run budget-stopped)
            out["scatter"] = 0
        for ln in head.tasks:
            b = point(ln.key, head.base, ln.accuracy_base, ln.cpc_base)
            t = point(ln.key, head.tool, ln.accuracy_tool, ln.cpc_tool)
            out["scatter"] += b + t + (b and t)  # base point, tool point, the arrow
        drawn = sum(ln.delta is not None and ln.delta.estimate is not None
                    for ln in head.capabilities)
        if drawn:  # no chart when no capability has an interval (the table remains)
            out["capabilities"] = drawn
    reached = [p for p in runs if p.reached]
    arms = {p.arm for p in reached}
    if reached:
        out["costs"] = len(arms)
        out["spend"] = len(arms) + 1
    if coverage:
        out["coverage"] = len(coverage)
    return out


def _case(recs: list[RunRecord], coverage: list[CoverageCurve] | None = None,
          **kw: Any) -> Case:
    warnings = kw.pop("warnings", ())
    report = _report(recs, warnings, kw.pop("scenario", ""))
    runs = run_points(recs)
    cov = coverage or []
    return Case(report, runs, cov, marks=expected_marks(report, runs, cov), **kw)


def demo() -> Case:
    """Like the demo scenario: 8 tasks (+2 control) × 2 arms × 2 repetitions."""
    return _case(records(8, 2, control=2), coverage_curves(),
                 verification=Verification(bundle_sha256="ab" * 32, keyid="cd" * 32),
                 scenario_yaml="name: demo\nrepetitions: 2\n",
                 environment={"python": "3.11", "image": "copeca-action:dev"})


def larger() -> Case:
    """Enough tasks that the breakdowns have intervals."""
    return _case(records(30, 3, ratio=1.4, control=6), coverage_curves())


def infinite() -> Case:
    """The tool arm answers nothing correctly: its cost per correct is ∞."""
    recs = records(12, 2, edit=lambda r: {**r, "correct": False}
                   if r["arm"] == "codesearch" else r)
    return _case(recs)


def one_arm() -> Case:
    recs = [r for r in records(8, 2) if r.arm == "baseline"]
    return _case(recs)


def no_control() -> Case:
    return _case(records(12, 2))


def many_tasks() -> Case:
    return _case(records(500, 2, control=20))


def hostile() -> Case:
    """Agent and user text full of HTML and script, everywhere text can reach the page."""
    def edit(r: dict[str, Any]) -> dict[str, Any]:
        return {**r, "task_id": f"{r['task_id']}{HOSTILE}", "category": HOSTILE,
                "arm": HOSTILE if r["arm"] == "codesearch" else r["arm"],
                "flags": [HOSTILE], "model": HOSTILE, "scenario": HOSTILE}
    recs = records(8, 2, edit=edit)
    return _case(recs, [CoverageCurve.from_runs(HOSTILE, [[0.5, 1.0]])],
                 warnings=(HOSTILE,), scenario=HOSTILE,
                 verification=Verification(bundle_sha256=HOSTILE, keyid=HOSTILE),
                 scenario_yaml=HOSTILE, environment={HOSTILE: HOSTILE})


CASES: dict[str, Callable[[], Case]] = {
    "demo": demo, "larger": larger, "infinite": infinite, "one_arm": one_arm,
    "no_control": no_control, "many_tasks": many_tasks, "hostile": hostile}
