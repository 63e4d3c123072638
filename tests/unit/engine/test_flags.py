from __future__ import annotations

from copeca_action.engine import budget_exhausted, flags_for
from copeca_action.transcript import Transcript


def test_budget_exhausted_from_the_cli_or_the_cap() -> None:
    assert budget_exhausted(Transcript(parser="stream_json", budget_exhausted=True), 0.0, None)
    assert budget_exhausted(Transcript(parser="stream_json", max_turns_reached=True), 0.0, None)
    assert budget_exhausted(Transcript(parser="stream_json"), 0.5, 0.5)
    assert not budget_exhausted(Transcript(parser="stream_json"), 0.4, 0.5)
    # an unknown cost is not judged against the cap (never read as $0)
    assert not budget_exhausted(Transcript(parser="stream_json"), None, 0.5)


def test_no_flags_on_a_quiet_run() -> None:
    assert flags_for(Transcript(parser="stream_json"), correct=True, cost_usd=0.0,
                     run_budget_usd=None, timed_out=False) == []


def test_tool_failed_only_when_every_call_to_the_tool_errored() -> None:
    from copeca_action.engine._validity import tool_failed
    from copeca_action.scenario import Mode
    from copeca_action.transcript import ToolCall

    mcp = Mode.model_validate({"name": "my-tool", "env": {"X": "1"}, "validity": {
        "kind": "tool_call_prefix", "prefix": "mcp__my-tool__"}})

    def run(*calls: tuple[str, bool]) -> Transcript:
        return Transcript(parser="stream_json", tool_calls=[
            ToolCall(step=i, name=name, is_error=err) for i, (name, err) in enumerate(calls)])

    dead = ("mcp__my-tool__search", True)
    assert tool_failed(mcp, run(dead, dead), True)
    assert tool_failed(mcp, run(("my-tool.search", True), ("Bash", False)), True)  # Codex
    assert not tool_failed(mcp, run(dead, ("mcp__my-tool__search", False)), True)  # one answered
    assert not tool_failed(mcp, run(("Bash", True)), False)  # never called: not adopted
    assert not tool_failed(mcp, run(), False)
    baseline = Mode.model_validate({"name": "baseline"})
    assert not tool_failed(baseline, run(dead), None)  # the baseline has no tool


def test_a_hook_that_gave_no_answer_is_a_failed_tool_when_it_went_unused() -> None:
    from copeca_action.engine._validity import tool_failed
    from copeca_action.scenario import Mode

    hooked = Mode.model_validate({"name": "h", "agent_config": {"hooks": {"PreToolUse": [
        {"matcher": "Bash", "hooks": [{"type": "command", "command": "/opt/h.sh"}]}]}},
        "validity": {"kind": "marker_file", "path": ".h"}})
    failed = Transcript(parser="stream_json", hook_failures=["PreToolUse hook gave no usable "
                                                             "answer"])
    assert tool_failed(hooked, failed, False)
    assert not tool_failed(hooked, failed, True)  # it ran at least once: adopted
    assert not tool_failed(hooked, Transcript(parser="stream_json"), False)  # just not used
    other = Mode.model_validate({"name": "e", "env": {"X": "1"},
                                 "validity": {"kind": "marker_file", "path": ".h"}})
    assert not tool_failed(other, failed, False)  # a hook that is not the tool under test
