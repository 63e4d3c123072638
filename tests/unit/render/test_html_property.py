"""Any records the analysis accepts render to a page whose charts hold the expected marks."""

from __future__ import annotations

import datetime as dt
import re

from html_cases import expected_marks
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_html import Page

from copeca_action.records import OUTCOMES, RunRecord
from copeca_action.render import CoverageCurve, render_html, run_points
from copeca_action.report import Settings, build_report

NUMBERS = re.compile(r'\b(?:x|y|x1|x2|y1|y2|cx|cy|r|width|height|points|d)="[^"]*'
                     r'(?:nan|inf)', re.I)
"""A coordinate that is not a finite number."""
T0 = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)


@st.composite
def runs(draw: st.DrawFn) -> list[RunRecord]:
    arms = draw(st.lists(st.sampled_from(["baseline", "codesearch", "grep<x>", "b@base"]),
                         min_size=1, max_size=3, unique=True))
    tasks = draw(st.integers(1, 6))
    timed = draw(st.booleans())
    out = []
    for t in range(tasks):
        control = draw(st.booleans())
        for arm in arms:
            for rep in range(draw(st.integers(1, 2))):
                out.append(RunRecord(
                    run_id=f"{t}-{arm}-{rep}", scenario="p", task_id=f"t{t}", task_hash="h",
                    arm=arm, model="m", runner="claude", repetition=rep, control=control,
                    category=draw(st.sampled_from(["locate", "fix"])), language="python",
                    outcome=draw(st.sampled_from(OUTCOMES)), correct=draw(st.booleans()),
                    cost_usd=draw(st.sampled_from([0.0, 1e-6, 0.03, 2.5, 400.0])),
                    started_at=T0 + dt.timedelta(minutes=len(out)) if timed else None,
                    tool_adopted=None if arm == "baseline" else draw(st.booleans())))
    return out


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(records=runs(), curves=st.lists(st.lists(st.floats(0, 1), max_size=5), max_size=3))
def test_any_records_render_with_the_expected_marks(records: list[RunRecord],
                                                    curves: list[list[float]]) -> None:
    report = build_report(records, Settings(resamples=100, breakdown_resamples=100))
    points = run_points(records)
    coverage = [CoverageCurve.from_runs("baseline", curves)] if curves else []
    text = render_html(report, runs=points, coverage=coverage)
    marks = expected_marks(report, points, [c for c in coverage if c.coverage_by_step])
    assert dict(Page(text).marks) == marks
    assert text.count("<script") == 1
    assert not NUMBERS.search(text), NUMBERS.search(text)
