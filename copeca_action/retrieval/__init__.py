"""Retrieval metrics (ContextBench's definitions): what the agent viewed, against the gold.

Per run: `score_run` (or `extract_viewed` + `run_metrics`) gives a `RunRetrieval`. Per arm:
`retrieval_arrays` gives the per-run arrays the report bootstraps with `macro` / `micro`;
`summarize_arm` gives the point estimates.
"""

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
    "retrieval_arrays",
    "run_metrics",
    "score_run",
    "summarize_arm",
    "to_viewed_spans",
    "union",
    "viewed_from_transcript",
]
