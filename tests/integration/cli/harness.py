"""One real CLI run against the scripted server, through the project's own launcher, parser
and cost code: what the integration tests and bench/cli_runs.py share."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import pytest

from copeca_action.agent import AgentInvocation, AgentResult, prepare_run, run_agent
from copeca_action.agent._binary import resolve_binary
from copeca_action.errors import InfraError
from copeca_action.records import Tokens
from copeca_action.scenario import Mode, Runner, load_runner
from copeca_action.scripted import ScriptedServer, ServedConversation
from copeca_action.transcript import RunCost, Transcript, cost_of, parse_transcript, price_for

ROOT = Path(__file__).resolve().parents[3]
SCRIPTS = Path(__file__).with_name("scripts")
MODELS = {"claude": "claude-sonnet-4-5", "codex": "gpt-6.1-sol",
          "gemini": "gemini-2.5-flash", "qwen": "qwen3-coder-plus",
          "opencode": "claude-sonnet-4-5"}


def runner(name: str) -> Runner:
    return load_runner(ROOT / "runners" / f"{name}.yaml")


def need_cli(name: str) -> Runner:
    """The runner, or skip the test when its CLI is not installed."""
    r = runner(name)
    try:
        resolve_binary(r)
    except InfraError:
        pytest.skip(f"`{r.binary}` is not installed (make node installs runners/node_modules)")
    return r


def make_workdir(where: Path) -> Path:
    where.mkdir(parents=True, exist_ok=True)
    (where / "greeting.txt").write_text("hello from the fixture\n")
    (where / "version.py").write_text("VERSION = 1\n")
    (where / "shapes.py").write_text("import math\n\ndef area(r):\n    return math.pi * r * r\n")
    return where


@dataclass
class Run:
    invocation: AgentInvocation
    result: AgentResult
    transcript: Transcript
    cost: RunCost
    served: ServedConversation | None
    requests: list[dict[str, object]]
    """The server's log entries for this run only."""


def run_cli(server: ScriptedServer, name: str, prompt: str, tmp: Path, *,
            timeout_s: float = 90, max_turns: int = 10, mode: Mode | None = None,
            tool_dir: Path | None = None, model: str | None = None,
            run_budget_usd: float | None = None,
            extra_host_env: dict[str, str] | None = None) -> Run:
    r = need_cli(name)
    model = model or MODELS[name]
    before = {c.conv for c in server.served()}
    logged = len(server.requests())
    inv = prepare_run(r, model=model, prompt=prompt, workdir=make_workdir(tmp / "wd"),
                      run_dir=tmp / "run", mode=mode, max_turns=max_turns,
                      run_budget_usd=run_budget_usd, base_url=server.url, tool_dir=tool_dir,
                      host_env={**os.environ, **(extra_host_env or {})})
    result = run_agent(inv, timeout_s)
    transcript = parse_transcript(r.parser, result.stdout_path, inv.config_dir)
    served = [c for c in server.served() if c.conv not in before]
    return Run(inv, result, transcript, cost_of(transcript, r, model),
               served[-1] if served else None, server.requests()[logged:])


def expected_usd(name: str, tokens: Tokens) -> float:
    price = price_for(runner(name), MODELS[name])
    assert price is not None
    assert price.cache_read is not None and price.cache_write_5m is not None
    return (tokens.input * price.input + tokens.output * price.output
            + tokens.cache_write * price.cache_write_5m
            + tokens.cache_read * price.cache_read) / 1_000_000
