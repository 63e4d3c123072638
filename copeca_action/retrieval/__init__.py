"""Retrieval metrics (ContextBench's definitions): what the agent viewed, against the gold.

Per run: `score_run` (or `extract_viewed` + `run_metrics`) gives a `RunRetrieval`;
`record_retrieval` gives the `RunRecord.retrieval` summary the engine stores. Per arm:
`retrieval_arrays` gives the per-run arrays the report bootstraps with `macro` / `micro`;
`summarize_arm` gives the point estimates."""

import importlib as _importlib
import typing as _typing

if _typing.TYPE_CHECKING:
    from copeca_action.retrieval._aggregate import (
        ArmRetrieval,
        GranularitySummary,
        array_keys,
        macro,
        micro,
        retrieval_arrays,
        summarize_arm,
    )
    from copeca_action.retrieval._contextbench import evaluate_files, read_gold, read_prediction
    from copeca_action.retrieval._editloc import edit_lines, line_set
    from copeca_action.retrieval._extract import extract_viewed, viewed_from_transcript
    from copeca_action.retrieval._intervals import (
        Interval,
        intersection,
        intersection_measure,
        measure,
        merge,
        union,
    )
    from copeca_action.retrieval._metrics import (
        Context,
        RunRetrieval,
        Score,
        TrajectoryScore,
        build_context,
        ratios,
        run_metrics,
    )
    from copeca_action.retrieval._record import record_retrieval, summarize_run
    from copeca_action.retrieval._repo import Repo, SourceFile
    from copeca_action.retrieval._score import score_run
    from copeca_action.retrieval._symbols import LANGUAGE_BY_SUFFIX, Symbol, definitions
    from copeca_action.retrieval._viewed import (
        Viewed,
        ViewedContext,
        from_viewed_spans,
        to_viewed_spans,
    )

__all__ = [
    "LANGUAGE_BY_SUFFIX",
    "ArmRetrieval",
    "Context",
    "GranularitySummary",
    "Interval",
    "Repo",
    "RunRetrieval",
    "Score",
    "SourceFile",
    "Symbol",
    "TrajectoryScore",
    "Viewed",
    "ViewedContext",
    "array_keys",
    "build_context",
    "definitions",
    "edit_lines",
    "evaluate_files",
    "extract_viewed",
    "from_viewed_spans",
    "intersection",
    "intersection_measure",
    "line_set",
    "macro",
    "measure",
    "merge",
    "micro",
    "ratios",
    "read_gold",
    "read_prediction",
    "record_retrieval",
    "retrieval_arrays",
    "run_metrics",
    "score_run",
    "summarize_arm",
    "summarize_run",
    "to_viewed_spans",
    "union",
    "viewed_from_transcript",
]

_LAZY: dict[str, str] = {
    "ArmRetrieval": "copeca_action.retrieval._aggregate",
    "Context": "copeca_action.retrieval._metrics",
    "GranularitySummary": "copeca_action.retrieval._aggregate",
    "Interval": "copeca_action.retrieval._intervals",
    "LANGUAGE_BY_SUFFIX": "copeca_action.retrieval._symbols",
    "Repo": "copeca_action.retrieval._repo",
    "RunRetrieval": "copeca_action.retrieval._metrics",
    "Score": "copeca_action.retrieval._metrics",
    "SourceFile": "copeca_action.retrieval._repo",
    "Symbol": "copeca_action.retrieval._symbols",
    "TrajectoryScore": "copeca_action.retrieval._metrics",
    "Viewed": "copeca_action.retrieval._viewed",
    "ViewedContext": "copeca_action.retrieval._viewed",
    "array_keys": "copeca_action.retrieval._aggregate",
    "build_context": "copeca_action.retrieval._metrics",
    "definitions": "copeca_action.retrieval._symbols",
    "edit_lines": "copeca_action.retrieval._editloc",
    "evaluate_files": "copeca_action.retrieval._contextbench",
    "extract_viewed": "copeca_action.retrieval._extract",
    "from_viewed_spans": "copeca_action.retrieval._viewed",
    "intersection": "copeca_action.retrieval._intervals",
    "intersection_measure": "copeca_action.retrieval._intervals",
    "line_set": "copeca_action.retrieval._editloc",
    "macro": "copeca_action.retrieval._aggregate",
    "measure": "copeca_action.retrieval._intervals",
    "merge": "copeca_action.retrieval._intervals",
    "micro": "copeca_action.retrieval._aggregate",
    "ratios": "copeca_action.retrieval._metrics",
    "read_gold": "copeca_action.retrieval._contextbench",
    "read_prediction": "copeca_action.retrieval._contextbench",
    "record_retrieval": "copeca_action.retrieval._record",
    "retrieval_arrays": "copeca_action.retrieval._aggregate",
    "run_metrics": "copeca_action.retrieval._metrics",
    "score_run": "copeca_action.retrieval._score",
    "summarize_arm": "copeca_action.retrieval._aggregate",
    "summarize_run": "copeca_action.retrieval._record",
    "to_viewed_spans": "copeca_action.retrieval._viewed",
    "union": "copeca_action.retrieval._intervals",
    "viewed_from_transcript": "copeca_action.retrieval._extract",
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
