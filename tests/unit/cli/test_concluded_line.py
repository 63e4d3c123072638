"""The line `run` and `demo` print after the report: its numbers read as the report's."""

from __future__ import annotations

import io
import sys
from pathlib import Path

from rich.console import Console

from copeca_action._cli.run import print_concluded
from copeca_action.conclude import Concluded
from copeca_action.render import render_markdown
from copeca_action.report import Report, Settings, build_report

sys.path.insert(0, str(Path(__file__).parents[1] / "render"))
from html_cases import records


def _printed(report: Report) -> str:
    out = io.StringIO()
    print_concluded(Console(file=out, width=300, color_system=None),
                    Concluded(report=report, files={}, bundle_path=None, bundle_sha256=None,
                              keyid=None))
    return out.getvalue()


def test_an_unbounded_interval_reads_as_infinity_as_in_the_report() -> None:
    """The tool arm right on one task only: a resample without that task has nothing right
    in it, a cost per correct without bound: the interval's upper side is
    unbounded. The line printed "+inf%" (Python's float format) where report.md writes +∞."""
    def wrong(r: dict[str, object]) -> dict[str, object]:
        return {**r, "correct": r["arm"] == "baseline" or (
            str(r["task_id"]).endswith("0000") and r["repetition"] == 0)}

    r = build_report(records(5, 3, edit=wrong), Settings(resamples=400,
                                                         breakdown_resamples=200))
    d = r.headline_comparison.delta if r.headline_comparison else None
    assert d is not None and d.high is not None and d.high == float("inf"), d
    line = _printed(r)
    assert "inf%" not in line and "to +∞)" in line, line
    assert "+∞" in render_markdown(r)


def test_a_bound_near_zero_keeps_its_side_of_zero() -> None:
    """The line rounded every figure to one decimal: a bound of −0.04% read "-0.0%" where
    the report (and the verdict's reason) write "-0.04%"."""
    r = build_report(records(10, 2), Settings(resamples=400, breakdown_resamples=200))
    d = r.headline_comparison.delta if r.headline_comparison else None
    assert d is not None and d.low is not None and d.high is not None
    nudged = d.model_copy(update={"low": -0.0004})
    comparison = r.headline_comparison.model_copy(update={"delta": nudged}) \
        if r.headline_comparison else None
    assert comparison is not None
    r2 = r.model_copy(update={"comparisons": [comparison if c.name == comparison.name else c
                                              for c in r.comparisons]})
    line = _printed(r2)
    assert "(CI -0.04% to" in line, line
