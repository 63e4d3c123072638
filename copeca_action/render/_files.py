"""Every rendered form of one Report, as the bundle stores them (report.json/.md/.html)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from copeca_action.render._html import CoverageCurve, RunPoint, Verification, render_html
from copeca_action.render._json import render_json
from copeca_action.render._markdown import render_markdown
from copeca_action.render._trend import TrendRun
from copeca_action.report import Report


def report_files(report: Report, *, runs: Sequence[RunPoint] = (),
                 coverage: Sequence[CoverageCurve] = (), keyid: str | None = None,
                 scenario_yaml: str | None = None,
                 environment: Mapping[str, str] | None = None,
                 trend: Sequence[TrendRun] = ()) -> dict[str, bytes]:
    """The report files a bundle carries. The page cannot hold the digest of the bundle that
    holds it, so only the signing key id is shown; readers verify the bundle itself."""
    html = render_html(report, runs=runs, coverage=coverage,
                       verification=Verification(keyid=keyid), scenario_yaml=scenario_yaml,
                       environment=environment, trend=trend)
    return {"report.json": render_json(report).encode(),
            "report.md": render_markdown(report).encode(), "report.html": html.encode()}
