"""RunRecord and results.jsonl: the append-only log every report is computed from."""

from copeca_action.records._foreign import Format, detect_format, from_copeca, read_rows
from copeca_action.records._io import (
    append_record,
    append_records,
    iter_records,
    latest_by_run_id,
    read_records,
    write_records,
)
from copeca_action.records._record import (
    OUTCOMES,
    CostSource,
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
    "OUTCOMES",
    "CostSource",
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
    "detect_format",
    "from_copeca",
    "iter_records",
    "latest_by_run_id",
    "read_records",
    "read_rows",
    "write_records",
]
