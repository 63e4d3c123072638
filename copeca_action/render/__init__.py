"""Renderers: a finished Report in, text out. They format; they never compute or write."""

import importlib as _importlib
import typing as _typing

if _typing.TYPE_CHECKING:
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

_LAZY: dict[str, str] = {
    "CoverageCurve": "copeca_action.render._html",
    "RunPoint": "copeca_action.render._html",
    "TrendArm": "copeca_action.render._trend",
    "TrendRun": "copeca_action.render._trend",
    "Verification": "copeca_action.render._html",
    "arms_table": "copeca_action.render._markdown",
    "comparisons_table": "copeca_action.render._markdown",
    "coverage_curves": "copeca_action.render._html",
    "headline_md": "copeca_action.render._markdown",
    "interval_text": "copeca_action.render._markdown",
    "lines_table": "copeca_action.render._markdown",
    "mermaid_chart": "copeca_action.render._mermaid",
    "method_md": "copeca_action.render._markdown",
    "population_table": "copeca_action.render._markdown",
    "render_history_html": "copeca_action.render._trend",
    "render_html": "copeca_action.render._html",
    "render_json": "copeca_action.render._json",
    "render_markdown": "copeca_action.render._markdown",
    "report_files": "copeca_action.render._files",
    "retrieval_arms_table": "copeca_action.render._markdown",
    "retrieval_md": "copeca_action.render._markdown",
    "retrieval_table": "copeca_action.render._markdown",
    "run_points": "copeca_action.render._html",
    "simulated_md": "copeca_action.render._markdown",
    "trend_svg": "copeca_action.render._trend",
    "warnings_md": "copeca_action.render._markdown",
}
"""Each public name and its module, imported on first use (PEP 562): importing one
submodule of this package does not load the others."""


def __getattr__(name: str) -> _typing.Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(_importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))
