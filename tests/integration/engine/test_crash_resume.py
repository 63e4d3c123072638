"""The harness killed with SIGKILL mid-run, then `--resume`: the finished plan equals an
uninterrupted one, no run is counted twice, no worktree is left behind. And SIGINT: a clean
stop (records flushed, worktrees removed, agent processes gone)."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

from engine_helpers import fake, make_corpus, write

from copeca_action.engine import FINISHED
from copeca_action.records import latest_by_run_id, read_records

N_TASKS = 8


def _setup(tmp_path: Path) -> tuple[Path, Path]:
    piddir = tmp_path / "pids"
    piddir.mkdir()
    tasks = {f"t{i}": {"prompt": fake(answer="42" if i % 3 else "41", cost=0.01 * (i + 1),
                                      sleep=0.4, piddir=str(piddir))}
             for i in range(N_TASKS)}
    corpus = make_corpus(tmp_path, tasks)
    scenario = write(corpus / "scenarios" / "t.yaml", {
        "name": "t", "tasks": {"include": ["app/*"]}, "modes": ["baseline"],
        "models": ["fake-model"], "model_runner_map": {"fake-model": "fake"},
        "repetitions": 2, "timeout_s": 60, "workers": 2})
    return scenario, piddir


def _cmd(scenario: Path, out: Path, cache: Path, *extra: str) -> list[str]:
    return [sys.executable, "-m", "copeca_action.cli", "run", str(scenario), "--out", str(out),
            "--cache", str(cache), "--plain", *extra]


def _wait_for_lines(path: Path, n: int, proc: subprocess.Popen[bytes],
                    limit_s: float = 120) -> None:
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline:
        if path.is_file() and path.read_bytes().count(b"\n") >= n:
            return
        assert proc.poll() is None, "the run ended before it could be interrupted"
        time.sleep(0.05)
    raise AssertionError(f"{path} never reached {n} lines")


def _agents_left(piddir: Path) -> list[int]:
    """Host pids of fake agents still running: every process whose command line carries this
    test's pid folder (its prompt does). Read from /proc rather than from the pids the agents
    wrote, since an isolated agent runs in its own pid namespace and knows only its inner pid."""
    marker = str(piddir).encode()
    left = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            if marker not in (entry / "cmdline").read_bytes():
                continue
            if (entry / "stat").read_text().rsplit(")", 1)[1].split()[0] == "Z":
                continue
        except OSError:
            continue
        left.append(int(entry.name))
    return left


def _kill_agents(piddir: Path) -> list[int]:
    """Agents left running by a SIGKILLed harness (their own process groups): ours, found by
    their command lines."""
    alive = _agents_left(piddir)
    for pid in alive:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    return alive


def _worktrees(cache: Path) -> list[str]:
    out = []
    for gd in (cache / "repos").glob("*.git"):
        listing = subprocess.run(["git", "--git-dir", str(gd), "worktree", "list",
                                  "--porcelain"], capture_output=True, text=True, check=True)
        out += [line for line in listing.stdout.splitlines() if line.startswith("worktree ")
                and not line.endswith(".git")]
    return out


def _summary(out: Path) -> dict[str, tuple[str, bool, float]]:
    return {rid: (r.outcome, r.correct, r.cost_usd)
            for rid, r in latest_by_run_id(read_records(out / "results.jsonl")).items()}


def test_kill9_then_resume_equals_an_uninterrupted_run(tmp_path: Path) -> None:
    scenario, piddir = _setup(tmp_path)
    cache = tmp_path / "cache"
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    reference = tmp_path / "reference"
    subprocess.run(_cmd(scenario, reference, cache), env=env, check=True, capture_output=True)

    out = tmp_path / "crashed"
    proc = subprocess.Popen(_cmd(scenario, out, cache), env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    _wait_for_lines(out / "results.jsonl", 5, proc)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    _kill_agents(piddir)
    partial = read_records(out / "results.jsonl", strict=False)
    assert 5 <= len(partial) < 2 * N_TASKS

    resumed = subprocess.run(_cmd(scenario, out, cache, "--resume"), env=env,
                             capture_output=True, text=True)
    assert resumed.returncode == 0, resumed.stderr
    assert _summary(out) == _summary(reference)
    finished = Counter(r.run_id for r in read_records(out / "results.jsonl")
                       if r.outcome in FINISHED)
    assert len(finished) == 2 * N_TASKS and set(finished.values()) == {1}
    assert not (out / ".worktrees").exists() or not any((out / ".worktrees").iterdir())
    assert _worktrees(cache) == []


def test_sigint_stops_cleanly(tmp_path: Path) -> None:
    scenario, piddir = _setup(tmp_path)
    cache = tmp_path / "cache"
    out = tmp_path / "out"
    proc = subprocess.Popen(_cmd(scenario, out, cache), env={**os.environ},
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _wait_for_lines(out / "results.jsonl", 2, proc)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    records = read_records(out / "results.jsonl")  # strict: every line complete
    assert 2 <= len(records) < 2 * N_TASKS
    # agents did start (their pid files are in their own blank /tmp: read what they printed)
    assert any(p.stat().st_size for p in (out / "runs").glob("*/stdout.jsonl"))
    assert _agents_left(piddir) == []
    assert not (out / ".worktrees").exists()
    assert _worktrees(cache) == []
    again = subprocess.run(_cmd(scenario, out, cache, "--resume"), capture_output=True,
                           text=True)
    assert again.returncode == 0, again.stderr
    assert len(latest_by_run_id(read_records(out / "results.jsonl"))) == 2 * N_TASKS


def _run_dirs_by_task(out: Path) -> dict[str, Path]:
    plan = json.loads((out / "plan.json").read_text())
    return {run["task_id"]: out / "runs" / run["run_id"] for run in plan["runs"]}


def test_kill9_names_an_agent_in_flight_and_counts_a_finished_ungraded_one_exactly(
        tmp_path: Path) -> None:
    """SIGKILL while one agent waits for its last model request (its output has turns, no
    closing `result` line) and another agent has finished but is being graded (a slow test
    command). On resume both are recorded as harness_died infra errors and run again; only
    the first is a lower bound. The report names them as what they are: attempts the
    harness died during, never "stopped mid-run (timeout or interrupt)"."""
    grade = ["{python}", "-c",
             "import time; time.sleep(6); print('# tests 1\\n# pass 1\\n# fail 0')"]
    corpus = make_corpus(tmp_path, {
        "flying": {"prompt": fake(answer="42", cost=0.02, sleep_before_result=6)},
        "grading": {"type": "edit", "category": "fix", "prompt": fake(
            answer="fixed", cost=0.03, edit=["app.py", "return 40", "return 42"]),
                    "grading": {"test": {"command": grade, "mutations": [
                        {"file": "app.py", "search": "return 42", "replace": "return 40"}]}}}})
    scenario = write(corpus / "scenarios" / "t.yaml", {
        "name": "t", "tasks": {"include": ["app/*"]}, "modes": ["baseline"],
        "models": ["fake-model"], "model_runner_map": {"fake-model": "fake"},
        "repetitions": 1, "timeout_s": 60, "workers": 2})
    cache, out = tmp_path / "cache", tmp_path / "out"
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen(_cmd(scenario, out, cache), env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 120
    while True:
        assert time.monotonic() < deadline and proc.poll() is None, "never reached the kill"
        dirs = _run_dirs_by_task(out) if (out / "plan.json").is_file() else {}
        if dirs and all((d / "stdout.jsonl").is_file() for d in dirs.values()):
            flying = (dirs["app/flying"] / "stdout.jsonl").read_text()
            graded = (dirs["app/grading"] / "stdout.jsonl").read_text()
            if '"assistant"' in flying and '"result"' in graded:
                break
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert not (out / "results.jsonl").is_file() or not read_records(out / "results.jsonl")
    assert '"result"' not in (dirs["app/flying"] / "stdout.jsonl").read_text()

    resumed = subprocess.run(_cmd(scenario, out, cache, "--resume"), env=env,
                             capture_output=True, text=True)
    assert resumed.returncode == 0, resumed.stderr
    said = " ".join((resumed.stdout + resumed.stderr).split())
    assert "1 run(s) were in flight when the harness died" in said, said[-3000:]
    assert "1 run(s) had finished their agent but were not graded" in said
    records = read_records(out / "results.jsonl")
    by_task: dict[str, list[tuple[str, set[str], float | None]]] = {}
    for r in records:  # (a vendor figure far from the tokens' price: cost_divergence too)
        by_task.setdefault(r.task_id, []).append(
            (r.outcome, set(r.flags) & {"harness_died", "cost_lower_bound"}, r.cost_usd))
    assert by_task["app/grading"] == [("infra_error", {"harness_died"}, 0.03),
                                      ("ok", set(), 0.03)]
    (died, again) = by_task["app/flying"]
    assert died[:2] == ("infra_error", {"harness_died", "cost_lower_bound"})
    assert died[2] is not None and 0 < died[2] < 0.02  # its turns' tokens, no result line
    assert again == ("ok", set(), 0.02)
    assert {r.task_id: r.correct for r in latest_by_run_id(records).values()} == {
        "app/flying": True, "app/grading": True}
    report = " ".join((out / "report.md").read_text().split())
    spend = sum(r.cost_usd or 0.0 for r in records)
    assert f"**Spend**: ${spend:,.4f} in all" in report, report[:3000]
    assert "stopped mid-run" not in report
    assert ("1 attempt(s) were running when the harness died (SIGKILL, a crash or a lost "
            "machine; counted from their output and run again), and a request in flight then "
            "is billed but reported to no CLI (the total may be low)") in report
    assert ("1 attempt(s) had finished their agent but were not graded when the harness "
            "died (their cost is exact, counted; run again)") in report


def test_a_retried_attempts_removed_line_comes_back_and_the_report_counts_both_once(
        tmp_path: Path) -> None:
    """Through `copeca-action run`: attempt 1 fails at the endpoint after spending $0.03
    (an infra error, retried), attempt 2 spends $0.01 and answers. Its first line removed by
    hand, `--resume` restores it from OUT/attempts/ in its place, runs nothing, and the
    report's spend is $0.04: both attempts, each once; the bundle is made and verifies."""
    once = tmp_path / "once"
    once.mkdir()
    corpus = make_corpus(tmp_path, {"q": {"prompt": fake(
        answer="42", cost=0.01, failed_cost=0.03, endpoint_error_once=str(once))}})
    scenario = write(corpus / "scenarios" / "t.yaml", {
        "name": "t", "tasks": {"include": ["app/*"]}, "modes": ["baseline"],
        "models": ["fake-model"], "model_runner_map": {"fake-model": "fake"},
        "repetitions": 1, "timeout_s": 60, "workers": 1})
    cache, out = tmp_path / "cache", tmp_path / "out"
    # the fake agent marks its first attempt in a folder an isolated agent cannot see
    env = {**os.environ, "COPECA_AGENT_ISOLATION": "none"}
    first = subprocess.run(_cmd(scenario, out, cache), env=env, capture_output=True,
                           text=True)
    assert first.returncode == 0, first.stderr
    results = out / "results.jsonl"
    lines = results.read_text().splitlines(keepends=True)
    assert [r.cost_usd for r in read_records(results)] == [0.03, 0.01]
    results.write_text(lines[1])
    resumed = subprocess.run(_cmd(scenario, out, cache, "--resume"), env=env,
                             capture_output=True, text=True)
    assert resumed.returncode == 0, resumed.stderr
    said = " ".join((resumed.stdout + resumed.stderr).split())
    assert "restored 1 record(s) (0 of finished runs" in said, said[-3000:]
    assert "verified" in said
    assert results.read_text().splitlines(keepends=True) == lines
    report = " ".join((out / "report.md").read_text().split())
    assert ("**Spend**: $0.0400 in all: $0.0100 on the runs the arms count, $0.0300 on 1 "
            "excluded or retried attempt(s)") in report, report[:3000]
