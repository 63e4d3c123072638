"""RunRecord and results.jsonl: the append-only log every report is computed from."""

import importlib as _importlib
import typing as _typing

if _typing.TYPE_CHECKING:
    from copeca_action.records._columns import Coded, Columns, read_coded, read_columns
    from copeca_action.records._copeca import Format, detect_format
    from copeca_action.records._design import DesignKey, design_key, design_of, last_design
    from copeca_action.records._foreign import from_copeca, read_rows
    from copeca_action.records._io import (
        append_record,
        append_records,
        iter_records,
        latest_by_run_id,
        read_records,
        write_records,
    )
    from copeca_action.records._kinds import (
        AGENT_FILES_VISIBLE,
        SIMULATED,
        STORED,
        simulation_note,
    )
    from copeca_action.records._record import (
        OUTCOMES,
        CostSource,
        Design,
        Endpoint,
        Outcome,
        RunRecord,
        Tokens,
        ViewedSpan,
    )
    from copeca_action.records._retrieval import (
        RetrievalScore,
        RetrievalSummary,
        RetrievalTrajectory,
    )

__all__ = [
    "AGENT_FILES_VISIBLE",
    "OUTCOMES",
    "SIMULATED",
    "STORED",
    "Coded",
    "Columns",
    "CostSource",
    "Design",
    "DesignKey",
    "Endpoint",
    "Format",
    "Outcome",
    "RetrievalScore",
    "RetrievalSummary",
    "RetrievalTrajectory",
    "RunRecord",
    "Tokens",
    "ViewedSpan",
    "append_record",
    "append_records",
    "design_key",
    "design_of",
    "detect_format",
    "from_copeca",
    "iter_records",
    "last_design",
    "latest_by_run_id",
    "read_coded",
    "read_columns",
    "read_records",
    "read_rows",
    "simulation_note",
    "write_records",
]

_LAZY: dict[str, str] = {
    "Coded": "copeca_action.records._columns",
    "Columns": "copeca_action.records._columns",
    "CostSource": "copeca_action.records._kinds",
    "Design": "copeca_action.records._record",
    "DesignKey": "copeca_action.records._design",
    "Endpoint": "copeca_action.records._kinds",
    "Format": "copeca_action.records._copeca",
    "OUTCOMES": "copeca_action.records._kinds",
    "Outcome": "copeca_action.records._kinds",
    "RetrievalScore": "copeca_action.records._retrieval",
    "RetrievalSummary": "copeca_action.records._retrieval",
    "RetrievalTrajectory": "copeca_action.records._retrieval",
    "RunRecord": "copeca_action.records._record",
    "AGENT_FILES_VISIBLE": "copeca_action.records._kinds",
    "SIMULATED": "copeca_action.records._kinds",
    "STORED": "copeca_action.records._kinds",
    "Tokens": "copeca_action.records._record",
    "ViewedSpan": "copeca_action.records._record",
    "append_record": "copeca_action.records._io",
    "append_records": "copeca_action.records._io",
    "design_key": "copeca_action.records._design",
    "design_of": "copeca_action.records._design",
    "detect_format": "copeca_action.records._copeca",
    "from_copeca": "copeca_action.records._foreign",
    "iter_records": "copeca_action.records._io",
    "last_design": "copeca_action.records._design",
    "latest_by_run_id": "copeca_action.records._io",
    "read_coded": "copeca_action.records._columns",
    "read_columns": "copeca_action.records._columns",
    "read_records": "copeca_action.records._io",
    "read_rows": "copeca_action.records._foreign",
    "simulation_note": "copeca_action.records._kinds",
    "write_records": "copeca_action.records._io",
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
