"""results.jsonl is the ledger of what was spent. A line removed by hand (or never appended:
the harness died between writing the run's record.json and appending it) comes back from the
run's folder on `--resume`: the run is not paid for again, counted once, the report's spend
and the signed bundle are those of the whole plan. Real Claude Code against the scripted
model (`model_endpoint: scripted`), through `copeca-action run`."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from engine_helpers import write

from copeca_action._util.paths import corpus_dir, runners_dir
from copeca_action.engine import FINISHED
from copeca_action.records import read_records

BIN = runners_dir() / "node_modules" / ".bin"
pytestmark = [pytest.mark.cli, pytest.mark.slow, pytest.mark.skipif(
    not (BIN / "claude").exists(), reason="Claude Code is not installed (run `make node`)")]


def scripted_scenario(root: Path, name: str = "ledger") -> tuple[Path, Path]:
    """A two-run scenario of the bundled corpus (one fastapi control task, baseline and the
    demo's code-search arm, Claude Code) answered by the scripted model, on a copy of the
    bundled scripts (so a test can change them: the endpoint is part of the fingerprint).
    Returns (scenario, scripts)."""
    scripts = root / "scripts"
    shutil.copytree(corpus_dir() / "scripts", scripts)
    scenario = write(root / f"{name}.yaml", {
        "name": name, "tasks": {"include": ["fastapi/control-longest-word"]},
        "modes": ["baseline", "codesearch"], "models": ["claude-sonnet-4-5"],
        "model_runner_map": {"claude-sonnet-4-5": "claude"}, "repetitions": 1,
        "timeout_s": 300, "max_turns": 20, "workers": 2, "seed": 7,
        "model_endpoint": "scripted", "scripts": str(scripts),
        "thresholds": {"min_runs": 1}})
    return scenario, scripts


def copeca(*args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items()
           if k not in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "COPECA_SIGNING_KEY")}
    return subprocess.run([sys.executable, "-m", "copeca_action.cli", *args],
                          capture_output=True, text=True, timeout=900, check=False, env=env)


def test_a_removed_line_comes_back_from_its_run_folder_and_is_not_paid_again(
        tmp_path: Path) -> None:
    scenario, _ = scripted_scenario(tmp_path)
    out, cache = tmp_path / "out", tmp_path / "cache"
    first = copeca("run", str(scenario), "--out", str(out), "--cache", str(cache), "--plain")
    assert first.returncode == 0, first.stdout[-2000:] + first.stderr[-2000:]
    results = out / "results.jsonl"
    lines = results.read_text().splitlines(keepends=True)
    assert len(lines) == 2
    requests = (out / "model-requests.jsonl").read_text()
    removed = read_records(results)[0]
    results.write_text("".join(lines[1:]))  # by hand: the run's folder is still there

    again = copeca("run", str(scenario), "--out", str(out), "--cache", str(cache), "--plain",
                   "--resume")
    said = " ".join((again.stdout + again.stderr).split())
    assert again.returncode == 0, said[-3000:]
    assert "restored 1 record(s) (1 of finished runs, not run again)" in said, said[-3000:]
    assert removed.run_id in said and "the ledger of what was spent" in said
    assert "--start-over" in said
    # nothing ran: the scripted model saw no request, the record is the one measured
    assert (out / "model-requests.jsonl").read_text() == requests
    records = read_records(results)
    assert {r.run_id: r for r in records}[removed.run_id] == removed
    finished = [r.run_id for r in records if r.outcome in FINISHED]
    assert len(finished) == len(set(finished)) == 2  # each run once
    assert sorted(results.read_text().splitlines(keepends=True)) == sorted(lines)
    # the report and the signed bundle (which checks every line against record.json) agree
    spend = sum(r.cost_usd or 0.0 for r in records)
    assert "verified" in said
    verify = copeca("verify", str(out / "ledger.copeca"))
    assert verify.returncode == 0, verify.stdout + verify.stderr
    report = (out / "report.md").read_text()
    assert f"${spend:,.4f}" in report or f"${spend:,.2f}" in report, report[:3000]
