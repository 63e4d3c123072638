"""A record without `cost_usd`: the run's cost is unknown when it reached the agent (never
the model's default 0), and 0 when it never did; the same in every reader."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from copeca_action.records import RunRecord, read_records, read_rows
from copeca_action.records._kinds import NO_COST_FIELD

BASE = {"run_id": "r", "scenario": "s", "task_id": "t", "task_hash": "h", "arm": "a",
        "model": "m", "runner": "claude", "repetition": 0}


@pytest.mark.parametrize("outcome", ["ok", "agent_error", "timeout"])
def test_a_run_that_reached_the_agent_without_a_cost_has_an_unknown_one(outcome: str) -> None:
    rec = RunRecord.model_validate({**BASE, "outcome": outcome})
    assert rec.cost_usd is None and rec.cost_unknown_reason == NO_COST_FIELD
    said = RunRecord.model_validate({**BASE, "outcome": outcome,
                                     "cost_unknown_reason": "no price for m"})
    assert said.cost_usd is None and said.cost_unknown_reason == "no price for m"
    assert RunRecord.model_validate({**BASE, "outcome": outcome, "cost_usd": 0.0}).cost_usd == 0


@pytest.mark.parametrize("outcome", ["infra_error", "budget_stop"])
def test_a_run_that_never_reached_the_agent_costs_nothing(outcome: str) -> None:
    rec = RunRecord.model_validate({**BASE, "outcome": outcome})
    assert rec.cost_usd == 0.0 and rec.cost_unknown_reason is None


def test_every_reader_agrees(tmp_path: Path) -> None:
    path = tmp_path / "results.jsonl"
    lines = [{**BASE, "run_id": "reached", "outcome": "ok", "correct": True},
             {**BASE, "run_id": "never", "outcome": "infra_error"},
             {**BASE, "run_id": "priced", "outcome": "ok", "correct": False, "cost_usd": 0.25}]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    by_records = {r.run_id: (r.cost_usd, r.cost_unknown_reason) for r in read_records(path)}
    rows, _ = read_rows(path)
    by_rows = {r["run_id"]: (r.get("cost_usd", 0.0), r.get("cost_unknown_reason"))
               for r in rows}
    assert by_records == by_rows == {"reached": (None, NO_COST_FIELD), "never": (0.0, None),
                                     "priced": (0.25, None)}
    # written back, the unknown stays unknown (a bundle or a merge keeps it)
    assert json.loads(next(iter(read_records(path))).model_dump_json())["cost_usd"] is None
