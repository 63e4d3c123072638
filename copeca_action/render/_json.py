"""The Report as JSON: its own schema (schemas/report.schema.json), infinities as strings."""

from __future__ import annotations

from copeca_action.report import Report


def render_json(report: Report) -> str:
    return report.model_dump_json(indent=2) + "\n"
