"""Gemini CLI, Qwen Code and OpenCode, really run, against the scripted model server: every
figure the parser extracts is checked against what the server served.

What each CLI cannot do is tested as such: OpenCode's step limit is only a prompt (a model
that keeps calling tools is not stopped), Qwen Code and OpenCode retry a failing endpoint
past any short timeout (the run timeout bounds them), none reports a cache write except
OpenCode (the Gemini and Chat Completions APIs have no such figure)."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

from copeca_action.engine._execute import _outcome
from copeca_action.records import Tokens
from copeca_action.scenario import Mode
from copeca_action.scripted import ScriptedServer

from .harness import ROOT, Run, expected_usd, run_cli

pytestmark = pytest.mark.cli
CLIS = ["gemini", "qwen", "opencode"]
COMPREHENSION = SimpleNamespace(type="comprehension")
BRIDGE = "tool_call"
"""Qwen Code's bridge for deferred (MCP) tools; its parser reports the inner call."""


def outcome(run: Run) -> str:
    return _outcome(run.result, run.transcript, COMPREHENSION)[0]  # type: ignore[arg-type]


def served_calls(run: Run) -> list[tuple[str, dict[str, object]]]:
    assert run.served is not None
    out = []
    for c in run.served.tool_calls:
        if c.name == BRIDGE:
            out.append((str(c.input["name"]), dict(c.input["arguments"])))  # type: ignore[call-overload]
        else:
            out.append((c.name, dict(c.input)))
    return out


def assert_group_gone(pid: int | None, within_s: float = 10) -> None:
    """Every process of the run's group is gone (a killed child may linger a moment in
    uninterruptible sleep, then as a zombie until it is reaped)."""
    assert pid is not None
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        try:
            os.killpg(pid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.2)
    pytest.fail(f"process group {pid} still alive {within_s} s after the kill")


def assert_matches_served(run: Run, name: str, problems: list[str] | None = None) -> None:
    served = run.served
    assert served is not None and served.completed
    assert run.transcript.problems == (problems or [])
    assert run.transcript.tokens == served.tokens
    assert [t.tokens for t in run.transcript.turns] == [s.tokens for s in served.steps]
    parsed = run.transcript.tool_calls
    sent = served_calls(run)
    assert [c.name for c in parsed] == [n for n, _ in sent]
    for got, (_, args) in zip(parsed, sent, strict=True):
        # the CLI may fill in defaults (Gemini CLI's grep_search adds `context`)
        assert got.input == {**got.input, **args}
    assert [c.id for c in parsed] == [c.id for c in served.tool_calls]
    assert run.transcript.answer == served.answer
    assert run.cost.computed_usd is not None
    assert round(run.cost.computed_usd, 2) == round(expected_usd(name, served.tokens), 2)
    assert run.cost.computed_usd == pytest.approx(expected_usd(name, served.tokens), rel=1e-9)
    assert not run.cost.diverged
    if name == "opencode":  # the one of the three that reports a cost
        # the runner's explicit price is the headline (cost_headline: computed); the CLI's
        # own figure is kept beside it and agrees
        assert run.cost.source == "computed" and run.cost.vendor_usd is not None
        assert run.cost.vendor_usd == pytest.approx(run.cost.computed_usd, rel=1e-6)
    else:
        assert run.cost.source == "computed" and run.cost.vendor_usd is None


@pytest.mark.parametrize("name", CLIS)
def test_comprehension_after_a_file_read(server: ScriptedServer, name: str,
                                         tmp_path: Path) -> None:
    run = run_cli(server, name, "CLI-READ What does greeting.txt say?", tmp_path)
    assert run.result.exit_code == 0 and outcome(run) == "ok"
    assert_matches_served(run, name)
    assert run.transcript.answer == "greeting.txt says: hello from the fixture"
    read = run.transcript.tool_calls[0]
    assert read.result is not None and "hello from the fixture" in read.result
    assert not read.is_error
    assert run.transcript.turns[0].text == "Let me look at the greeting."
    # the wire has no cache-write figure but OpenCode's (Anthropic): served as input
    assert run.served is not None
    assert run.served.steps[0].tokens.cache_write == (377 if name == "opencode" else 0)


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
    assert not any(c.is_error for c in run.transcript.tool_calls), results


@pytest.mark.parametrize("name", CLIS)
def test_edit_really_changes_the_file(server: ScriptedServer, name: str,
                                      tmp_path: Path) -> None:
    run = run_cli(server, name, "CLI-EDIT Set VERSION to 2.", tmp_path)
    assert outcome(run) == "ok"
    assert_matches_served(run, name)
    assert (run.invocation.cwd / "version.py").read_text() == "VERSION = 2\n"


@pytest.mark.parametrize("name", CLIS)
def test_http_400_ends_the_run(server: ScriptedServer, name: str, tmp_path: Path) -> None:
    run = run_cli(server, name, "CLI-HTTP400 What does greeting.txt say?", tmp_path)
    t = run.transcript
    assert run.result.exit_code != 0 and not run.result.timed_out
    assert outcome(run) == "agent_error"
    assert t.is_error and t.answer is None and t.error and "scripted bad request" in t.error
    assert t.api_error_status == 400
    assert t.tokens.total == 0 and run.cost.used_usd == 0
    attempts = [r for r in run.requests if "CLI-HTTP400" in str(r.get("prompt_head"))]
    assert 1 <= len(attempts) <= 2


@pytest.mark.parametrize("name", CLIS)
@pytest.mark.parametrize("status", [429, 500])
def test_one_failed_request_is_retried(server: ScriptedServer, name: str, status: int,
                                       tmp_path: Path) -> None:
    run = run_cli(server, name, f"CLI-RETRY{status} Say something.", tmp_path, timeout_s=60)
    assert outcome(run) == "ok", run.transcript.error
    # Qwen Code 0.24's `result.usage` counts the retried request's reply twice; the parser
    # takes the per-message usage (which matches what was served) and says so.
    tokens = run.transcript.tokens
    twice = tokens.model_copy(update={k: 2 * v for k, v in tokens.model_dump().items()})
    doubled = [] if name != "qwen" else [
        f"per-message usage {tokens} differs from the result's {twice}"]
    assert_matches_served(run, name, doubled)
    assert run.served is not None
    assert run.served.steps[0].attempts == 2
    assert run.served.steps[0].faults == [f"http {status}"]


@pytest.mark.parametrize("name", CLIS)
@pytest.mark.parametrize("kind", ["drop", "malformed"])
def test_a_broken_stream(server: ScriptedServer, name: str, kind: str, tmp_path: Path) -> None:
    # A stream cut mid-reply (drop) or holding a frame that is not JSON (malformed), once.
    run = run_cli(server, name, f"CLI-{kind.upper()} Say something.", tmp_path, timeout_s=60)
    t, served = run.transcript, run.served
    assert served is not None and served.steps[0].faults == [kind]
    assert t.tokens == served.tokens  # the broken reply's usage never counts
    if name == "opencode" or (name, kind) == ("qwen", "drop"):  # retried
        assert outcome(run) == "ok" and served.completed and served.steps[0].attempts == 2
        assert served.answer is not None and t.answer is not None
        if name == "opencode":
            assert_matches_served(run, name)
        else:
            # Qwen Code 0.24 keeps the broken attempt's partial text in its answer
            assert t.answer.endswith(served.answer) and t.answer != served.answer
    else:  # Gemini CLI gives up on both, Qwen Code on a malformed frame
        assert outcome(run) == "agent_error" and not served.completed
        assert served.steps[0].attempts == 1
        assert t.is_error and t.answer is None and t.error and t.tokens == Tokens()


@pytest.mark.parametrize("name", CLIS)
@pytest.mark.parametrize("status", [429, 500])
def test_an_endpoint_that_keeps_failing(server: ScriptedServer, name: str, status: int,
                                        tmp_path: Path) -> None:
    # Gemini CLI gives up after general.maxAttempts (3) and reports the status; OpenCode gives
    # up on a 429 with retry-after 0 at once but backs off on a 500; Qwen Code backs off for
    # minutes either way. Whichever: no tokens, no answer, and the timeout bounds the run.
    run = run_cli(server, name, f"CLI-HTTP{status} What does greeting.txt say?", tmp_path,
                  timeout_s=35)
    t = run.transcript
    assert t.answer is None and t.is_error and t.tokens.total == 0
    assert run.cost.used_usd == 0
    attempts = [r for r in run.requests if f"CLI-HTTP{status}" in str(r.get("prompt_head"))]
    assert len(attempts) >= 2, "the CLI did not retry"
    assert all(r.get("status") == status for r in attempts)
    if run.result.timed_out:
        assert outcome(run) == "timeout"
        assert (name, status) in {("qwen", 429), ("qwen", 500), ("opencode", 500)}
    else:
        # an endpoint failure after the CLI's retries is the harness's side, never the
        # agent's wrong answer (docs/running.md): infra_error, excluded and retried
        assert outcome(run) == "infra_error" and t.api_error_status == status
        assert (name, status) in {("gemini", 429), ("gemini", 500), ("opencode", 429)}


@pytest.mark.parametrize("name", ["gemini", "qwen"])
def test_max_turns(server: ScriptedServer, name: str, tmp_path: Path) -> None:
    run = run_cli(server, name, "CLI-MAXTURNS Count to three.", tmp_path, max_turns=2)
    t = run.transcript
    assert t.max_turns_reached and t.answer is None and t.is_error
    assert outcome(run) == "agent_error"
    assert run.served is not None and not run.served.completed
    assert t.tokens == run.served.tokens and t.num_turns == 2
    assert [c.input["command"] for c in t.tool_calls] == ["echo one", "echo two"]


def test_opencode_step_limit_is_only_a_prompt(server: ScriptedServer, tmp_path: Path) -> None:
    run = run_cli(server, "opencode", "CLI-MAXTURNS Count to three.", tmp_path, max_turns=2)
    t = run.transcript
    # agent.build.steps tells the model to stop calling tools; a model that goes on is not
    # stopped (all three echo commands ran): the run timeout is OpenCode's only hard bound.
    assert [c.input["command"] for c in t.tool_calls] == ["echo one", "echo two", "echo three"]
    assert t.answer == "counted to three" and not t.max_turns_reached
    assert run.served is not None and run.served.completed
    assert t.tokens == run.served.tokens and t.num_turns == 4


@pytest.mark.parametrize("name", CLIS)
def test_ambient_settings_do_not_leak_in(server: ScriptedServer, name: str,
                                         tmp_path: Path) -> None:
    poison = {"GOOGLE_GEMINI_BASE_URL": "http://127.0.0.1:1",
              "OPENAI_BASE_URL": "http://127.0.0.1:1", "GEMINI_API_KEY": "host-key",
              "GEMINI_CLI_HOME": str(tmp_path / "elsewhere"),
              "QWEN_HOME": str(tmp_path / "elsewhere"),
              "OPENCODE_CONFIG_DIR": str(tmp_path / "elsewhere"),
              "OPENCODE_CONFIG": str(tmp_path / "elsewhere" / "x.json"),
              "XDG_CONFIG_HOME": str(tmp_path / "elsewhere"),
              "HTTPS_PROXY": "http://127.0.0.1:1", "ANTHROPIC_BASE_URL": "http://127.0.0.1:1"}
    run = run_cli(server, name, "CLI-READ What does greeting.txt say?", tmp_path,
                  extra_host_env=poison)
    assert outcome(run) == "ok" and run.served is not None
    assert run.transcript.answer == run.served.answer
    assert not (tmp_path / "elsewhere").exists()


@pytest.mark.parametrize("name", CLIS)
def test_stall_past_the_timeout_kills_the_group(server: ScriptedServer, name: str,
                                                tmp_path: Path) -> None:
    run = run_cli(server, name, "CLI-STALL What does greeting.txt say?", tmp_path,
                  timeout_s=4)
    assert run.result.timed_out and run.result.exit_code is None
    assert 4 <= run.result.duration_s < 4 + 10
    assert outcome(run) == "timeout"
    assert run.transcript.answer is None and run.transcript.is_error
    assert_group_gone(run.result.pid)


CODESEARCH = Mode(name="codesearch", mcp_config={"mcpServers": {"codesearch": {
    "command": sys.executable, "args": ["{tool_dir}/mcp_echo.py"]}}},
    validity={"kind": "tool_call_prefix", "prefix": "mcp__codesearch__"})
MCP_NAMES = {"gemini": "mcp_codesearch_search", "qwen": "mcp__codesearch__search",
             "opencode": "codesearch_search"}


@pytest.mark.parametrize("name", CLIS)
def test_mode_mcp_server_reaches_the_cli(server: ScriptedServer, name: str,
                                         tmp_path: Path) -> None:
    from copeca_action.engine._validity import tool_adopted

    tool_dir = ROOT / "tests" / "unit" / "scripted"
    arm = run_cli(server, name, "CLI-MCP Where is area defined?", tmp_path / "arm",
                  mode=CODESEARCH, tool_dir=tool_dir)
    base = run_cli(server, name, "CLI-MCP Where is area defined?", tmp_path / "base")
    assert arm.served is not None and arm.served.script == "cli/mcp/codesearch"
    assert base.served is not None and base.served.script == "cli/mcp/baseline"
    for run in (arm, base):
        assert outcome(run) == "ok"
        assert_matches_served(run, name)
        assert run.transcript.answer == "area is defined in shapes.py"
    call = arm.transcript.tool_calls[0]
    assert call.name == MCP_NAMES[name] and call.input == {"query": "def area"}
    # the real MCP server answered (mcp_echo.py greps the working directory)
    assert call.result is not None and "shapes.py" in call.result
    assert tool_adopted(CODESEARCH.validity, arm.transcript, arm.invocation.cwd) is True
    assert tool_adopted(CODESEARCH.validity, base.transcript, base.invocation.cwd) is False


OVERLAYS = {"gemini": {"model": {"maxSessionTurns": 1}},
            "qwen": {"model": {"maxSessionTurns": 1}},
            "opencode": {"permission": {"bash": "deny"}}}


@pytest.mark.parametrize("name", CLIS)
def test_mode_settings_overlay_reaches_the_cli(server: ScriptedServer, name: str,
                                               tmp_path: Path) -> None:
    # A mode's agent_config lands in the CLI's own settings file and takes effect: one turn
    # at most (Gemini CLI, Qwen Code: maxSessionTurns in settings.json), or the shell tool
    # denied (OpenCode: permission in opencode.json; a denied tool is not even offered, so
    # the script's shell step cannot be served).
    mode = Mode(name="overlay", agent_config=OVERLAYS[name])
    run = run_cli(server, name, "CLI-MAXTURNS Count to three.", tmp_path, mode=mode,
                  max_turns=0)
    t = run.transcript
    assert run.served is not None and t.tokens == run.served.tokens
    if name == "opencode":
        assert t.tool_calls == [] and t.is_error and t.api_error_status == 400
        assert "`bash` needs one of" in (t.error or "") and "does not offer" in (t.error or "")
        base = run_cli(server, name, "CLI-MAXTURNS Count to three.", tmp_path / "base",
                       max_turns=0)
        assert base.transcript.tool_calls[0].input == {"command": "echo one"}
    else:
        assert t.max_turns_reached and t.num_turns == 1 and outcome(run) == "agent_error"
