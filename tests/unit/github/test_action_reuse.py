"""`reuse:` through the action's entrypoint: a first job's signed bundle is downloaded into
the next job's workspace; the unchanged baseline arm is copied, the changed tool arm runs,
and the comment says how many runs were reused and from which bundle."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path
from typing import Any

import pytest
from fake_github import FakeGitHub
from gh_support import parse_outputs, payload

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "workspace"))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "engine"))
from reuse_world import make_world, pem

from copeca_action._util.hashing import sha256_file
from copeca_action.bundle import verify_bundle
from copeca_action.github import RetryPolicy, main, run_engine
from copeca_action.records import read_records

KEY = ("Codertocat", "Hello-World", 2)


def _job(env: dict[str, str]) -> int:
    return main(env, run_engine, policy=RetryPolicy(attempts=2, backoff_s=0.01),
                sleep=lambda _: None)


def test_a_rerun_reuses_the_unchanged_arm_and_says_so(
        fake_github: FakeGitHub, actions_env: Any, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("COPECA_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("ANTHROPIC_API_KEY", "")  # the entrypoint exports the input's key
    ws = tmp_path / "ws"
    world = make_world(ws / "bench")
    inputs = {"scenario": "bench/corpus/scenarios/s.yaml", "tool_dir": "bench/tool",
              "signing_key": pem(world.private).decode(), "fail_on": "never"}
    env = actions_env("pull_request", payload("pull_request.opened"), fake_github.url,
                      **inputs)
    assert _job(env) == 0
    first = Path(parse_outputs(Path(env["GITHUB_OUTPUT"]))["bundle-path"])
    (ws / "previous").mkdir()
    shutil.copy(first, ws / "previous" / first.name)
    sha = sha256_file(first)
    shutil.rmtree(ws / ".copeca")  # the next job starts from a fresh workspace

    world.edit_tool("print('v2')\n")
    env = actions_env("pull_request", payload("pull_request.synchronize"), fake_github.url,
                      reuse="previous/*.copeca", **inputs)
    Path(env["GITHUB_OUTPUT"]).unlink()
    assert _job(env) == 0
    out = parse_outputs(Path(env["GITHUB_OUTPUT"]))
    records = read_records(ws / ".copeca" / "results.jsonl")
    assert sorted((r.arm, r.reused_from) for r in records) == [
        ("baseline", sha), ("baseline", sha), ("tool", None), ("tool", None)]
    verified = verify_bundle(Path(out["bundle-path"]), world.private.public_key())
    assert len(verified.records) == 4
    body = fake_github.comments[KEY][0]["body"]
    (tmp_path / "comment.md").write_text(body)  # kept for a look at a failure
    assert "2 of 4 run(s) reused" in body and sha in body
    assert "reused 2 of 4 planned run(s) from s.copeca" in capsys.readouterr().out


def test_a_missing_previous_bundle_warns_and_runs_everything(
        fake_github: FakeGitHub, actions_env: Any, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("COPECA_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("ANTHROPIC_API_KEY", "")  # the entrypoint exports the input's key
    world = make_world(tmp_path / "ws" / "bench")
    env = actions_env("pull_request", payload("pull_request.opened"), fake_github.url,
                      scenario="bench/corpus/scenarios/s.yaml", tool_dir="bench/tool",
                      signing_key=pem(world.private).decode(), fail_on="never",
                      reuse="previous/*.copeca")
    assert _job(env) == 0
    records = read_records(tmp_path / "ws" / ".copeca" / "results.jsonl")
    assert len(records) == 4 and not any(r.reused_from for r in records)
    assert "::warning::copeca-action: reuse: no bundle matches" in capsys.readouterr().out
    body = fake_github.comments[KEY][0]["body"]
    assert "no bundle matches" in body


def test_the_report_draws_the_trend_of_the_history_on_the_data_branch(
        fake_github: FakeGitHub, actions_env: Any, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A PR job reads the history the default branch's runs left on copeca-data: its
    report.html draws their trend, and its comment compares with them."""
    import datetime as dt

    from copeca_action.github import History, history_entry
    from copeca_action.report import Report

    monkeypatch.setenv("COPECA_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("ANTHROPIC_API_KEY", "")
    world = make_world(tmp_path / "ws" / "bench")
    env = actions_env("pull_request", payload("pull_request.opened"), fake_github.url,
                      scenario="bench/corpus/scenarios/s.yaml", tool_dir="bench/tool",
                      signing_key=pem(world.private).decode(), fail_on="never")
    assert _job(env) == 0  # a first run, to have a report to make history entries from
    report = Report.model_validate_json(
        Path(parse_outputs(Path(env["GITHUB_OUTPUT"]))["report-path"]).read_text())
    entries = [history_entry(report, commit=f"{i}" * 40,
                             date=dt.datetime(2026, 11, i + 1, tzinfo=dt.UTC), event="push")
               for i in range(1, 4)]
    fake_github.branches[("Codertocat", "Hello-World", "copeca-data")] = {
        "copeca/copeca/history.json": History(entries=entries).model_dump_json().encode()}
    Path(env["GITHUB_OUTPUT"]).unlink()
    assert _job(env) == 0
    out = parse_outputs(Path(env["GITHUB_OUTPUT"]))
    page = Path(out["report-path"]).with_name("report.html").read_text()
    assert 'data-chart="trend"' in page and "the last 3 runs" in page
    body = fake_github.comments[KEY][0]["body"]
    (tmp_path / "comment.md").write_text(body)
    assert "vs a median of" in body and "over the last 3 runs on master" in body
