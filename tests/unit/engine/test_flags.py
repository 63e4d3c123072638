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
    from copeca_action.scenario import Validity
    from copeca_action.transcript import ToolCall

    rule = Validity(kind="tool_call_prefix", prefix="mcp__my-tool__")

    def run(*calls: tuple[str, bool]) -> Transcript:
        return Transcript(parser="stream_json", tool_calls=[
            ToolCall(step=i, name=name, is_error=err) for i, (name, err) in enumerate(calls)])

    dead = ("mcp__my-tool__search", True)
    assert tool_failed(rule, run(dead, dead))
    assert tool_failed(rule, run(("my-tool.search", True), ("Bash", False)))  # Codex spelling
    assert not tool_failed(rule, run(dead, ("mcp__my-tool__search", False)))  # one answered
    assert not tool_failed(rule, run(("Bash", True)))  # the tool never called: not adopted
    assert not tool_failed(rule, run())
    assert not tool_failed(None, run(dead))  # the baseline has no tool
    marker = Validity(kind="marker_file", path=".used")
    assert not tool_failed(marker, run(dead))  # a marker cannot tell which calls are the tool
