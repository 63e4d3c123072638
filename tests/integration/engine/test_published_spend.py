"""One run set through `copeca-action run`, killed and resumed: a retried infra error that
spent, an attempt the harness died during (its agent waiting for its last model request),
and a normal run. The spend figures are the same wherever they are published (report.json,
report.md, the PR comment, the job summary, the signed summary) and the evidence behind the
spend of the earlier attempts (OUT/attempts/) is in the signed bundle, which verifies."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from engine_helpers import fake, make_corpus, write

from copeca_action.bundle import verify_bundle
from copeca_action.bundle._zipread import SafeZip
from copeca_action.github._action import summary_markdown
from copeca_action.github._from_report import BundleInfo, comment_data
from copeca_action.github._render import render_comment
from copeca_action.records import latest_by_run_id, read_records
from copeca_action.report import Report


def _cmd(scenario: Path, out: Path, cache: Path, tool: Path, *extra: str) -> list[str]:
    return [sys.executable, "-m", "copeca_action.cli", "run", str(scenario), "--out", str(out),
            "--cache", str(cache), "--tool-dir", str(tool), "--plain", *extra]


def _kill_agents(marker: str) -> None:
    """The fake agents a SIGKILLed harness left running (their own process groups)."""
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            if marker.encode() in (entry / "cmdline").read_bytes():
                os.kill(int(entry.name), signal.SIGKILL)
        except (OSError, ProcessLookupError):
            continue


def _killed_and_resumed(tmp_path: Path) -> Path:
    once = tmp_path / "once"
    once.mkdir()
    corpus = make_corpus(tmp_path, {
        "retried": {"prompt": fake(answer="42", cost=0.01, failed_cost=0.03,
                                   endpoint_error_once=str(once))},
        "flying": {"prompt": fake(answer="42", cost=0.02, sleep_before_result=60,
                                  sleep_once=str(once))},
        "normal": {"prompt": fake(answer="42", cost=0.04)}},
        modes={"tool": {"env": {"TOOL_HOME": "{tool_dir}"}}})
    scenario = write(corpus / "scenarios" / "t.yaml", {
        "name": "t", "tasks": {"include": ["app/*"]}, "modes": ["baseline", "tool"],
        "models": ["fake-model"], "model_runner_map": {"fake-model": "fake"},
        "repetitions": 1, "timeout_s": 120, "workers": 6, "thresholds": {"min_runs": 1}})
    cache, out, tool = tmp_path / "cache", tmp_path / "out", tmp_path / "tool"
    tool.mkdir()
    (tool / "server.py").write_text("print('tool')\n")
    # the fake agent marks its first attempt in a folder an isolated agent cannot see
    env = {**os.environ, "PYTHONUNBUFFERED": "1", "COPECA_AGENT_ISOLATION": "none"}
    proc = subprocess.Popen(_cmd(scenario, out, cache, tool), env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 120
    results = out / "results.jsonl"
    while True:
        assert time.monotonic() < deadline and proc.poll() is None, "never reached the kill"
        lines = results.read_bytes().count(b"\n") if results.is_file() else 0
        if lines >= 6 and (once / "slept").is_file():  # the others done, one agent waits
            break
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    _kill_agents(str(once))
    resumed = subprocess.run(_cmd(scenario, out, cache, tool, "--resume"), env=env,
                             capture_output=True, text=True)
    assert resumed.returncode == 0, resumed.stderr
    return out


def test_the_spend_of_earlier_attempts_is_published_alike_and_bundled(
        tmp_path: Path) -> None:
    out = _killed_and_resumed(tmp_path)
    records = read_records(out / "results.jsonl")
    final = latest_by_run_id(records)
    earlier = [r for r in records if final[r.run_id] is not r]
    assert sorted((r.task_id, r.outcome, "harness_died" in r.flags) for r in earlier) == [
        ("app/flying", "infra_error", True), ("app/retried", "infra_error", False)]
    total = sum(r.cost_usd or 0.0 for r in records)
    excluded = sum(r.cost_usd or 0.0 for r in earlier)

    report = Report.model_validate_json((out / "report.json").read_text())
    sp = report.spend
    assert sp is not None
    assert (sp.total_usd, sp.excluded_usd, sp.excluded_attempts) == (
        round(total, 10), round(excluded, 10), 2) or (
        abs(sp.total_usd - total) < 1e-12 and abs(sp.excluded_usd - excluded) < 1e-12)
    assert (sp.died_attempts, sp.died_lower_bound, sp.lower_bound_attempts) == (1, 1, 1)

    md = " ".join((out / "report.md").read_text().split())
    sentence = (f"**Spend**: ${sp.total_usd:,.4f} in all: ${sp.counted_usd:,.4f} on the runs "
                f"the arms count, ${sp.excluded_usd:,.4f} on 2 excluded or retried attempt(s)")
    assert sentence in md, md[:3000]
    assert "stopped mid-run" not in md
    assert "1 attempt(s) were running when the harness died" in md

    data = comment_data(report, BundleInfo(path=None, sha256=None, keyid=None),
                        comment_id="t", tasks={})
    for published in (render_comment(data), summary_markdown(data, None)):
        text = " ".join(published.split())
        assert (f"**This run**: ${sp.total_usd:,.4f} on 6 runs (all arms and tasks; "
                f"${sp.excluded_usd:,.4f} of it on 2 excluded or retried attempts)") in text, \
            text[:3000]
        assert "stopped mid-run" not in text
        assert "1 running when the harness died may have been billed more" in text

    bundle = out / "t.copeca"
    verified = verify_bundle(bundle)
    summary = verified.statement.predicate.summary
    assert summary is not None
    assert summary.extra["spend_total"] == sp.total_usd
    assert verified.attempts_checked == (
        f"2 earlier attempt(s) spent ${sp.excluded_usd:.4f} outside the statistics; 2 of them "
        "with their folder in attempts/ (record, output)")
    with SafeZip(bundle) as archive:
        kept = sorted(p for p in archive.members if p.startswith("attempts/"))
        bundled = [json.loads(archive.read(p)) for p in kept if p.endswith("/record.json")]
    assert sorted((r["task_id"], r["cost_usd"]) for r in bundled) == sorted(
        (r.task_id, r.cost_usd) for r in earlier)
    assert all(any(p.startswith(f"attempts/{r.run_id}/") and p.endswith("/stdout.jsonl")
                   for p in kept) for r in earlier), kept
