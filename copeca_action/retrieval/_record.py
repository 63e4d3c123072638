"""The engine's one call per run: score it and shrink the result to the record's field."""

from __future__ import annotations

from pathlib import Path

from copeca_action.records import RetrievalScore, RetrievalSummary, RetrievalTrajectory
from copeca_action.retrieval._metrics import CONTEXT_GRANULARITIES, GRANULARITIES, RunRetrieval
from copeca_action.retrieval._repo import Repo
from copeca_action.retrieval._score import score_run
from copeca_action.scenario import Task
from copeca_action.transcript._model import Transcript


def summarize_run(run: RunRetrieval) -> RetrievalSummary:
    """The RunRecord's copy of a RunRetrieval: every number, the dropped paths as a count."""
    fields: dict[str, object] = {"steps": run.steps, "dropped_paths": len(run.dropped_paths)}
    for g in GRANULARITIES:
        value = getattr(run, g)
        if value is not None:
            fields[g] = RetrievalScore.model_validate(value.model_dump())
    for g in CONTEXT_GRANULARITIES:
        traj = getattr(run, f"trajectory_{g}")
        if traj is not None:
            fields[f"trajectory_{g}"] = RetrievalTrajectory(
                auc=traj.auc, redundancy=traj.redundancy,
                coverage_by_step=traj.coverage_by_step)
    return RetrievalSummary.model_validate(fields)


def record_retrieval(transcript: Transcript, task: Task, snapshot_dir: Path | str,
                     patch_text: str | None = None, run_id: str | None = None, *,
                     aliases: tuple[str, ...] = (),
                     repo: Repo | None = None) -> RetrievalSummary | None:
    """`RunRecord.retrieval` for one run; None when the task has no gold at all.

    `snapshot_dir` is the task's snapshot before the agent's edits; `aliases` are the paths
    the agent saw it under (the run's worktree). Pass `repo` to share one parsed snapshot
    between the runs of a task (it then overrides `snapshot_dir` and `aliases`). An empty
    `patch_text` is an edit that changed nothing; None means no patch (no EditLoc).
    Raises ConfigError only when `patch_text` is not a unified diff."""
    if not task.gold_context and not task.gold_edit_lines:
        return None
    source = repo if repo is not None else Repo(snapshot_dir, aliases)
    return summarize_run(score_run(transcript, task, source, patch=patch_text, run_id=run_id))
