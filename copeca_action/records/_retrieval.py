"""The retrieval result a RunRecord carries, so the report works from results.jsonl alone.

The shape mirrors `copeca_action.retrieval.RunRetrieval` (same field names), minus the ids the
record already holds; `copeca_action.retrieval.record_retrieval` fills it. It lives here, not
in retrieval/, because retrieval reads records (ViewedSpan) and not the other way round.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from copeca_action._util.model import RecordModel

NonNeg = Annotated[int, Field(ge=0)]
Share = Annotated[float, Field(ge=0)]
"""A ratio in [0, 1] (only the lower bound is checked: no rounding can fail a run)."""


class RetrievalScore(RecordModel):
    """One granularity: the sizes (for micro aggregation), then the ratios of this run."""

    intersection: NonNeg
    gold: NonNeg
    """|gold| in files, symbols, bytes or lines."""
    pred: NonNeg
    """|prediction| in the same unit."""
    coverage: Share
    precision: Share
    f1: Share


class RetrievalTrajectory(RecordModel):
    """How the viewed context grew over the run's viewing steps, at one granularity."""

    auc: Share
    """AUC-coverage: mean of `coverage_by_step` (0.0 with no steps)."""
    redundancy: Share
    """1 − |union viewed| / Σ per-step sizes (0.0 when nothing was viewed)."""
    coverage_by_step: list[Share] = []
    """Cumulative gold coverage after each viewing step."""


class RetrievalSummary(RecordModel):
    """Retrieval metrics of one run (docs/retrieval.md). A granularity is None when the task
    has no gold for it (no `gold_context`; for editloc: no `gold_edit_lines` or no patch)."""

    steps: NonNeg = 0
    """Trajectory length: model steps that viewed at least one file."""
    file: RetrievalScore | None = None
    symbol: RetrievalScore | None = None
    span: RetrievalScore | None = None
    editloc: RetrievalScore | None = None
    trajectory_file: RetrievalTrajectory | None = None
    trajectory_symbol: RetrievalTrajectory | None = None
    trajectory_span: RetrievalTrajectory | None = None
    dropped_paths: NonNeg = 0
    """How many paths the agent named were not files of the repository (left out)."""
