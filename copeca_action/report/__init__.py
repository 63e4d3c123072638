"""Statistics: cost per correct, paired cluster bootstrap intervals, verdicts, the Report."""

from copeca_action.report._adaptive import (
    Decision,
    alpha_for,
    current_look,
    decide,
    look_alpha,
    schedule,
)
from copeca_action.report._build import Settings, build_report
from copeca_action.report._model import (
    VERDICTS,
    AdoptedLine,
    ArmSummary,
    Comparison,
    Exclusions,
    Interval,
    Line,
    Report,
    Verdict,
)
from copeca_action.report._stats import (
    DEFAULT_METHOD,
    INTERVAL_METHODS,
    Bootstrap,
    IntervalMethod,
    cost_per_correct,
    delta,
    paired_bootstrap,
)
from copeca_action.report._table import RecordTable, table_from_records, table_from_rows
from copeca_action.report._verdict import judge

__all__ = [
    "DEFAULT_METHOD",
    "INTERVAL_METHODS",
    "VERDICTS",
    "AdoptedLine",
    "ArmSummary",
    "Bootstrap",
    "Comparison",
    "Decision",
    "Exclusions",
    "Interval",
    "IntervalMethod",
    "Line",
    "RecordTable",
    "Report",
    "Settings",
    "Verdict",
    "alpha_for",
    "build_report",
    "cost_per_correct",
    "current_look",
    "decide",
    "delta",
    "judge",
    "look_alpha",
    "paired_bootstrap",
    "schedule",
    "table_from_records",
    "table_from_rows",
]
