"""The engine with the real Claude Code against the scripted model on the fastapi snapshot:
the demo MCP tool really called, and every behaviour flag firing on a real run."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
from engine_helpers import write

from copeca_action._util.paths import runners_dir
from copeca_action.engine import EngineConfig, OutputDir, run_plan
from copeca_action.errors import InfraError
from copeca_action.plan import build_plan
from copeca_action.records import read_records
from copeca_action.scenario import Scenario, load_corpus
from copeca_action.scripted import ScriptedServer
from copeca_action.workspace import SnapshotStore

CLAUDE = runners_dir() / "node_modules" / ".bin" / "claude"
pytestmark = [pytest.mark.cli, pytest.mark.skipif(not CLAUDE.exists(), reason=(
    "Claude Code is not installed (run `make node`)"))]

ANSWER = {"answer": {"required": ["generate_unique_id"]}}


def _task(name: str, prompt: str, **extra: Any) -> dict[str, Any]:
    return {"id": f"fastapi/{name}", "repo": "fastapi", "type": "comprehension",
            "category": "locate", "language": "python", "prompt": prompt,
            "source": {"origin": "original"}, "grading": ANSWER, **extra}


def _scripts() -> dict[str, Any]:
    ok = "It is generate_unique_id in fastapi/utils.py."
    return {"version": 1, "scripts": [
        {"id": "tool",
         "match": {"prompt_contains": "CASE-TOOL", "tool_prefix": "mcp__codesearch__"},
         "steps": [{"tools": [{"mcp": {"server": "codesearch", "tool": "definition",
                                        "input": {"name": "generate_unique_id"}}}]},
                   {"answer": ok}]},
        {"id": "storm", "match": {"prompt_contains": "CASE-STORM"},
         "steps": [{"tools": [{"bash": "ls fastapi"}] * 6}, {"answer": ok}]},
        {"id": "snowball", "match": {"prompt_contains": "CASE-SNOWBALL"},
         "steps": [{"tools": [{"bash": "ls"}], "usage": {"input": 500, "output": 20}},
                   {"tools": [{"bash": "ls fastapi"}],
                    "usage": {"input": 500, "output": 20, "cache_read": 2000}},
                   {"tools": [{"bash": "ls tests"}],
                    "usage": {"input": 500, "output": 20, "cache_read": 5000}},
                   {"answer": ok, "usage": {"input": 500, "output": 20, "cache_read": 9000}}]},
        {"id": "talkative", "match": {"prompt_contains": "CASE-TALKATIVE"},
         "steps": [{"answer": "It is somewhere in routing. " * 40,
                    "usage": {"input": 800, "output": 3500}}]},
        {"id": "maxturns", "match": {"prompt_contains": "CASE-MAXTURNS"},
         "steps": [{"tools": [{"bash": f"ls {d}"}]} for d in ("fastapi", "tests", "docs_src",
                                                               "scripts")] + [{"answer": ok}]},
        {"id": "stall", "match": {"prompt_contains": "CASE-STALL"},
         "steps": [{"answer": ok}], "faults": [{"step": 0, "kind": "stall", "times": None}]},
    ]}


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory, corpus_root: Path) -> dict[str, Any]:
    root = tmp_path_factory.mktemp("real")
    corpus = root / "corpus"
    corpus.mkdir()
    shutil.copy(corpus_root / "repos.yaml", corpus / "repos.yaml")
    shutil.copytree(corpus_root / "modes", corpus / "modes")
    prompts = {"tool": "CASE-TOOL: which function builds the default operation id?",
               "storm": "CASE-STORM: which function builds the default operation id?",
               "snowball": "CASE-SNOWBALL: which function builds the default operation id?",
               "talkative": "CASE-TALKATIVE: which function builds the default operation id?",
               "maxturns": "CASE-MAXTURNS: which function builds the default operation id?",
               "stall": "CASE-STALL: which function builds the default operation id?"}
    for name, prompt in prompts.items():
        write(corpus / "tasks" / "fastapi" / f"{name}.yaml", _task(name, prompt))
    write(root / "scripts" / "cases.yaml", _scripts())
    loaded = load_corpus(corpus, runners_dir()).require_ok()
    scenario = Scenario.model_validate({
        "name": "real", "tasks": {"include": ["fastapi/*"]}, "modes": ["codesearch"],
        "models": ["claude-sonnet-4-5"], "model_runner_map": {"claude-sonnet-4-5": "claude"},
        "repetitions": 1, "timeout_s": 20, "max_turns": 4, "workers": 3})
    store = SnapshotStore(root / "cache", loaded.repos)
    out = OutputDir(root / "out")
    with ScriptedServer(root / "scripts", seed=1) as server:
        cfg = EngineConfig(scenario=scenario, corpus=loaded, out=out, store=store,
                           base_url=server.url, host_env={"PATH": "/usr/bin:/bin"})
        run_plan(cfg, build_plan(scenario, loaded.tasks))
    records = {r.task_id.split("/")[1]: r for r in read_records(out.results)}
    return {"records": records, "out": out}


def test_the_demo_mcp_tool_is_really_called(results: dict[str, Any]) -> None:
    rec = results["records"]["tool"]
    assert rec.outcome == "ok" and rec.correct and rec.tool_adopted is True
    stdout = (results["out"].run_dir(rec.run_id) / "stdout.jsonl").read_text()
    assert "mcp__codesearch__definition" in stdout and "fastapi/utils.py:179" in stdout
    assert rec.snapshot_commit == "7e20269603620e7d014d2ff600bd584f577e8c83"


def test_flags_fire_on_real_runs(results: dict[str, Any]) -> None:
    recs = results["records"]
    assert "tool_storm" in recs["storm"].flags and recs["storm"].tool_calls >= 6
    assert "token_snowball" in recs["snowball"].flags
    assert "talkative_failure" in recs["talkative"].flags and not recs["talkative"].correct
    assert recs["maxturns"].outcome == "agent_error"
    assert "budget_exhausted" in recs["maxturns"].flags
    assert recs["stall"].outcome == "timeout" and "timeout" in recs["stall"].flags
    for name in ("storm", "snowball", "talkative"):
        assert recs[name].outcome == "ok", recs[name].error
        assert recs[name].tool_adopted is False


def test_missing_cli_binary_stops_before_any_run(tmp_path: Path, corpus_root: Path) -> None:
    corpus = load_corpus(corpus_root, runners_dir()).require_ok()
    broken = corpus.runners["claude"].model_copy(update={"binary": "no-such-agent-cli"})
    corpus.runners["claude"] = broken
    scenario = Scenario.model_validate({
        "name": "x", "tasks": {"include": ["fastapi/locate-unique-id"]}, "modes": ["baseline"],
        "models": ["claude-sonnet-4-5"], "model_runner_map": {"claude-sonnet-4-5": "claude"}})
    cfg = EngineConfig(scenario=scenario, corpus=corpus, out=OutputDir(tmp_path / "out"),
                       store=SnapshotStore(tmp_path / "cache", corpus.repos))
    with pytest.raises(InfraError, match="no-such-agent-cli"):
        run_plan(cfg, build_plan(scenario, corpus.tasks))
    assert not (tmp_path / "out" / "results.jsonl").exists()
