"""Renderers: a finished Report in, text out. They format; they never compute or write."""

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

__all__ = [
    "arms_table",
    "comparisons_table",
    "headline_md",
    "interval_text",
    "lines_table",
    "method_md",
    "render_json",
    "render_markdown",
    "warnings_md",
]
