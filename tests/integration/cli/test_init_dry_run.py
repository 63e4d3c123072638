"""A newcomer's first hour, for real: `copeca-action init --kind mcp` then `run --dry-run`
with the real Claude Code against the scripted model playing the scaffold's own scripts. The
user's MCP server (the scaffolded stand-in, named with a hyphen) must start, be called in
every tool-arm run, and the plan must reach a decided verdict; a server that cannot start
must stop the run before anything runs."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from .harness import need_cli

pytestmark = pytest.mark.cli


def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(Path(sys.executable).parent / "copeca-action"), *args], cwd=cwd,
                          capture_output=True, text=True, timeout=900, check=False,
                          env={**os.environ, "ANTHROPIC_API_KEY": "", "OPENAI_API_KEY": ""})


def test_init_then_dry_run_reaches_a_decided_verdict(tmp_path: Path) -> None:
    need_cli("claude")
    repo = tmp_path / "my-tool-repo"
    t0 = time.perf_counter()
    made = _cli("init", str(repo), "--kind", "mcp", "--name", "my-tool", cwd=tmp_path)
    assert made.returncode == 0, made.stderr
    out = tmp_path / "out"
    done = _cli("run", "benchmark/scenarios/pr.yaml", "--dry-run", "--tool-dir", ".",
                "--plain", "--out", str(out), cwd=repo)
    elapsed = time.perf_counter() - t0
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    report = json.loads((out / "report.json").read_text())
    assert report["verdict"] in ("improvement", "regression"), report["verdict_reasons"]
    records = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    tool = [r for r in records if r["arm"] == "my-tool" and not r["control"]]
    assert tool and all(r["outcome"] == "ok" and r["tool_adopted"] for r in tool)
    assert not [r for r in records if r["outcome"] == "infra_error"]
    print(f"init to a first dry-run verdict: {elapsed:.1f} s, {len(records)} runs, "
          f"{report['verdict']}")


def test_a_server_that_cannot_start_stops_the_dry_run_before_any_run(tmp_path: Path) -> None:
    need_cli("claude")
    repo = tmp_path / "r"
    assert _cli("init", str(repo), "--kind", "mcp", "--name", "my-tool",
                cwd=tmp_path).returncode == 0
    (repo / "benchmark" / "tool-stub" / "__main__.py").write_text(
        "import sys\nsys.exit('my-tool: cannot open its index')\n")
    out = tmp_path / "out"
    done = _cli("run", "benchmark/scenarios/pr.yaml", "--dry-run", "--tool-dir", ".",
                "--plain", "--out", str(out), cwd=repo)
    assert done.returncode != 0
    assert "MCP server 'my-tool'" in done.stderr and "cannot open its index" in done.stderr
    assert not (out / "results.jsonl").exists()


def test_run_without_a_key_is_refused_before_any_run(tmp_path: Path) -> None:
    need_cli("claude")
    repo = tmp_path / "r"
    assert _cli("init", str(repo), "--kind", "mcp", cwd=tmp_path).returncode == 0
    out = tmp_path / "out"
    done = _cli("run", "benchmark/scenarios/pr.yaml", "--tool-dir", ".", "--plain",
                "--out", str(out), cwd=repo)
    assert done.returncode == 2, done.stderr
    assert "needs ANTHROPIC_API_KEY" in done.stderr and "--dry-run" in done.stderr
    assert not (out / "results.jsonl").exists()


def _dry_run(repo: Path, out: Path) -> list[dict[str, Any]]:
    """`run --dry-run` of the scaffold's scenario into `out`: its records (it must succeed)."""
    done = _cli("run", "benchmark/scenarios/pr.yaml", "--dry-run", "--tool-dir", ".",
                "--plain", "--out", str(out), cwd=repo)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]


def _fewer_runs(repo: Path) -> None:
    """The scaffold's scenario cut to two tasks and a control, once each: six runs."""
    scenario = repo / "benchmark" / "scenarios" / "pr.yaml"
    kept = ("fastapi/locate-unique-id", "fastapi/trace-http-exception-body",
            "fastapi/control-http-methods")
    lines = [line for line in scenario.read_text().splitlines(keepends=True)
             if not line.startswith("    - fastapi/") or line.strip()[2:] in kept]
    scenario.write_text("".join(lines).replace("repetitions: 3", "repetitions: 1"))


def test_a_wrapper_runs_the_agent_and_a_broken_one_stops_the_run(tmp_path: Path) -> None:
    """`init --kind wrapper`: the real Claude Code runs under the scaffolded wrapper (adopted
    by its marker file); a wrapper that fails before running the agent is refused by the
    preflight, before any run, with its stderr."""
    need_cli("claude")
    repo = tmp_path / "r"
    assert _cli("init", str(repo), "--kind", "wrapper", "--name", "wrap",
                cwd=tmp_path).returncode == 0
    _fewer_runs(repo)
    records = _dry_run(repo, tmp_path / "out")
    wrapped = [r for r in records if r["arm"] == "wrap"]
    assert len(wrapped) == 3
    assert all(r["outcome"] == "ok" and r["tool_adopted"] for r in wrapped)
    stub = repo / "benchmark" / "tool-stub" / "wrap-wrapper"
    stub.write_text("#!/bin/sh\necho 'wrap: proxy could not bind 127.0.0.1:8080' >&2\nexit 1\n")
    again = tmp_path / "again"
    refused = _cli("run", "benchmark/scenarios/pr.yaml", "--dry-run", "--tool-dir", ".",
                   "--plain", "--out", str(again), cwd=repo)
    assert refused.returncode == 2, refused.stderr
    assert "mode 'wrap': wrapper" in refused.stderr
    assert "could not bind 127.0.0.1:8080" in refused.stderr
    assert not (again / "results.jsonl").exists()


def test_a_server_that_dies_at_its_first_call_is_named_not_hidden(tmp_path: Path) -> None:
    """The server starts (so the preflight passes) and exits on the first `tools/call`:
    Claude Code answers every call to it "Connection closed". The runs count as the tool's
    result (adopted: the agent chose it), flagged `tool_failed`, and the report says so."""
    need_cli("claude")
    repo = tmp_path / "r"
    assert _cli("init", str(repo), "--kind", "mcp", "--name", "my-tool",
                cwd=tmp_path).returncode == 0
    server = repo / "benchmark" / "tool-stub" / "_server.py"
    text = server.read_text()
    call = '        if method == "tools/call":\n'
    assert call in text
    server.write_text(text.replace(call, call + "            os._exit(9)\n", 1))
    _fewer_runs(repo)
    out = tmp_path / "out"
    records = _dry_run(repo, out)
    assert len(records) == 6
    called = [r for r in records if r["arm"] == "my-tool" and not r["control"]]
    assert len(called) == 2
    assert all(r["outcome"] == "ok" and r["tool_adopted"] and "tool_failed" in r["flags"]
               for r in called)
    assert not [r for r in records if "tool_failed" in r["flags"] and r not in called]
    report = json.loads((out / "report.json").read_text())
    assert any("arm my-tool: the tool under test failed in 2 run(s)" in w
               for w in report["warnings"]), report["warnings"]


def test_a_hook_that_exits_with_an_error_is_named_not_read_as_unused(tmp_path: Path) -> None:
    """`init --kind hook` with the stand-in hook failing (exit 1, as a crashing script does):
    Claude Code goes on without it and its stream-json says nothing. The watched hook writes
    the status down, so the tool arm's runs are flagged `tool_failed` and the low adoption
    says the tool broke, not that the agent passed it by."""
    need_cli("claude")
    repo = tmp_path / "r"
    assert _cli("init", str(repo), "--kind", "hook", "--name", "my-tool",
                cwd=tmp_path).returncode == 0
    hook = repo / "benchmark" / "tool-stub" / "my-tool-hook.sh"
    hook.write_text("#!/bin/sh\ncat >/dev/null\necho 'my-tool: no index' >&2\nexit 1\n")
    _fewer_runs(repo)
    out = tmp_path / "out"
    records = _dry_run(repo, out)
    tool = [r for r in records if r["arm"] == "my-tool" and not r["control"]]
    assert len(tool) == 2
    assert all(r["outcome"] == "ok" and r["tool_adopted"] is False
               and "tool_failed" in r["flags"] for r in tool)
    assert not [r for r in records if r["arm"] == "baseline" and "tool_failed" in r["flags"]]
    log = out / "runs" / tool[0]["run_id"] / "config" / "copeca-hook-exits.log"
    assert log.read_text().startswith("PreToolUse 1\n")
    report = json.loads((out / "report.json").read_text())
    assert any("the tool under test failed" in r for r in report["verdict_reasons"]), \
        report["verdict_reasons"]
