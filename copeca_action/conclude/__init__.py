"""Conclude a run: the Report, its rendered files and the signed, verified bundle."""

from copeca_action.conclude._conclude import (
    REPORT_FILES,
    Concluded,
    check_bundle,
    conclude,
    merged_report,
    report_and_files,
    report_of,
    reuse_note,
    settings_for,
    summary_of,
)
from copeca_action.conclude._merge import Merged, ShardScenario, merge_shards, shard_scenario

__all__ = [
    "REPORT_FILES",
    "Concluded",
    "Merged",
    "ShardScenario",
    "check_bundle",
    "conclude",
    "merge_shards",
    "merged_report",
    "report_and_files",
    "report_of",
    "reuse_note",
    "settings_for",
    "shard_scenario",
    "summary_of",
]
