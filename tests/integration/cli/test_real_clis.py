"""Claude Code and Codex, really run, against the scripted model server: every figure the
parser extracts is checked against what the server served."""

from __future__ import annotations

import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from copeca_action.engine._execute import _outcome
from copeca_action.scenario import Mode
from copeca_action.scripted import ScriptedServer

from .harness import ROOT, Run, expected_usd, run_cli

pytestmark = pytest.mark.cli
CLIS = ["claude", "codex"]
COMPREHENSION = SimpleNamespace(type="comprehension")


def outcome(run: Run) -> str:
    return _outcome(run.result, run.transcript, COMPREHENSION)[0]  # type: ignore[arg-type]


def assert_matches_served(run: Run, name: str) -> None:
    served = run.served
    assert served is not None and served.completed
    assert run.transcript.tokens == served.tokens
    assert [t.tokens for t in run.transcript.turns] == [s.tokens for s in served.steps]
    parsed = run.transcript.tool_calls
    assert [c.name for c in parsed] == [c.name for c in served.tool_calls]
    for got, sent in zip(parsed, served.tool_calls, strict=True):
        # The CLI may fill in defaults (Claude Code's Edit adds replace_all: false).
        assert got.input == {**got.input, **sent.input}
        assert got.id == sent.id
    assert run.transcript.answer == served.answer
    assert run.cost.computed_usd is not None
    assert round(run.cost.computed_usd, 2) == round(expected_usd(name, served.tokens), 2)
    assert run.cost.computed_usd == pytest.approx(expected_usd(name, served.tokens), rel=1e-9)
    assert not run.cost.diverged
    assert run.transcript.problems == []


@pytest.mark.parametrize("name", CLIS)
def test_comprehension_after_a_file_read(server: ScriptedServer, name: str,
                                         tmp_path: Path) -> None:
    run = run_cli(server, name, "CLI-READ What does greeting.txt say?", tmp_path)
    assert run.result.exit_code == 0 and outcome(run) == "ok"
    assert_matches_served(run, name)
    assert run.transcript.answer == "greeting.txt says: hello from the fixture"
    read = run.transcript.tool_calls[0]
    assert read.result is not None and "hello from the fixture" in read.result
    assert run.transcript.turns[0].text == "Let me look at the greeting."
    if name == "claude":
        # cost_headline: computed (runners/claude.yaml): the vendor figure is kept beside it
        assert run.cost.source == "computed" and run.cost.vendor_usd is not None
        assert run.cost.vendor_usd == pytest.approx(run.cost.computed_usd, rel=1e-6)
    else:
        assert run.cost.source == "computed"


@pytest.mark.parametrize("name", CLIS)
def test_multi_step_tool_sequence(server: ScriptedServer, name: str, tmp_path: Path) -> None:
    run = run_cli(server, name, "CLI-MULTI Where is area defined, and how long is it?",
                  tmp_path)
    assert outcome(run) == "ok"
    assert_matches_served(run, name)
    assert run.transcript.num_turns == 4 and len(run.transcript.tool_calls) == 3
    assert [c.step for c in run.transcript.tool_calls] == [0, 1, 2]
    results = [c.result or "" for c in run.transcript.tool_calls]
    assert "def area" in results[1] and "4" in results[2]


@pytest.mark.parametrize("name", CLIS)
def test_edit_really_changes_the_file(server: ScriptedServer, name: str,
                                      tmp_path: Path) -> None:
    run = run_cli(server, name, "CLI-EDIT Set VERSION to 2.", tmp_path)
    assert outcome(run) == "ok"
    assert_matches_served(run, name)
    assert (run.invocation.cwd / "version.py").read_text() == "VERSION = 2\n"


@pytest.mark.parametrize("name", CLIS)
@pytest.mark.parametrize("status", [400, 429, 500])
def test_http_errors(server: ScriptedServer, name: str, status: int, tmp_path: Path) -> None:
    run = run_cli(server, name, f"CLI-HTTP{status} What does greeting.txt say?", tmp_path)
    t = run.transcript
    assert run.result.exit_code != 0 and not run.result.timed_out
    # a refused request is the agent's; a rate limit or a server error after the CLI's own
    # retries is the endpoint's (infra_error: retried, excluded, and many stop the run)
    assert outcome(run) == ("agent_error" if status == 400 else "infra_error")
    assert t.is_error and t.answer is None and t.error
    assert t.tokens.total == 0 and run.cost.used_usd == 0
    if name == "claude" or status != 400:
        # Codex words a 400 as the bare error body, with no status to read.
        assert t.api_error_status == status
    attempts = [r for r in run.requests if f"CLI-HTTP{status}" in str(r.get("prompt_head"))]
    assert attempts, "the CLI never reached the scripted server"
    # Retries are bounded: CLAUDE_CODE_MAX_RETRIES=2 (Claude Code 2.1.330 also re-sends a 400'd
    # request with fewer features: 6 requests seen); Codex retries a 5xx up to
    # (1 + request_max_retries) × (1 + stream_max_retries) = 9 times.
    assert len(attempts) <= 9


@pytest.mark.parametrize("name", CLIS)
def test_max_turns(server: ScriptedServer, name: str, tmp_path: Path) -> None:
    if name == "codex":
        pytest.skip("Codex has no max-turns option (runners/codex.yaml: the timeout bounds it)")
    run = run_cli(server, name, "CLI-MAXTURNS Count to three.", tmp_path, max_turns=2)
    t = run.transcript
    assert t.max_turns_reached and t.answer is None
    assert outcome(run) == "agent_error"
    assert run.served is not None and not run.served.completed
    assert t.tokens == run.served.tokens and t.num_turns == 2
    assert [c.input["command"] for c in t.tool_calls] == ["echo one", "echo two"]


@pytest.mark.parametrize("name", CLIS)
def test_ambient_settings_do_not_leak_in(server: ScriptedServer, name: str,
                                         tmp_path: Path) -> None:
    # Each of these would send the CLI elsewhere (or nowhere) if it reached the process.
    poison = {"CLAUDE_CODE_USE_BEDROCK": "1", "CLAUDE_CODE_USE_VERTEX": "1",
              "ANTHROPIC_BASE_URL": "http://127.0.0.1:1", "OPENAI_BASE_URL": "http://127.0.0.1:1",
              "CODEX_HOME": str(tmp_path / "elsewhere"),
              "CLAUDE_CONFIG_DIR": str(tmp_path / "elsewhere"), "HTTPS_PROXY": "http://127.0.0.1:1",
              "ANTHROPIC_API_KEY": "sk-host-key"}
    run = run_cli(server, name, "CLI-READ What does greeting.txt say?", tmp_path,
                  extra_host_env=poison)
    assert outcome(run) == "ok" and run.transcript.answer == run.served.answer  # type: ignore[union-attr]
    assert not (tmp_path / "elsewhere").exists()


def test_claude_stops_at_the_run_budget(server: ScriptedServer, tmp_path: Path) -> None:
    run = run_cli(server, "claude", "CLI-MULTI Where is area defined?", tmp_path,
                  run_budget_usd=0.005)
    t = run.transcript
    assert t.budget_exhausted and t.answer is None and outcome(run) == "agent_error"
    assert run.served is not None and t.tokens == run.served.tokens
    assert run.cost.vendor_usd == pytest.approx(expected_usd("claude", run.served.tokens))
    assert not run.cost.diverged


@pytest.mark.parametrize("name", CLIS)
def test_stall_past_the_timeout_kills_the_group(server: ScriptedServer, name: str,
                                                tmp_path: Path) -> None:
    run = run_cli(server, name, "CLI-STALL What does greeting.txt say?", tmp_path,
                  timeout_s=4)
    assert run.result.timed_out and run.result.exit_code is None
    assert 4 <= run.result.duration_s < 4 + 10
    assert outcome(run) == "timeout"
    assert run.transcript.answer is None and run.transcript.is_error
    assert run.result.pid is not None
    assert _group_gone(run.result.pid)


def _group_gone(pgid: int, within: float = 10.0) -> bool:
    """No live process left in the group (a zombie waiting for PID 1 to reap it is dead:
    an isolated run's namespace init is re-parented there)."""
    import time

    deadline = time.monotonic() + within
    while True:
        live = []
        for entry in Path("/proc").iterdir():
            try:
                stat = (entry / "stat").read_text() if entry.name.isdigit() else ""
            except OSError:
                continue
            fields = stat[stat.rfind(")") + 2:].split()
            if len(fields) > 2 and fields[2] == str(pgid) and fields[0] != "Z":
                live.append(entry.name)
        if not live:
            return True
        if time.monotonic() > deadline:
            return False
        time.sleep(0.1)


CODESEARCH = Mode(name="codesearch", mcp_config={"mcpServers": {"codesearch": {
    "command": sys.executable, "args": ["{tool_dir}/mcp_echo.py"]}}},
    validity={"kind": "tool_call_prefix", "prefix": "mcp__codesearch__"})


@pytest.mark.parametrize("name", CLIS)
def test_mode_mcp_server_reaches_the_cli(server: ScriptedServer, name: str,
                                         tmp_path: Path) -> None:
    # Codex 0.169 offers MCP tools at top level only with models it has no metadata for
    # (gpt-5); with gpt-5.5/gpt-6.x it sends a namespaced tool list instead.
    model = "gpt-5" if name == "codex" else None
    tool_dir = ROOT / "tests" / "unit" / "scripted"
    arm = run_cli(server, name, "CLI-MCP Where is area defined?", tmp_path / "arm",
                  mode=CODESEARCH, tool_dir=tool_dir, model=model)
    base = run_cli(server, name, "CLI-MCP Where is area defined?", tmp_path / "base",
                   model=model)
    assert arm.served is not None and arm.served.script == "cli/mcp/codesearch"
    assert base.served is not None and base.served.script == "cli/mcp/baseline"
    for run in (arm, base):
        assert outcome(run) == "ok" and run.transcript.tokens == run.served.tokens  # type: ignore[union-attr]
        assert run.transcript.answer == "area is defined in shapes.py"
    call = next(c for c in arm.transcript.tool_calls if c.name.startswith("mcp__"))
    assert call.name == "mcp__codesearch__search" and call.input == {"query": "def area"}
    assert call.result is not None and "shapes.py" in call.result
    assert not any(c.name.startswith("mcp__") for c in base.transcript.tool_calls)
