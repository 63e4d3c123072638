"""Every dollar accounted, checked against the model server's own log.

Real Claude Code and Codex talk to a scripted model server running as its own process
(`copeca-action scripted serve --log`). Its log says which replies reached the CLI whole and
the tokens each stated; priced here straight from the runners' YAML (not through the
harness's pricing code), that is what the run must report. The report's spend line
(`Report.spend`) must equal it to the cent in success, a wrong answer, a timeout, max turns,
a grader that crashes after the agent ran (retried: every attempt's spend), a served model
other than the one asked for, and a run interrupted by SIGINT and finished by `--resume`.
A model without a price is refused before the server sees a single request.
"""

from __future__ import annotations

import json
import os
import select
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from engine_helpers import write

from copeca_action._util.paths import runners_dir
from copeca_action.engine import EngineConfig, OutputDir, _execute, run_plan
from copeca_action.engine._outdir import read_record
from copeca_action.plan import build_plan
from copeca_action.records import RunRecord, read_records
from copeca_action.report import Report, build_report
from copeca_action.scenario import Scenario, load_corpus
from copeca_action.transcript import parse_transcript
from copeca_action.workspace import SnapshotStore

BIN = runners_dir() / "node_modules" / ".bin"
pytestmark = [pytest.mark.cli, pytest.mark.slow, pytest.mark.skipif(
    not (BIN / "claude").exists() or not (BIN / "codex").exists(),
    reason="Claude Code and Codex are not installed (run `make node`)")]

CLAUDE, CODEX = "claude-sonnet-4-5", "gpt-5"
SERVED_INSTEAD = "claude-haiku-4-5"
OK = "It is generate_unique_id in fastapi/utils.py."
RUNNER_OF_API = {"anthropic": "claude", "openai": "codex"}


def _u(inp: int, out: int, read: int = 0, wrote: int = 0) -> dict[str, int]:
    return {"input": inp, "output": out, "cache_read": read, "cache_write": wrote}


def _tools(n: int, start: int) -> list[dict[str, Any]]:
    """n tool steps, each with its own usage (cache reads and writes included)."""
    dirs = ["fastapi", "tests", "docs_src", "scripts", "fastapi/routing.py", "fastapi/utils.py"]
    return [{"tools": [{"bash": f"ls {dirs[k % len(dirs)]}"}],
             "usage": _u(700 + 37 * (start + k), 45 + k, 2100 * (k + 1), 1300 if k == 0 else 90)}
            for k in range(n)]


def _scripts() -> dict[str, Any]:
    answer = {"answer": OK, "usage": _u(410, 61, 5200, 77)}
    return {"version": 1, "scripts": [
        {"id": "ok", "match": {"prompt_contains": "CASE-OK"},
         "steps": [*_tools(2, 0), answer]},
        {"id": "wrong", "match": {"prompt_contains": "CASE-WRONG"},
         "steps": [*_tools(1, 3), {"answer": "It is somewhere in routing.",
                                   "usage": _u(388, 29, 3000, 12)}]},
        {"id": "stall", "match": {"prompt_contains": "CASE-STALL"},
         "steps": [*_tools(1, 5), answer], "faults": [{"step": 1, "kind": "stall",
                                                        "times": None}]},
        {"id": "maxturns", "match": {"prompt_contains": "CASE-MAXTURNS"},
         "steps": [*_tools(9, 7), answer]},
        {"id": "crash", "match": {"prompt_contains": "CASE-CRASH"},
         "steps": [*_tools(5, 17), {**answer, "answer": OK + " CRASH-THE-GRADER"}]},
        {"id": "remap", "match": {"prompt_contains": "CASE-REMAP", "api": "anthropic"},
         "serves_model": SERVED_INSTEAD, "steps": [*_tools(1, 23), answer]},
        {"id": "remap-codex", "match": {"prompt_contains": "CASE-REMAP"},
         "steps": [*_tools(1, 23), answer]},
        {"id": "slow", "match": {"prompt_contains": "CASE-SLOW"},
         "steps": [{"tools": [{"bash": "sleep 8"}], "usage": _u(640, 33, 1800, 950)},
                   answer]},
    ]}


def _corpus(root: Path, corpus_root: Path, cases: list[str]) -> Path:
    corpus = root / "corpus"
    corpus.mkdir(parents=True)
    shutil.copy(corpus_root / "repos.yaml", corpus / "repos.yaml")
    shutil.copytree(corpus_root / "modes", corpus / "modes")
    for case in cases:
        write(corpus / "tasks" / "fastapi" / f"{case}.yaml", {
            "id": f"fastapi/{case}", "repo": "fastapi", "type": "comprehension",
            "category": "locate", "language": "python",
            "prompt": f"CASE-{case.upper()}: which function builds the default operation id?",
            "source": {"origin": "original"},
            "grading": {"answer": {"required": ["generate_unique_id"]}}})
    return corpus


@pytest.fixture(scope="module")
def scripts_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    where = tmp_path_factory.mktemp("scripts")
    write(where / "cases.yaml", _scripts())
    return where


class Server:
    """`copeca-action scripted serve` as its own process, logging every request."""

    def __init__(self, scripts: Path, log: Path) -> None:
        self.log = log
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "copeca_action.cli", "scripted", "serve", "--scripts",
             str(scripts), "--log", str(log), "--seed", "3"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        assert self.proc.stdout is not None
        ready, _, _ = select.select([self.proc.stdout], [], [], 60)
        line = self.proc.stdout.readline() if ready else ""
        assert "http://" in line, f"the server did not start: {line!r}"
        self.url = line.split(": ", 1)[1].split(" ", 1)[0]

    def entries(self) -> list[dict[str, Any]]:
        if not self.log.exists():
            return []
        return [json.loads(x) for x in self.log.read_text().splitlines() if x.strip()]

    def wait_for(self, script: str, step: int, apis: set[str], limit_s: float = 30) -> None:
        """A stalled request is logged when the server sees its client hang up (the killed
        CLI): wait for that line rather than race it."""
        deadline = time.monotonic() + limit_s
        while time.monotonic() < deadline:
            if {e["api"] for e in self.entries()
                    if e.get("script") == script and e.get("step") == step} >= apis:
                return
            time.sleep(0.05)
        raise AssertionError(f"the server never logged step {step} of {script} for {apis}")

    def stop(self) -> None:
        self.proc.send_signal(signal.SIGINT)
        try:
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


@pytest.fixture
def server_factory(tmp_path: Path, scripts_dir: Path) -> Iterator[Any]:
    started: list[Server] = []

    def start(name: str) -> Server:
        started.append(Server(scripts_dir, tmp_path / f"{name}.jsonl"))
        return started[-1]

    yield start
    for s in started:
        s.stop()


def _prices(runner: str) -> dict[str, dict[str, Any]]:
    """The runner's price table, every alias spelled out, read from its YAML file."""
    table = yaml.safe_load((runners_dir() / f"{runner}.yaml").read_text())["pricing"]
    out: dict[str, dict[str, Any]] = {}
    for model, price in table.items():
        out[model] = price
        for alias in price.get("aliases") or []:
            out[alias] = price
    return out


def served_usd(entries: list[dict[str, Any]]) -> tuple[float, int]:
    """What the server billed (the usage that reached the client: a completed reply's, or
    the input figures of a stream cut after it began), priced by the runners' tables:
    (USD, billed replies). Both CLIs state cache writes apart, billed at the 5-minute rate."""
    total, billed = 0.0, 0
    for e in entries:
        if "billed" not in e:
            continue
        price = _prices(RUNNER_OF_API[e["api"]])[e["served_model"]]
        u = e["billed"]
        total += (u["input"] * price["input"] + u["output"] * price["output"]
                  + u["cache_read"] * price["cache_read"]
                  + u["cache_write"] * price["cache_write_5m"]) / 1_000_000
        billed += 1
    return total, billed


def _report(out: Path) -> Report:
    """The report as `analyze` publishes it (report.json of the folder)."""
    proc = subprocess.run([sys.executable, "-m", "copeca_action.cli", "analyze", str(out),
                           "--format", "json", "--resamples", "200"],
                          capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode in (0, 1), proc.stderr[-2000:]
    return Report.model_validate_json(proc.stdout)


def _cents(x: float) -> int:
    return round(x * 100)


def _unreported(entries: list[dict[str, Any]],
                records: list[RunRecord]) -> dict[tuple[str, str], float]:
    """Per (script, API), what the server billed beyond the records' costs. Each shortfall
    must belong to an attempt flagged `cost_lower_bound` (stopped mid-run) and be at most
    one of that script's replies (the one in flight when the CLI was stopped)."""
    short: dict[tuple[str, str], float] = {}
    for (script, api) in {(e["script"], e["api"]) for e in entries if "billed" in e}:
        mine = [e for e in entries if e.get("script") == script and e.get("api") == api]
        served = served_usd(mine)[0]
        runs = [r for r in records if r.task_id == f"fastapi/{script}"
                and r.runner == RUNNER_OF_API[api]]
        recorded = sum(r.cost_usd or 0.0 for r in runs)
        assert recorded <= served * (1 + 1e-9) + 1e-12, (script, api, recorded, served)
        if served - recorded <= served * 1e-9 + 1e-12:
            continue
        stopped = [r for r in runs if "cost_lower_bound" in r.flags]
        assert stopped, (script, api, recorded, served, runs)
        largest = max(served_usd([e])[0] for e in mine if "billed" in e)
        assert served - recorded <= len(stopped) * largest * (1 + 1e-9), (
            script, api, recorded, served, largest)
        short[script, api] = served - recorded
    return short


def test_spend_equals_what_the_server_served(tmp_path: Path, corpus_root: Path,
                                             server_factory: Any,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """Success, wrong answer, timeout, max turns, grader crash and a remapped model, on both
    CLIs: the report's spend line is the server's log priced, to the cent (and closer)."""
    cases = ["ok", "wrong", "stall", "maxturns", "crash", "remap"]
    corpus = _corpus(tmp_path, corpus_root, cases)
    loaded = load_corpus(corpus, runners_dir()).require_ok()
    spec = {"name": "spend", "tasks": {"include": ["fastapi/*"]}, "modes": ["baseline"],
            "models": [CLAUDE, CODEX], "model_runner_map": {CLAUDE: "claude", CODEX: "codex"},
            "repetitions": 1, "timeout_s": 25, "max_turns": 7, "workers": 3}
    scenario = Scenario.model_validate(spec)
    real_grade = _execute.grade_answer
    crashes: list[str] = []

    def grader(answer: str | None, spec: Any) -> Any:
        if answer and "CRASH-THE-GRADER" in answer:  # after 6 served requests
            crashes.append(answer)
            raise RuntimeError("grader bug (injected by the test)")
        return real_grade(answer, spec)

    monkeypatch.setattr(_execute, "grade_answer", grader)
    server = server_factory("served")
    out = OutputDir(tmp_path / "out")
    cfg = EngineConfig(scenario=scenario, corpus=loaded, out=out,
                       store=SnapshotStore(tmp_path / "cache", loaded.repos),
                       base_url=server.url, host_env={"PATH": "/usr/bin:/bin"})
    run_plan(cfg, build_plan(scenario, loaded.tasks))  # writes the scenario beside results
    records = read_records(out.results)
    last = {(r.task_id.split("/")[1], r.runner): r for r in records}

    assert last["ok", "claude"].outcome == "ok" and last["ok", "claude"].correct
    assert last["ok", "codex"].outcome == "ok" and last["ok", "codex"].correct
    assert last["wrong", "claude"].outcome == "ok" and not last["wrong", "claude"].correct
    assert last["stall", "claude"].outcome == "timeout"
    assert last["stall", "codex"].outcome == "timeout"
    # stopped by the harness mid-request: the cost counted is what the CLIs were told
    stopped = {key for key, r in last.items() if "cost_lower_bound" in r.flags}
    assert stopped == {("stall", "claude"), ("stall", "codex")}, stopped
    assert last["maxturns", "claude"].outcome == "agent_error"
    assert "budget_exhausted" in last["maxturns", "claude"].flags
    crash_attempts = [r for r in records if r.task_id.endswith("/crash")]
    assert len(crash_attempts) == 2 * cfg.max_attempts, [  # every attempt kept its record
        (r.runner, r.attempt, r.outcome, r.error) for r in crash_attempts]
    assert len(crashes) == 2 * cfg.max_attempts
    for r in crash_attempts:
        assert r.outcome == "infra_error" and "grader bug" in (r.error or "")
        assert r.cost_usd is not None and r.cost_usd > 0, r  # spend survived the crash
    remap = last["remap", "claude"]
    assert remap.served_model == SERVED_INSTEAD and remap.model == CLAUDE
    assert "model_remapped" in remap.flags
    assert all(r.cost_usd is not None and r.cost_source == "computed" for r in records)

    server.wait_for("stall", 1, set(RUNNER_OF_API))
    served, billed = served_usd(server.entries())
    crash_served = served_usd([e for e in server.entries() if e.get("script") == "crash"])
    assert billed >= 6 * 2 * cfg.max_attempts + 10
    assert crash_served[1] == 6 * 2 * cfg.max_attempts  # 6 requests per attempt, both CLIs
    scripts = {("remap", "openai"): "remap-codex"}
    by_case = {(case, api): served_usd([e for e in server.entries() if e.get("api") == api
                                        and e.get("script") == scripts.get((case, api), case)])[0]
               for case in cases for api in RUNNER_OF_API}
    recorded = {(case, api): sum(r.cost_usd or 0.0 for r in records
                                 if r.task_id == f"fastapi/{case}"
                                 and r.runner == RUNNER_OF_API[api])
                for case in cases for api in RUNNER_OF_API}
    assert recorded == pytest.approx(by_case, rel=1e-9, abs=1e-12)
    report = _report(out.root)
    assert report.spend is not None
    assert _cents(report.spend.total_usd) == _cents(served)
    assert report.spend.total_usd == pytest.approx(served, rel=1e-9, abs=1e-12)
    assert report.spend.unknown_attempts == 0
    # the crashed attempts are outside cost per correct, but their spend is on the line
    assert report.spend.excluded_attempts == 2 * cfg.max_attempts
    assert report.spend.excluded_usd == pytest.approx(crash_served[0], rel=1e-9)
    assert sum(r.cost_usd or 0.0 for r in records) == pytest.approx(served, rel=1e-9)
    # the records' spend is the same sum the report starts from, computed once
    in_memory = build_report(records)
    assert in_memory.spend == report.spend
    # a remapped model is priced as what was served, not as what was asked for
    remap_served = served_usd([e for e in server.entries() if e.get("script") == "remap"])
    assert remap.cost_usd == pytest.approx(remap_served[0], rel=1e-9)
    assert any("remapped" in w or SERVED_INSTEAD in w for w in report.warnings), report.warnings


def _run_cli(scenario: Path, out: Path, cache: Path, url: str,
             *extra: str) -> subprocess.Popen[str]:
    env = {k: v for k, v in os.environ.items()
           if k not in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "COPECA_SIGNING_KEY")}
    return subprocess.Popen(
        [sys.executable, "-m", "copeca_action.cli", "run", str(scenario), "--out", str(out),
         "--cache", str(cache), "--base-url", url, "--plain", "--no-bundle", *extra],
        env={**env, "PYTHONUNBUFFERED": "1"}, stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT, text=True)


def test_spend_survives_sigint_and_resume(tmp_path: Path, corpus_root: Path,
                                          server_factory: Any) -> None:
    """`copeca-action run` interrupted while both CLIs are mid-run (each has been served a
    billed reply), then `--resume`: the interrupted attempts' spend is still on the spend
    line, and the whole equals the server's log."""
    corpus = _corpus(tmp_path, corpus_root, ["slow", "ok"])
    scenario = write(corpus / "scenarios" / "spend.yaml", {
        "name": "spend-sigint", "tasks": {"include": ["fastapi/*"]}, "modes": ["baseline"],
        "models": [CLAUDE, CODEX], "model_runner_map": {CLAUDE: "claude", CODEX: "codex"},
        "repetitions": 1, "timeout_s": 60, "max_turns": 6, "workers": 4})
    server = server_factory("sigint")
    out, cache = tmp_path / "out", tmp_path / "cache"
    proc = _run_cli(scenario, out, cache, server.url)
    deadline = time.monotonic() + 240
    # The signal comes when both slow runs are inside their `sleep 8` and Claude has just
    # been served its quick answer: it may or may not print it before it is stopped (the
    # race every interrupt has, met here on purpose rather than by chance)
    while time.monotonic() < deadline:
        seen = server.entries()
        slow = {e["api"] for e in seen if e.get("script") == "slow" and e.get("completed")}
        answered = any(e.get("script") == "ok" and e.get("api") == "anthropic"
                       and e.get("step") == 2 and e.get("completed") for e in seen)
        if slow == {"anthropic", "openai"} and answered:
            break
        assert proc.poll() is None, proc.communicate()[0][-3000:]
        time.sleep(0.1)
    else:
        proc.kill()
        raise AssertionError("the slow runs never got their first reply")
    proc.send_signal(signal.SIGINT)
    output, _ = proc.communicate(timeout=120)
    assert proc.returncode == 130, output[-3000:]
    first = read_records(out / "results.jsonl")
    slow = [r for r in first if r.task_id.endswith("/slow")]
    assert len(slow) == 2 and all(r.outcome == "infra_error" for r in slow)
    assert all(r.cost_usd is not None and r.cost_usd > 0 for r in slow), slow
    # the quick runs may or may not have finished before the signal: whichever were stopped
    # mid-run (and spent) are excluded attempts too
    interrupted = [r for r in first if r.outcome == "infra_error" and (r.cost_usd or 0) > 0]
    spent_before = served_usd(server.entries())[0]

    again = _run_cli(scenario, out, cache, server.url, "--resume")
    output, _ = again.communicate(timeout=600)
    assert again.returncode == 0, output[-3000:]
    records: list[RunRecord] = read_records(out / "results.jsonl")
    slow = [r for r in records if r.task_id.endswith("/slow")]
    assert [r.outcome for r in slow].count("ok") == 2 and len(slow) == 4

    served, _ = served_usd(server.entries())
    assert served > spent_before
    report = _report(out)
    assert report.spend is not None
    # the spend line is the records' sum, computed once
    assert report.spend.total_usd == pytest.approx(sum(r.cost_usd or 0.0 for r in records),
                                                   rel=1e-12, abs=1e-15)
    # and the server's log, less what only a killed CLI was told: a reply that reached the
    # CLI whole the moment the harness stopped it, before the CLI printed it, is billed and
    # reported to no one. That is the `cost_lower_bound` the record carries and the report
    # warns of; at most the one reply each such CLI had in flight, never more.
    short = _unreported(server.entries(), records)
    assert report.spend.total_usd == pytest.approx(served - sum(short.values()),
                                                   rel=1e-9, abs=1e-12)
    if short:
        assert any("may be higher than counted" in w for w in report.warnings), report.warnings
    assert report.spend.excluded_attempts == len(interrupted) >= 2
    for r in interrupted:  # a lower bound, unless the CLI had printed its closing event
        # (its usage whole) when the signal came: then its cost is exact, and not flagged
        parser = {"claude": "stream_json", "codex": "codex_json"}[r.runner]
        (folder,) = [f for f in OutputDir(out).attempt_folders(r.run_id)  # kept aside
                     if read_record(f / "record.json") == r]
        ended = parse_transcript(parser, folder / "stdout.jsonl", folder / "config").ended
        assert ("cost_lower_bound" in r.flags) is not ended, r
    # the slow runs at least (stopped in their sleep); a quick run whose CLI had closed when
    # the signal came, but was not graded, is interrupted with its cost exact
    assert report.spend.lower_bound_attempts == len(
        [r for r in records if "cost_lower_bound" in r.flags]) >= 2
    assert report.spend.excluded_usd == pytest.approx(
        sum(r.cost_usd or 0.0 for r in interrupted), rel=1e-9)
    md = subprocess.run([sys.executable, "-m", "copeca_action.cli", "analyze", str(out),
                         "--resamples", "200"], capture_output=True, text=True, check=False)
    assert f"**Spend**: ${report.spend.total_usd:,.4f} in all" in md.stdout, md.stdout[:3000]
    assert f"{len(interrupted)} excluded or retried attempt(s)" in md.stdout


def test_a_model_without_a_price_is_refused_before_any_request(
        tmp_path: Path, corpus_root: Path, server_factory: Any) -> None:
    """Codex reports no cost of its own: an unpriced model would cost an invented $0. The
    run refuses before the server sees a request, naming the model and the runner file."""
    corpus = _corpus(tmp_path, corpus_root, ["ok"])
    scenario = write(corpus / "scenarios" / "unpriced.yaml", {
        "name": "unpriced", "tasks": {"include": ["fastapi/*"]}, "modes": ["baseline"],
        "models": ["gpt-5.5-unpriced"], "model_runner_map": {"gpt-5.5-unpriced": "codex"},
        "repetitions": 1, "timeout_s": 30})
    server = server_factory("unpriced")
    proc = _run_cli(scenario, tmp_path / "out", tmp_path / "cache", server.url)
    output, _ = proc.communicate(timeout=120)
    assert proc.returncode not in (0, 130), output[-2000:]
    assert "gpt-5.5-unpriced" in output and "codex.yaml" in output, output[-2000:]
    assert "Traceback" not in output
    time.sleep(0.5)
    assert server.entries() == []
    assert not (tmp_path / "out" / "results.jsonl").exists()
