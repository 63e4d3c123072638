"""record_retrieval: the engine's per-run call, on the real fastapi snapshot, into a RunRecord."""

from __future__ import annotations

from pathlib import Path

import pytest

from copeca_action.errors import ConfigError
from copeca_action.records import RetrievalSummary, RunRecord
from copeca_action.retrieval import Repo, record_retrieval, score_run, summarize_run
from copeca_action.scenario import load_task
from copeca_action.transcript._model import ToolCall, Transcript, Turn

ROOT = Path(__file__).resolve().parents[3]
TASKS = ROOT / "corpus/tasks/fastapi"
WORKTREE = "/tmp/copeca/runs/abc/worktree"
FIX = "\n".join([
    "--- a/fastapi/utils.py",
    "+++ b/fastapi/utils.py",
    "@@ -183,1 +183,1 @@",
    '-    operation_id = f"{operation_id}_{list(route.methods)[0].lower()}"',
    '+    operation_id = f"{operation_id}_{sorted(route.methods)[0].lower()}"',
    ""])


def transcript() -> Transcript:
    calls = [
        ToolCall(step=0, name="Bash", input={"command": "ls /nowhere/x.py; cat nope.py"}),
        ToolCall(step=1, name="Read", input={"file_path": WORKTREE + "/fastapi/routing.py",
                                             "offset": 428, "limit": 40}),
        ToolCall(step=2, name="Read", input={"file_path": WORKTREE + "/fastapi/utils.py",
                                             "offset": 170, "limit": 20}),
    ]
    return Transcript(parser="stream_json",
                      turns=[Turn(index=c.step, tool_calls=[c]) for c in calls], tool_calls=calls)


def test_record_retrieval_on_fastapi(fastapi_src: Path) -> None:
    task = load_task(TASKS / "fix-unique-id-method.yaml")
    summary = record_retrieval(transcript(), task, fastapi_src, FIX, "r1", aliases=(WORKTREE,))
    assert summary is not None
    assert summary == summarize_run(score_run(transcript(), task, Repo(fastapi_src, [WORKTREE]),
                                              patch=FIX, run_id="r1"))
    assert summary.steps == 2 and summary.dropped_paths == 1  # nope.py is not in the tree
    assert summary.trajectory_span is not None
    assert summary.trajectory_span.coverage_by_step == [0.0, 1.0]
    assert summary.trajectory_span.auc == 0.5
    assert summary.file is not None and (summary.file.intersection, summary.file.pred) == (1, 2)
    assert summary.editloc is not None and summary.editloc.coverage == 1.0
    record = RunRecord(run_id="r1", scenario="s", task_id=task.id, task_hash="h", arm="mcp",
                       model="m", runner="claude", repetition=0, outcome="ok",
                       retrieval=summary)
    assert RunRecord.model_validate_json(record.model_dump_json()) == record


def test_no_patch_no_editloc_and_a_shared_repo(fastapi_src: Path) -> None:
    task = load_task(TASKS / "fix-unique-id-method.yaml")
    repo = Repo(fastapi_src, [WORKTREE])
    summary = record_retrieval(transcript(), task, "/ignored", None, repo=repo)
    assert summary is not None and summary.editloc is None and summary.span is not None
    empty = record_retrieval(Transcript(parser="codex_json"), task, fastapi_src, "")
    assert empty is not None and empty.steps == 0
    assert empty.editloc is not None and empty.editloc.coverage == 0.0  # changed nothing
    assert empty.trajectory_span is not None and empty.trajectory_span.auc == 0.0


def test_a_task_without_gold_gives_none(fastapi_src: Path) -> None:
    task = load_task(TASKS / "control-prompt-words.yaml")
    assert not task.gold_context and not task.gold_edit_lines
    assert record_retrieval(transcript(), task, fastapi_src, FIX) is None


def test_a_bad_patch_is_a_config_error(fastapi_src: Path) -> None:
    task = load_task(TASKS / "fix-unique-id-method.yaml")
    with pytest.raises(ConfigError, match="r9: patch"):
        record_retrieval(transcript(), task, fastapi_src, "--- a/x\n+++ b/x\n@@ -1,5 +1,1 @@\n-a\n",
                         "r9")


def test_the_summary_round_trips_through_a_record_line() -> None:
    summary = RetrievalSummary(steps=1)
    assert RetrievalSummary.model_validate_json(summary.model_dump_json()) == summary
