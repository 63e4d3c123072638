"""Statistics: cost per correct, paired cluster bootstrap intervals, verdicts, the Report."""

import importlib as _importlib
import typing as _typing

if _typing.TYPE_CHECKING:
    from copeca_action.report._adaptive import Decision, alpha_for, decide
    from copeca_action.report._build import Settings, alpha_shares, build_report
    from copeca_action.report._model import (
        VERDICTS,
        WORST_FIRST,
        AdoptedLine,
        ArmInterval,
        ArmSummary,
        Comparison,
        Exclusions,
        Interval,
        Line,
        Look,
        Multiplicity,
        Power,
        Report,
        RetrievalArm,
        RetrievalComparison,
        RetrievalLine,
        RetrievalSection,
        Spend,
        Verdict,
    )
    from copeca_action.report._power import (
        Design,
        Pilot,
        PowerResult,
        pilot_from_rows,
        power,
        rates,
    )
    from copeca_action.report._spending import current_look, look_alpha, schedule
    from copeca_action.report._stats import (
        DEFAULT_METHOD,
        INTERVAL_METHODS,
        ArmBootstrap,
        Bootstrap,
        IntervalMethod,
        accuracy_interval,
        arm_bootstrap,
        cost_per_correct,
        delta,
        paired_bootstrap,
    )
    from copeca_action.report._table import (
        RecordTable,
        table_from_coded,
        table_from_columns,
        table_from_records,
        table_from_rows,
    )
    from copeca_action.report._verdict import judge, pct_text

__all__ = [
    "DEFAULT_METHOD",
    "INTERVAL_METHODS",
    "VERDICTS",
    "WORST_FIRST",
    "AdoptedLine",
    "ArmBootstrap",
    "ArmInterval",
    "ArmSummary",
    "Bootstrap",
    "Comparison",
    "Decision",
    "Design",
    "Exclusions",
    "Interval",
    "IntervalMethod",
    "Line",
    "Look",
    "Multiplicity",
    "Pilot",
    "Power",
    "PowerResult",
    "RecordTable",
    "Report",
    "RetrievalArm",
    "RetrievalComparison",
    "RetrievalLine",
    "RetrievalSection",
    "Settings",
    "Spend",
    "Verdict",
    "accuracy_interval",
    "alpha_for",
    "alpha_shares",
    "arm_bootstrap",
    "build_report",
    "cost_per_correct",
    "current_look",
    "decide",
    "delta",
    "judge",
    "look_alpha",
    "paired_bootstrap",
    "pct_text",
    "pilot_from_rows",
    "power",
    "rates",
    "schedule",
    "table_from_coded",
    "table_from_columns",
    "table_from_records",
    "table_from_rows",
]

_LAZY: dict[str, str] = {
    "pct_text": "copeca_action.report._verdict",
    "AdoptedLine": "copeca_action.report._model",
    "ArmBootstrap": "copeca_action.report._stats",
    "ArmInterval": "copeca_action.report._model",
    "ArmSummary": "copeca_action.report._model",
    "Bootstrap": "copeca_action.report._stats",
    "Comparison": "copeca_action.report._model",
    "DEFAULT_METHOD": "copeca_action.report._stats",
    "Decision": "copeca_action.report._adaptive",
    "Design": "copeca_action.report._power",
    "Exclusions": "copeca_action.report._model",
    "Spend": "copeca_action.report._model",
    "INTERVAL_METHODS": "copeca_action.report._stats",
    "Interval": "copeca_action.report._model",
    "IntervalMethod": "copeca_action.report._stats",
    "Line": "copeca_action.report._model",
    "Look": "copeca_action.report._model",
    "Multiplicity": "copeca_action.report._model",
    "Pilot": "copeca_action.report._power",
    "Power": "copeca_action.report._model",
    "PowerResult": "copeca_action.report._power",
    "RecordTable": "copeca_action.report._table",
    "Report": "copeca_action.report._model",
    "RetrievalArm": "copeca_action.report._model",
    "RetrievalComparison": "copeca_action.report._model",
    "RetrievalLine": "copeca_action.report._model",
    "RetrievalSection": "copeca_action.report._model",
    "Settings": "copeca_action.report._build",
    "VERDICTS": "copeca_action.report._model",
    "WORST_FIRST": "copeca_action.report._model",
    "Verdict": "copeca_action.report._model",
    "accuracy_interval": "copeca_action.report._stats",
    "alpha_for": "copeca_action.report._adaptive",
    "alpha_shares": "copeca_action.report._build",
    "arm_bootstrap": "copeca_action.report._stats",
    "build_report": "copeca_action.report._build",
    "cost_per_correct": "copeca_action.report._stats",
    "current_look": "copeca_action.report._spending",
    "decide": "copeca_action.report._adaptive",
    "delta": "copeca_action.report._stats",
    "judge": "copeca_action.report._verdict",
    "look_alpha": "copeca_action.report._spending",
    "paired_bootstrap": "copeca_action.report._stats",
    "pilot_from_rows": "copeca_action.report._power",
    "power": "copeca_action.report._power",
    "rates": "copeca_action.report._power",
    "schedule": "copeca_action.report._spending",
    "table_from_coded": "copeca_action.report._table",
    "table_from_columns": "copeca_action.report._table",
    "table_from_records": "copeca_action.report._table",
    "table_from_rows": "copeca_action.report._table",
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
