"""Renderers: a finished Report in, text out. They format; they never compute or write."""

from copeca_action.render._files import report_files
from copeca_action.render._html import (
    CoverageCurve,
    RunPoint,
    Verification,
    coverage_curves,
    render_html,
    run_points,
)
from copeca_action.render._json import render_json
from copeca_action.render._markdown import (
    arms_table,
    comparisons_table,
    headline_md,
    interval_text,
    lines_table,
    method_md,
    population_table,
    render_markdown,
    retrieval_arms_table,
    retrieval_md,
    retrieval_table,
    simulated_md,
    warnings_md,
)
from copeca_action.render._mermaid import mermaid_chart
from copeca_action.render._trend import TrendArm, TrendRun, render_history_html, trend_svg

__all__ = [
    "CoverageCurve",
    "RunPoint",
    "TrendArm",
    "TrendRun",
    "Verification",
    "arms_table",
    "comparisons_table",
    "coverage_curves",
    "headline_md",
    "interval_text",
    "lines_table",
    "mermaid_chart",
    "method_md",
    "population_table",
    "render_history_html",
    "render_html",
    "render_json",
    "render_markdown",
    "report_files",
    "retrieval_arms_table",
    "retrieval_md",
    "retrieval_table",
    "run_points",
    "simulated_md",
    "trend_svg",
    "warnings_md",
]
