"""The real Claude Code and Codex CLIs against the scripted server: tools really run in the
working directory, answers arrive, and what the CLIs report equals what was served."""

from __future__ import annotations

import re
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from copeca_action.scripted import ScriptedServer, ServedConversation
from tests.unit.scripted.clis import CliRun, run_claude, run_codex

pytestmark = [pytest.mark.cli]


def _only(server: ScriptedServer) -> ServedConversation:
    served = server.served()
    assert len(served) == 1, served
    return served[0]


def _claude_result(run: CliRun) -> dict:  # type: ignore[type-arg]
    results = run.of_type("result")
    assert results, f"no result line; stderr: {run.stderr[-500:]}"
    return results[-1]


def _assert_claude_usage(result: dict, conv: ServedConversation) -> None:  # type: ignore[type-arg]
    usage = result["usage"]
    assert usage["input_tokens"] == conv.tokens.input
    assert usage["output_tokens"] == conv.tokens.output
    assert usage["cache_read_input_tokens"] == conv.tokens.cache_read
    assert usage["cache_creation_input_tokens"] == conv.tokens.cache_write


def _codex_usage(run: CliRun) -> dict:  # type: ignore[type-arg]
    done = run.of_type("turn.completed")
    assert done, f"no turn.completed; events: {run.events[-3:]}, stderr: {run.stderr[-500:]}"
    return done[-1]["usage"]  # type: ignore[no-any-return]


def _codex_answer(run: CliRun) -> str:
    messages = [e["item"]["text"] for e in run.of_type("item.completed")
                if e["item"].get("type") == "agent_message"]
    return messages[-1]


# -- Claude Code ------------------------------------------------------------------------------

def test_claude_reads_a_file_and_reports_the_served_usage(scripts_dir: Path, workdir: Path,
                                                         tmp_path: Path) -> None:
    with ScriptedServer(scripts_dir, seed=3) as srv:
        run = run_claude(srv.url, "What does greeting.txt say?", workdir, tmp_path / "c")
        conv = _only(srv)
    assert run.returncode == 0, run.stderr[-500:]
    assert conv.script == "example/read-greeting/baseline" and conv.completed
    result = _claude_result(run)
    assert result["result"] == conv.answer
    _assert_claude_usage(result, conv)
    # the Read really ran in the working directory and its output went back to the model
    tool_results = [b for e in run.of_type("user") for b in e["message"]["content"]
                    if b.get("type") == "tool_result"]
    assert "hello from the fixture" in str(tool_results[0]["content"])
    assert conv.tool_calls[0].name == "Read"
    assert conv.tool_calls[0].input["file_path"] == str(workdir / "greeting.txt")


def test_claude_edit_changes_the_file(scripts_dir: Path, workdir: Path, tmp_path: Path) -> None:
    with ScriptedServer(scripts_dir) as srv:
        run = run_claude(srv.url, "Set VERSION to 2 in version.py", workdir, tmp_path / "c")
        conv = _only(srv)
    assert run.returncode == 0, run.stderr[-500:]
    assert (workdir / "version.py").read_text() == "VERSION = 2\n"
    assert [c.name for c in conv.tool_calls] == ["Read", "Edit"]
    assert _claude_result(run)["result"] == "VERSION is now 2 in version.py."


def test_claude_tool_arm_loads_the_deferred_mcp_tool(scripts_dir: Path, workdir: Path,
                                                    tmp_path: Path) -> None:
    with ScriptedServer(scripts_dir) as srv:
        run = run_claude(srv.url, "What does greeting.txt say?", workdir, tmp_path / "c",
                         mcp=True)
        conv = _only(srv)
    assert run.returncode == 0, run.stderr[-500:]
    assert conv.script == "example/read-greeting/codesearch"
    names = [c.name for c in conv.tool_calls]
    assert names[-1] == "mcp__codesearch__search"
    called = [b["name"] for e in run.of_type("assistant") for b in e["message"]["content"]
              if b.get("type") == "tool_use"]
    assert called == names
    _assert_claude_usage(_claude_result(run), conv)


def test_claude_http_400_ends_the_run(scripts_dir: Path, workdir: Path, tmp_path: Path) -> None:
    with ScriptedServer(scripts_dir) as srv:
        run = run_claude(srv.url, "FAULT-400 please", workdir, tmp_path / "c")
        conv = _only(srv)
    result = _claude_result(run)
    assert run.returncode == 1
    assert result["is_error"] is True and result["api_error_status"] == 400
    # 2.1.330 re-sends a 400'd first request (retries, then a variant without deferred
    # tools) before giving up: every attempt belongs to the one conversation
    step = conv.steps[0]
    assert step.attempts >= 1 and step.faults == ["http 400"] * step.attempts
    assert not conv.completed and conv.tokens.total == 0


def test_claude_retries_an_overload_and_counts_only_served_usage(scripts_dir: Path,
                                                                  workdir: Path,
                                                                  tmp_path: Path) -> None:
    with ScriptedServer(scripts_dir) as srv:
        run = run_claude(srv.url, "FAULT-529 now", workdir, tmp_path / "c")
        conv = _only(srv)
    assert run.returncode == 0, run.stderr[-500:]
    assert conv.steps[1].attempts == 2 and conv.steps[1].faults == ["http 529"]
    result = _claude_result(run)
    assert result["result"] == "answered after one overload"
    _assert_claude_usage(result, conv)
    assert conv.tokens.input == 1500


def test_claude_run_key_header_fixes_the_variant(scripts_dir: Path, workdir: Path,
                                                 tmp_path: Path) -> None:
    variants = []
    for i in range(2):
        with ScriptedServer(scripts_dir, seed=5) as srv:
            run_claude(srv.url, "What does greeting.txt say?", workdir, tmp_path / f"c{i}",
                       run_key="run-0001")
            variants.append(_only(srv).variant)
    assert variants[0] == variants[1]


# -- Codex ------------------------------------------------------------------------------------

def test_codex_runs_the_shell_and_reports_the_served_usage(scripts_dir: Path, workdir: Path,
                                                          tmp_path: Path) -> None:
    with ScriptedServer(scripts_dir, seed=3) as srv:
        run = run_codex(srv.url, "What does greeting.txt say?", workdir, tmp_path / "x")
        conv = _only(srv)
    assert run.returncode == 0, run.stderr[-500:]
    commands = [e["item"] for e in run.of_type("item.completed")
                if e["item"].get("type") == "command_execution"]
    assert "hello from the fixture" in commands[0]["aggregated_output"]
    assert commands[0]["exit_code"] == 0
    assert _codex_answer(run) == conv.answer
    usage = _codex_usage(run)
    t = conv.tokens
    assert usage["input_tokens"] == t.input + t.cache_read + t.cache_write
    assert usage["cached_input_tokens"] == t.cache_read
    assert usage["output_tokens"] == t.output


def test_codex_edit_changes_the_file(scripts_dir: Path, workdir: Path, tmp_path: Path) -> None:
    with ScriptedServer(scripts_dir) as srv:
        run = run_codex(srv.url, "Set VERSION to 2 in version.py", workdir, tmp_path / "x")
    assert run.returncode == 0, run.stderr[-500:]
    assert (workdir / "version.py").read_text() == "VERSION = 2\n"
    assert _codex_answer(run) == "VERSION is now 2 in version.py."


def test_codex_tool_arm_calls_the_mcp_tool(scripts_dir: Path, workdir: Path,
                                           tmp_path: Path) -> None:
    with ScriptedServer(scripts_dir) as srv:
        run = run_codex(srv.url, "What does greeting.txt say?", workdir, tmp_path / "x",
                        mcp=True)
        conv = _only(srv)
    assert run.returncode == 0, run.stderr[-500:]
    assert conv.script == "example/read-greeting/codesearch"
    calls = [e["item"] for e in run.of_type("item.completed")
             if e["item"].get("type") == "mcp_tool_call"]
    assert calls and calls[0]["server"] == "codesearch" and calls[0]["tool"] == "search"
    assert calls[0]["status"] == "completed", calls[0]
    assert conv.tool_calls[0].name == "mcp__codesearch__search"


def test_codex_recovers_from_a_dropped_connection(scripts_dir: Path, workdir: Path,
                                                  tmp_path: Path) -> None:
    with ScriptedServer(scripts_dir) as srv:
        run = run_codex(srv.url, "FAULT-DROP here", workdir, tmp_path / "x")
        conv = _only(srv)
    assert run.returncode == 0, run.stderr[-500:]
    assert conv.steps[0].faults == ["drop"] and conv.steps[0].attempts == 2
    assert _codex_answer(run) == "answered after a dropped connection"
    assert _codex_usage(run)["input_tokens"] == 500


def test_codex_stall_is_cut_by_the_run_timeout(scripts_dir: Path, workdir: Path,
                                               tmp_path: Path) -> None:
    with ScriptedServer(scripts_dir) as srv, pytest.raises(subprocess.TimeoutExpired):
        run_codex(srv.url, "FAULT-STALL here", workdir, tmp_path / "x", timeout=3)


# -- isolation --------------------------------------------------------------------------------

@pytest.mark.parametrize("cli", ["claude", "codex"])
def test_cli_connects_to_nothing_but_the_scripted_server(cli: str, scripts_dir: Path,
                                                         workdir: Path, tmp_path: Path) -> None:
    """Every socket connect() of the CLI and its children (the MCP server too) is a local
    socket or the scripted server's port on loopback."""
    if shutil.which("strace") is None:
        pytest.skip("strace is not installed")
    trace = tmp_path / "connect.trace"
    wrap = ["strace", "-f", "-qq", "-e", "trace=connect", "-o", str(trace)]
    runner: Callable[..., CliRun] = run_claude if cli == "claude" else run_codex
    with ScriptedServer(scripts_dir) as srv:
        run = runner(srv.url, "What does greeting.txt say?", workdir, tmp_path / "x",
                     mcp=True, wrap=wrap)
        port = srv.port
    assert run.returncode == 0, run.stderr[-500:]
    targets = re.findall(r"connect\(\d+, \{sa_family=(AF_\w+), ([^}]*)\}",
                         trace.read_text())
    inet = [addr for family, addr in targets if family in ("AF_INET", "AF_INET6")]
    assert inet, "the CLI never reached the server?"
    allowed = (f'sin_port=htons({port}), sin_addr=inet_addr("127.0.0.1")',)
    assert [a for a in inet if a not in allowed] == []
    assert {family for family, _ in targets} <= {"AF_INET", "AF_INET6", "AF_UNIX"}


def test_claude_max_turns_stops_mid_script(scripts_dir: Path, workdir: Path,
                                           tmp_path: Path) -> None:
    with ScriptedServer(scripts_dir) as srv:
        run = run_claude(srv.url, "Set VERSION to 2 in version.py", workdir, tmp_path / "c",
                         max_turns=1)
        conv = _only(srv)
    result = _claude_result(run)
    assert run.returncode == 1 and result["subtype"] == "error_max_turns"
    assert not conv.completed and len(conv.steps) == 1
    _assert_claude_usage(result, conv)
