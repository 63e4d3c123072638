"""A stored record of a run that ended `ok` without `correct` is refused by every reader of
stored records (results read back, a bundle's records), never counted as a wrong answer by
the model's default; the engine, which builds records before grading, is not held to it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from copeca_action.bundle._verify import _parse
from copeca_action.errors import ConfigError, VerificationError
from copeca_action.records import STORED, RunRecord, read_records

BASE = {"run_id": "r", "scenario": "s", "task_id": "t", "task_hash": "h", "arm": "a",
        "model": "m", "runner": "claude", "repetition": 0, "cost_usd": 0.5}


def test_results_read_back_refuse_an_ok_run_without_a_grade(tmp_path: Path) -> None:
    path = tmp_path / "results.jsonl"
    lines = [{**BASE, "run_id": "graded", "outcome": "ok", "correct": False},
             {**BASE, "run_id": "failed", "outcome": "agent_error"},
             {**BASE, "run_id": "never", "outcome": "infra_error"},
             {**BASE, "run_id": "ungraded", "outcome": "ok"}]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    with pytest.raises(ConfigError) as info:
        read_records(path)
    message = str(info.value)
    assert f"{path}:4" in message and "correct: true or false" in message
    path.write_text("".join(json.dumps(line) + "\n" for line in lines[:3]))
    # a failed run, or one that never reached the agent, needs no grade: it is wrong
    assert [r.correct for r in read_records(path)] == [False, False, False]


def test_a_bundle_record_without_a_grade_is_corrupt() -> None:
    line = json.dumps({**BASE, "outcome": "ok"}).encode()
    with pytest.raises(VerificationError) as info:
        _parse(RunRecord, line, "results.jsonl:7")
    assert info.value.kind == "corrupt"
    assert "results.jsonl:7" in str(info.value) and "correct" in str(info.value)
    graded = json.dumps({**BASE, "outcome": "ok", "correct": True}).encode()
    assert _parse(RunRecord, graded, "results.jsonl:7").correct is True


def test_the_engine_builds_records_before_grading_them() -> None:
    """Built in code (no `STORED` context), an ok record without a grade is allowed: the
    engine grades it next, and writes `correct` in every record it writes."""
    built = RunRecord(**{**BASE, "outcome": "ok"})
    assert built.correct is False
    graded = built.model_copy(update={"correct": True})
    stored = json.loads(graded.model_dump_json())
    assert stored["correct"] is True
    assert RunRecord.model_validate(stored, context=STORED).correct is True
    with pytest.raises(ValueError, match="correct: true or false"):
        RunRecord.model_validate({**BASE, "outcome": "ok"}, context=STORED)
