"""The Claude Code stream-json parser against real recorded output (see fixtures README)."""

from __future__ import annotations

import json
from pathlib import Path

from copeca_action.records import Tokens
from copeca_action.transcript import parse_stream_json

# What the stub served, step by step (input, cache_write, cache_read, output).
SERVED = [Tokens(input=1200, cache_write=300, cache_read=0, output=40),
          Tokens(input=150, cache_write=50, cache_read=1500, output=25),
          Tokens(input=90, cache_write=0, cache_read=1700, output=12)]
TOTAL = Tokens(input=1440, cache_write=350, cache_read=3200, output=77)


def test_each_message_counted_once_with_real_output_tokens(fixtures: Path) -> None:
    t = parse_stream_json(fixtures / "claude_ok.jsonl")
    assert [turn.tokens for turn in t.turns] == SERVED
    assert t.tokens == TOTAL
    assert t.tokens_by_model == {"claude-sonnet-4-5": TOTAL}
    assert t.num_turns == 3
    assert t.problems == []


def test_answer_is_the_result_not_the_narration(fixtures: Path) -> None:
    t = parse_stream_json(fixtures / "claude_ok.jsonl")
    assert t.turns[0].text == "I'll read the file first."
    assert t.answer == "The function is `greet` on line 1."
    assert not t.is_error and t.api_error_status is None
    assert t.cli_version == "2.1.330" and t.model == "claude-sonnet-4-5"
    assert t.vendor_cost_usd == 0.0077475
    assert t.duration_ms is not None and t.duration_ms > 0


def test_tool_calls_with_inputs_results_and_steps(fixtures: Path) -> None:
    t = parse_stream_json(fixtures / "claude_ok.jsonl")
    assert [(c.step, c.name) for c in t.tool_calls] == [(0, "Read"), (1, "Bash")]
    read, bash = t.tool_calls
    assert read.input["file_path"].endswith("/hello.py")
    assert read.result is not None and "def greet(name):" in read.result
    assert bash.input == {"command": "grep -n def hello.py"}
    assert bash.result == "1:def greet(name):" and not bash.is_error


def test_without_partial_messages_totals_still_come_from_the_result(fixtures: Path) -> None:
    t = parse_stream_json(fixtures / "claude_ok_no_partial.jsonl")
    assert t.tokens == TOTAL
    # The assistant lines only carry message_start's placeholder output count.
    assert [turn.tokens.output for turn in t.turns] == [1, 1, 1]
    assert [turn.tokens.input for turn in t.turns] == [1200, 150, 90]
    assert any("placeholders" in p for p in t.problems)


def test_permission_denial_is_recorded_and_the_call_failed(fixtures: Path) -> None:
    t = parse_stream_json(fixtures / "claude_deny.jsonl")
    assert [d["tool_name"] for d in t.permission_denials] == ["Write"]
    assert t.tool_calls[0].name == "Write" and t.tool_calls[0].is_error
    assert not t.is_error and t.answer == "The function is `greet` on line 1."


def test_a_hook_that_gave_no_answer_is_recorded(fixtures: Path) -> None:
    t = parse_stream_json(fixtures / "claude_hook_failed.jsonl")
    assert t.hook_failures == ["PreToolUse hook gave no usable answer"]
    assert not t.is_error and t.answer
    assert parse_stream_json(fixtures / "claude_ok.jsonl").hook_failures == []


def test_edit_calls(fixtures: Path) -> None:
    t = parse_stream_json(fixtures / "claude_edit.jsonl")
    assert [c.name for c in t.tool_calls] == ["Read", "Edit"]
    assert t.tool_calls[1].input["new_string"] == "def welcome"
    assert t.answer == "Renamed greet to welcome."


def test_api_errors_carry_their_status_and_no_answer(fixtures: Path) -> None:
    for status in (400, 429, 500):
        t = parse_stream_json(fixtures / f"claude_http{status}.jsonl")
        assert t.is_error and t.api_error_status == status
        assert t.answer is None
        assert t.error is not None and str(status) in t.error
        assert t.turns == [] and t.tokens == Tokens()  # the synthetic notice is no model turn
        assert t.vendor_cost_usd == 0


def test_max_turns(fixtures: Path) -> None:
    t = parse_stream_json(fixtures / "claude_maxturns.jsonl")
    assert t.max_turns_reached and t.is_error and t.answer is None
    assert t.tokens == SERVED[0] and t.num_turns == 1
    assert t.error == "Reached maximum number of turns (1)"


def test_killed_run_has_no_result_and_says_so(fixtures: Path) -> None:
    t = parse_stream_json(fixtures / "claude_stall.jsonl")
    assert t.is_error and t.answer is None and t.vendor_cost_usd is None
    assert any("no `result` line" in p for p in t.problems)


def test_repeated_lines_of_one_message_do_not_double_count(tmp_path: Path,
                                                           fixtures: Path) -> None:
    lines = (fixtures / "claude_ok_no_partial.jsonl").read_text().splitlines()
    doubled = [x for line in lines for x in ([line, line] if '"assistant"' in line else [line])]
    without_result = [x for x in doubled if '"type":"result"' not in x]
    path = tmp_path / "out.jsonl"
    path.write_text("\n".join(without_result) + "\n")
    t = parse_stream_json(path)
    assert [turn.tokens.input for turn in t.turns] == [1200, 150, 90]
    assert t.tokens.cache_read == 3200
    assert len(t.tool_calls) == 2


def test_truncated_last_line_is_a_problem(tmp_path: Path, fixtures: Path) -> None:
    text = (fixtures / "claude_ok.jsonl").read_text()
    path = tmp_path / "out.jsonl"
    path.write_text(text[: len(text) - 200])
    t = parse_stream_json(path)
    assert any("not JSON" in p for p in t.problems)
    assert any("no `result` line" in p for p in t.problems)
    assert t.answer is None
    # Per-message usage still counts what was served before the cut.
    assert t.tokens == TOTAL


def test_unknown_event_types_are_problems(tmp_path: Path) -> None:
    path = tmp_path / "out.jsonl"
    path.write_text(json.dumps({"type": "brand_new_event"}) + "\n[1, 2]\n{}\n")
    t = parse_stream_json(path)
    assert len(t.problems) == 4  # unknown type, array, no type, no result


def test_mcp_tool_calls(fixtures: Path) -> None:
    t = parse_stream_json(fixtures / "claude_mcp.jsonl")
    assert [c.name for c in t.tool_calls] == ["ToolSearch", "mcp__codesearch__search"]
    assert t.tool_calls[1].input == {"query": "greeting"}
    assert t.answer == "greeting.txt says: hello from the fixture"
    assert t.problems == [] and not t.is_error


def test_budget_stop_uses_model_usage_when_usage_is_zeroed(fixtures: Path) -> None:
    # Claude Code 2.1.330 stopped at --max-budget-usd reports `usage` all zero; `modelUsage`
    # and total_cost_usd hold the real figures (2400 × 3 + 900 × 3.75 + 35 × 15 µ$).
    t = parse_stream_json(fixtures / "claude_budget.jsonl")
    assert t.budget_exhausted and t.is_error and t.answer is None
    assert t.stop_reason == "budget_exhausted"
    assert t.tokens == Tokens(input=2400, cache_write=900, output=35)
    assert t.vendor_cost_usd == 0.0111
    assert t.error == "Reached maximum budget ($0.005)"


def test_stop_reasons(fixtures: Path) -> None:
    assert parse_stream_json(fixtures / "claude_ok.jsonl").stop_reason == "completed"
    assert parse_stream_json(fixtures / "claude_maxturns.jsonl").stop_reason == "max_turns"
    assert parse_stream_json(fixtures / "claude_http500.jsonl").stop_reason == "api_error"


def _line(kind: str, parent: str | None = None, **body: object) -> str:
    return json.dumps({"type": kind, "parent_tool_use_id": parent, **body})


def _start(mid: str, inp: int) -> dict[str, object]:
    return {"type": "message_start", "message": {"id": mid, "model": "claude-haiku-4-5",
                                                 "usage": {"input_tokens": inp,
                                                           "output_tokens": 1}}}


def test_sub_agent_streams_interleaved_with_the_main_one(tmp_path: Path) -> None:
    """A sub-agent's messages (parent_tool_use_id set) stream between the main agent's; each
    message_delta belongs to the message its own stream started."""
    lines = [
        _line("stream_event", None, event=_start("m1", 100)),
        _line("assistant", None, message={"id": "m1", "model": "claude-haiku-4-5",
                                          "usage": {"input_tokens": 100, "output_tokens": 1},
                                          "content": [{"type": "tool_use", "id": "t1",
                                                       "name": "Task", "input": {}}]}),
        _line("stream_event", "t1", event=_start("s1", 50)),
        _line("stream_event", None, event={"type": "message_delta",
                                           "usage": {"output_tokens": 30}}),
        _line("stream_event", "t1", event={"type": "message_delta",
                                           "usage": {"output_tokens": 7}}),
        _line("assistant", "t1", message={"id": "s1", "model": "claude-haiku-4-5",
                                          "usage": {"input_tokens": 50, "output_tokens": 1},
                                          "content": [{"type": "text", "text": "sub"}]}),
    ]
    path = tmp_path / "out.jsonl"
    path.write_text("\n".join(lines) + "\n")
    t = parse_stream_json(path)
    assert [(turn.tokens.input, turn.tokens.output) for turn in t.turns] == [(100, 30), (50, 7)]
    assert t.tokens == Tokens(input=150, output=37)  # no result line: per-message sums
