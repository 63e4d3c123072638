"""The Codex parser against real recorded output, with and without the session rollout."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from copeca_action.records import Tokens
from copeca_action.transcript import parse_codex_json

# Served per request: input (cached included), cached, output (reasoning included).
SERVED = [Tokens(input=2000, cache_read=0, output=30),
          Tokens(input=400, cache_read=1900, output=20),
          Tokens(input=300, cache_read=2200, output=15)]
TOTAL = Tokens(input=2700, cache_read=4100, output=65)


def _parse(fixtures: Path, name: str, rollout: bool = True):  # type: ignore[no-untyped-def]
    d = fixtures / f"codex_{name}"
    return parse_codex_json(d / "stdout.jsonl", d / "codex_home" if rollout else None)


def test_rollout_gives_per_request_usage(fixtures: Path) -> None:
    t = _parse(fixtures, "ok")
    assert [turn.tokens for turn in t.turns] == SERVED
    assert t.tokens == TOTAL and t.tokens_by_model == {"gpt-5.5": TOTAL}
    assert t.num_turns == 3 and t.problems == []
    assert t.cli_version == "0.169.0" and t.model == "gpt-5.5"
    assert t.duration_ms is not None


def test_tool_calls_are_the_calls_the_model_made(fixtures: Path) -> None:
    t = _parse(fixtures, "ok")
    assert [(c.step, c.name, c.input) for c in t.tool_calls] == [
        (0, "exec_command", {"cmd": "cat hello.py"}),
        (1, "exec_command", {"cmd": "grep -n def hello.py"})]
    assert t.tool_calls[0].result is not None and "def greet" in t.tool_calls[0].result
    assert t.answer == "The function is `greet` on line 1."
    assert t.turns[0].text == "Reading the file."
    assert t.vendor_cost_usd is None


def test_stdout_alone_still_gives_totals_and_answer(fixtures: Path) -> None:
    t = _parse(fixtures, "ok", rollout=False)
    assert t.tokens == TOTAL
    assert t.answer == "The function is `greet` on line 1."
    assert [c.name for c in t.tool_calls] == ["exec_command", "exec_command"]
    assert any("rollout" in p for p in t.problems)


def test_edit(fixtures: Path) -> None:
    t = _parse(fixtures, "edit")
    assert t.tool_calls[1].input == {"cmd": "sed -i s/greet/welcome/ hello.py"}
    assert t.answer == "Renamed greet to welcome."


def test_api_errors(fixtures: Path) -> None:
    for name, status in (("http429", 429), ("http500", 500), ("http400", None)):
        t = _parse(fixtures, name)
        assert t.is_error and t.answer is None and t.api_error_status == status, name
        assert t.error and t.tokens == Tokens()
    assert "stub 400" in (_parse(fixtures, "http400").error or "")
    assert _parse(fixtures, "http429").stop_reason == "response_too_many_failed_attempts"
    assert _parse(fixtures, "http500").stop_reason == "internal_server_error"
    assert _parse(fixtures, "ok").stop_reason == "completed"
    # stdout alone: the status is read from the message when it names one.
    assert _parse(fixtures, "http429", rollout=False).api_error_status == 429


def test_unreachable_endpoint(fixtures: Path) -> None:
    t = _parse(fixtures, "refused")
    assert t.is_error and t.answer is None
    assert t.error == "stream disconnected before completion: builder error"


def test_killed_run(fixtures: Path) -> None:
    t = _parse(fixtures, "stall")
    assert t.is_error and t.answer is None
    assert any("task_complete" in p for p in t.problems)
    t = _parse(fixtures, "stall", rollout=False)
    assert t.is_error and any("turn.completed" in p for p in t.problems)


def test_rollout_of_another_thread_is_not_used(tmp_path: Path, fixtures: Path) -> None:
    home = tmp_path / "home" / "sessions"
    home.mkdir(parents=True)
    for src in (fixtures / "codex_ok" / "codex_home").rglob("rollout-*.jsonl"):
        (home / src.name).write_bytes(src.read_bytes())
    (home / "rollout-other-thread.jsonl").write_text("")
    stdout = tmp_path / "stdout.jsonl"
    stdout.write_text(json.dumps({"type": "thread.started", "thread_id": "nope"}) + "\n")
    t = parse_codex_json(stdout, tmp_path / "home")
    assert t.turns == [] and any("rollout" in p for p in t.problems)


def test_truncated_rollout_counts_what_was_recorded(tmp_path: Path, fixtures: Path) -> None:
    src = next((fixtures / "codex_ok" / "codex_home").rglob("rollout-*.jsonl"))
    lines = src.read_text().splitlines()
    cut = next(i for i, line in enumerate(lines) if '"resp_1"' in line)
    dest = tmp_path / "home" / "sessions" / src.name
    dest.parent.mkdir(parents=True)
    dest.write_text("\n".join(lines[: cut + 1]) + "\n" + lines[cut + 1][:50])
    stdout = tmp_path / "stdout.jsonl"
    stdout.write_text((fixtures / "codex_ok" / "stdout.jsonl").read_text().splitlines()[0])
    t = parse_codex_json(stdout, tmp_path / "home")
    assert [turn.tokens for turn in t.turns] == SERVED[:2]
    assert t.is_error and t.answer is None
    assert any("not JSON" in p for p in t.problems)


def test_mcp_tool_calls_are_named_like_claudes(fixtures: Path) -> None:
    t = _parse(fixtures, "mcp")
    assert [(c.name, c.input) for c in t.tool_calls] == [
        ("mcp__codesearch__search", {"query": "greeting"})]
    assert t.tool_calls[0].result is not None and t.tool_calls[0].result.endswith("no match")
    assert t.tokens == Tokens(input=2700, output=65, cache_write=300, cache_read=1900)
    stdout_only = _parse(fixtures, "mcp", rollout=False)
    assert [(c.name, c.result) for c in stdout_only.tool_calls] == [
        ("mcp__codesearch__search", "no match")]


def _subagent_of(src: Path, dest: Path, parent: str, model: str | None) -> None:
    """The main rollout rewritten as a sub-agent session of `parent` (Codex's `spawn_agent`
    writes one such file per sub-agent), its model named by its turn context."""
    out = []
    for line in src.read_text().splitlines():
        event = json.loads(line)
        if event["type"] == "session_meta":
            event["payload"]["id"] = event["payload"]["session_id"] = "sub-1"
            event["payload"]["parent_thread_id"] = parent
        if event["type"] == "turn_context":
            if model is None:
                event["payload"].pop("model", None)
            else:
                event["payload"]["model"] = model
        if event["type"] == "event_msg" and event["payload"].get("type") == \
                "thread_settings_applied":
            continue
        out.append(json.dumps(event))
    dest.write_text("\n".join(out) + "\n")


@pytest.mark.parametrize("model", ["gpt-5-mini", None])
def test_subagent_sessions_add_their_usage(tmp_path: Path, fixtures: Path,
                                           model: str | None) -> None:
    src = next((fixtures / "codex_ok" / "codex_home").rglob("rollout-*.jsonl"))
    home = tmp_path / "home" / "sessions"
    home.mkdir(parents=True)
    (home / src.name).write_bytes(src.read_bytes())
    stdout = tmp_path / "stdout.jsonl"
    stdout.write_text((fixtures / "codex_ok" / "stdout.jsonl").read_text())
    alone = parse_codex_json(stdout, tmp_path / "home")
    parent = json.loads(src.read_text().splitlines()[0])["payload"]["id"]
    _subagent_of(src, home / "rollout-2026-11-21T20-02-00-sub.jsonl", parent, model)
    t = parse_codex_json(stdout, tmp_path / "home")
    assert alone.subagent_sessions == 0 and t.subagent_sessions == 1
    assert t.tokens.input == 2 * alone.tokens.input and t.tokens.output == 2 * alone.tokens.output
    assert len(t.turns) == len(alone.turns)  # the sub-agent's turns stay its own
    if model is None:  # tokens that cannot be priced make the usage incomplete, not free
        assert not t.usage_complete and any("no model named" in p for p in t.problems)
    else:
        assert t.usage_complete and t.tokens_by_model[model] == alone.tokens
