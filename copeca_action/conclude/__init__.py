"""Conclude a run: the Report, its rendered files and the signed, verified bundle."""

from copeca_action.conclude._conclude import (
    REPORT_FILES,
    Concluded,
    check_bundle,
    conclude,
    merged_report,
    report_of,
    reuse_note,
    settings_for,
    summary_of,
)

__all__ = [
    "REPORT_FILES",
    "Concluded",
    "check_bundle",
    "conclude",
    "merged_report",
    "report_of",
    "reuse_note",
    "settings_for",
    "summary_of",
]
