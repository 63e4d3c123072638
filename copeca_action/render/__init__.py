"""Renderers: a finished Report in, text out. They format; they never compute or write."""

from copeca_action.render._files import report_files
from copeca_action.render._html import (
    CoverageCurve,
    RunPoint,
    Verification,
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
    render_markdown,
    warnings_md,
)
from copeca_action.render._mermaid import mermaid_chart

__all__ = [
    "CoverageCurve",
    "RunPoint",
    "Verification",
    "arms_table",
    "comparisons_table",
    "headline_md",
    "interval_text",
    "lines_table",
    "mermaid_chart",
    "method_md",
    "render_html",
    "render_json",
    "render_markdown",
    "report_files",
    "run_points",
    "warnings_md",
]
