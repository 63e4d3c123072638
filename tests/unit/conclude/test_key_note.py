"""The report warns when agents held the real model key (COPECA_KEY_PROXY=off)."""

from __future__ import annotations

from copeca_action.conclude._report import key_note, report_of
from copeca_action.records import RunRecord
from copeca_action.report import Settings


def _rec(run_id: str, flags: list[str]) -> RunRecord:
    return RunRecord(run_id=run_id, scenario="s", task_id="r/t", task_hash="h", arm="baseline",
                     model="m", runner="claude", repetition=0, outcome="ok", correct=True,
                     flags=flags)


def test_runs_that_held_the_key_are_counted_in_the_warnings() -> None:
    records = [_rec("a", ["key_in_agent_env"]), _rec("b", []), _rec("c", ["key_in_agent_env"])]
    note = key_note(records)
    assert note is not None and note.startswith("2 of 3 agent run(s) held the real model key")
    assert "COPECA_KEY_PROXY=off" in note
    report = report_of(records, Settings(), scenario="s")
    assert note in report.warnings


def test_no_note_when_every_key_stayed_in_the_harness() -> None:
    assert key_note([_rec("a", []), _rec("b", ["agent_not_isolated"])]) is None
