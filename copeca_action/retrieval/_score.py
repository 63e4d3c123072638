"""One call per run: transcript + task + worktree (+ the agent's patch) → RunRetrieval."""

from __future__ import annotations

from copeca_action.retrieval._editloc import edit_lines, line_set
from copeca_action.retrieval._extract import viewed_from_transcript
from copeca_action.retrieval._metrics import RunRetrieval, run_metrics
from copeca_action.retrieval._repo import Repo
from copeca_action.scenario import Task
from copeca_action.transcript._model import Transcript


def score_run(transcript: Transcript, task: Task, repo: Repo, patch: str | None = None,
              run_id: str | None = None) -> RunRetrieval:
    """Retrieval metrics of one run against its task's gold.

    `repo` is the snapshot at the task's commit (the run's worktree before the agent's
    changes, with the worktree path the agent saw as an alias). `patch` is the agent's
    `git diff` against that snapshot; None for comprehension tasks (no EditLoc)."""
    viewed = viewed_from_transcript(transcript, repo)
    gold_edit = line_set((s.file, s.lines) for s in task.gold_edit_lines)
    pred_edit = edit_lines(patch, f"{run_id or 'run'}: patch") if patch is not None else None
    return run_metrics(repo, viewed.items, ((s.file, s.lines) for s in task.gold_context),
                       gold_edit=gold_edit, pred_edit=pred_edit, run_id=run_id,
                       dropped=viewed.dropped, task_id=task.id)
