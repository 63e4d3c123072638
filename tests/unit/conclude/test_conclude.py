"""Concluding an output folder: report files, a signed bundle that verifies, a signed
headline that says what the report says."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bundle"))
from bundle_support import demo_plan, record_for

from copeca_action.bundle import verify_bundle
from copeca_action.conclude import conclude
from copeca_action.plan import RunPlan
from copeca_action.records import write_records
from copeca_action.scenario import Corpus, Scenario


@pytest.fixture
def finished(tmp_path: Path, corpus_root: Path) -> tuple[Path, Path, Scenario, Corpus, RunPlan]:
    """An output folder holding a record for every planned run of the demo."""
    scenario_path, scenario, corpus, plan = demo_plan(corpus_root)
    out = tmp_path / "out"
    out.mkdir()
    write_records(out / "results.jsonl", [record_for(plan, i) for i in range(len(plan.runs))])
    return out, scenario_path, scenario, corpus, plan


def test_conclude_writes_report_files_and_a_verified_signed_bundle(
        finished: tuple[Path, Path, Scenario, Corpus, RunPlan]) -> None:
    out, scenario_path, scenario, corpus, plan = finished
    key = Ed25519PrivateKey.generate()
    done = conclude(out, scenario_path, scenario, plan, runners=corpus.runners,
                    tasks=corpus.tasks, key=key, bundle_path=out / "demo.copeca")
    assert sorted(done.files) == ["report.html", "report.json", "report.md"]
    assert all(p.is_file() and p.stat().st_size > 0 for p in done.files.values())
    assert done.bundle_path is not None and done.keyid is not None
    verified = verify_bundle(done.bundle_path, key.public_key(), scenario, corpus.tasks)
    assert verified.keyid == done.keyid
    summary = verified.statement.predicate.summary
    assert summary is not None and summary.verdict == done.report.verdict
    assert set(summary.cpc) == {a.arm for a in done.report.arms}


def test_conclude_without_a_key_makes_an_unsigned_bundle(
        finished: tuple[Path, Path, Scenario, Corpus, RunPlan]) -> None:
    out, scenario_path, scenario, corpus, plan = finished
    done = conclude(out, scenario_path, scenario, plan, runners=corpus.runners,
                    bundle_path=out / "b.copeca")
    assert done.keyid is None
    assert verify_bundle(out / "b.copeca").keyid is None


def test_a_results_line_edited_by_hand_is_refused_before_a_report_is_signed(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "workspace"))
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "engine"))
    from reuse_world import make_world

    world = make_world(tmp_path)
    assert world.run("out") == 0
    results = tmp_path / "out" / "results.jsonl"
    rows = [json.loads(line) for line in results.read_text().splitlines()]
    rows[1]["cost_usd"] = rows[1]["cost_usd"] / 10  # a cheaper tool, by hand
    results.write_text("".join(json.dumps(r) + "\n" for r in rows))
    bundle = tmp_path / "out" / "s.copeca"
    bundle.unlink()
    assert world.run("out", "--resume") == 2
    err = capsys.readouterr().err
    assert "1 record(s) differ from their run folder's record.json" in err
    assert f"{rows[1]['run_id']} (cost_usd)" in err and "results.jsonl" in err
    assert not bundle.exists()
