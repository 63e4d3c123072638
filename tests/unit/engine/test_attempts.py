"""Every attempt of a run keeps its evidence: an infra error retried does not wipe what the
attempt before it left (moved to OUT/attempts/<run id>/), so the ledger (results.jsonl) can
always be restored from the run folders, each attempt once."""

from __future__ import annotations

from pathlib import Path

import pytest
from engine_helpers import config, fake, make_corpus, scenario

from copeca_action.engine import run_plan
from copeca_action.plan import build_plan
from copeca_action.records import RunRecord, read_records


@pytest.fixture
def unisolated(monkeypatch: pytest.MonkeyPatch) -> None:
    """The fake agent marks its first attempt in a folder of the test, which an isolated
    agent cannot see (its /tmp is blank): these tests are of the ledger, not of isolation."""
    monkeypatch.setenv("COPECA_AGENT_ISOLATION", "none")


def _retried(tmp_path: Path) -> tuple[Path, str]:
    once = tmp_path / "once"
    once.mkdir()
    corpus = make_corpus(tmp_path, {"q": {"prompt": fake(
        answer="It returns 42.", cost=0.01, failed_cost=0.03,
        endpoint_error_once=str(once))}})
    return corpus, "name: t\n"


def _recovery(warnings: list[str]) -> list[str]:
    return [w for w in warnings if "restored" in w or "in flight" in w]


def _spend(records: list[RunRecord]) -> float:
    return sum(r.cost_usd or 0.0 for r in records)


@pytest.mark.usefixtures("unisolated")
def test_a_retried_attempt_keeps_its_record_and_output_in_the_run_folder(
        tmp_path: Path) -> None:
    corpus, text = _retried(tmp_path)
    cfg = config(tmp_path, corpus, scenario(workers=1))
    plan = build_plan(cfg.scenario, cfg.corpus.tasks)
    run_plan(cfg, plan, scenario_text=text)
    first, second = read_records(cfg.out.results)
    assert (first.outcome, first.attempt, first.cost_usd) == ("infra_error", 1, 0.03)
    assert (second.outcome, second.attempt, second.cost_usd) == ("ok", 2, 0.01)
    run_dir = cfg.out.run_dir(first.run_id)
    assert RunRecord.model_validate_json((run_dir / "record.json").read_text()) == second
    (kept,) = (cfg.out.attempts / first.run_id).iterdir()
    assert kept.name.startswith("1-")
    assert RunRecord.model_validate_json((kept / "record.json").read_text()) == first
    assert "529" in (kept / "stdout.jsonl").read_text()
    # the agent's own state is no evidence: it goes with the attempt, as a bundle leaves it
    assert not {"config", "home", "tmp"} & {p.name for p in kept.iterdir()}
    assert not (run_dir / "attempts").exists()  # out of the next agent's reach


@pytest.mark.usefixtures("unisolated")
def test_the_line_of_a_retried_attempt_removed_comes_back_and_is_counted_once(
        tmp_path: Path) -> None:
    """Attempt 1 spent $0.03 and failed with an endpoint error, attempt 2 spent $0.01: the
    first line removed (by hand), resume restores it from OUT/attempts/<id>/, the spend is
    $0.04, each attempt once, however often the folder is resumed."""
    corpus, text = _retried(tmp_path)
    cfg = config(tmp_path, corpus, scenario(workers=1))
    plan = build_plan(cfg.scenario, cfg.corpus.tasks)
    run_plan(cfg, plan, scenario_text=text)
    lines = cfg.out.results.read_text().splitlines(keepends=True)
    assert len(lines) == 2
    cfg.out.results.write_text(lines[1])
    stats = run_plan(cfg, plan, resume=True, scenario_text=text)
    assert stats.records == []  # nothing ran again
    assert any("restored 1 record(s) (0 of finished runs" in w for w in stats.warnings)
    # put back in its place, before the attempt that superseded it (the run's last line
    # stays its latest attempt), the line kept there byte for byte
    assert cfg.out.results.read_text().splitlines(keepends=True) == lines
    assert _spend(read_records(cfg.out.results)) == pytest.approx(0.04)
    again = run_plan(cfg, plan, resume=True, scenario_text=text)
    assert again.records == [] and not _recovery(again.warnings)
    assert _spend(read_records(cfg.out.results)) == pytest.approx(0.04)
