"""Conclude a run: the Report, its rendered files and the signed, verified bundle."""

import importlib as _importlib
import typing as _typing

if _typing.TYPE_CHECKING:
    from copeca_action.conclude._conclude import (
        REPORT_FILES,
        Concluded,
        check_bundle,
        conclude,
        merged_report,
        report_and_files,
    )
    from copeca_action.conclude._merge import Merged, ShardScenario, merge_shards, shard_scenario
    from copeca_action.conclude._report import (
        RECOMPUTED,
        Recompute,
        bundle_report,
        bundled_scenario,
        recompute,
        rendered_report,
        report_of,
        reuse_note,
        settings_for,
        signed_summary,
        summary_of,
    )

__all__ = [
    "RECOMPUTED",
    "REPORT_FILES",
    "Concluded",
    "Merged",
    "Recompute",
    "ShardScenario",
    "bundle_report",
    "bundled_scenario",
    "check_bundle",
    "conclude",
    "merge_shards",
    "merged_report",
    "recompute",
    "rendered_report",
    "report_and_files",
    "report_of",
    "reuse_note",
    "settings_for",
    "shard_scenario",
    "signed_summary",
    "summary_of",
]

_LAZY: dict[str, str] = {
    "Concluded": "copeca_action.conclude._conclude",
    "Merged": "copeca_action.conclude._merge",
    "RECOMPUTED": "copeca_action.conclude._report",
    "REPORT_FILES": "copeca_action.conclude._conclude",
    "Recompute": "copeca_action.conclude._report",
    "ShardScenario": "copeca_action.conclude._merge",
    "bundle_report": "copeca_action.conclude._report",
    "bundled_scenario": "copeca_action.conclude._report",
    "check_bundle": "copeca_action.conclude._conclude",
    "conclude": "copeca_action.conclude._conclude",
    "merge_shards": "copeca_action.conclude._merge",
    "merged_report": "copeca_action.conclude._conclude",
    "recompute": "copeca_action.conclude._report",
    "rendered_report": "copeca_action.conclude._report",
    "report_and_files": "copeca_action.conclude._conclude",
    "report_of": "copeca_action.conclude._report",
    "reuse_note": "copeca_action.conclude._report",
    "settings_for": "copeca_action.conclude._report",
    "shard_scenario": "copeca_action.conclude._merge",
    "signed_summary": "copeca_action.conclude._report",
    "summary_of": "copeca_action.conclude._report",
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
