"""A hyphenated MCP server is spelled `mcp__my-tool__x` by Claude Code and `mcp__my_tool` (a
namespace) by Codex 0.169 (seen in its rollout: `"namespace":"mcp__my_tool"`). Scripts,
translation and the validity rule written with `my-tool` must match both."""

from __future__ import annotations

from pathlib import Path

from copeca_action._util.mcp import mcp_key, starts_with_mcp
from copeca_action.engine._validity import tool_adopted
from copeca_action.scenario import Validity
from copeca_action.scripted import Action
from copeca_action.scripted._actions import translate
from copeca_action.scripted._script import Match
from copeca_action.transcript import Transcript
from copeca_action.transcript._model import ToolCall


def test_both_spellings_match_the_prefix() -> None:
    assert mcp_key("mcp__my-tool__search") == "mcp__my_tool__search"
    assert starts_with_mcp("mcp__my_tool__search", "mcp__my-tool__")
    assert starts_with_mcp("mcp__my-tool__search", "mcp__my-tool__")
    assert not starts_with_mcp("mcp__other__search", "mcp__my-tool__")


def test_a_script_prefix_matches_codex_and_claude_offers() -> None:
    match = Match(prompt_contains="q", tool_prefix="mcp__my-tool__")
    for offered in (["exec_command", "mcp__my_tool__search"], ["Bash", "mcp__my-tool__search"]):
        assert match.accepts(api="openai", model="m", prompt="q", everything="q", tools=offered)
    assert not match.accepts(api="openai", model="m", prompt="q", everything="q",
                             tools=["exec_command"])


def test_an_mcp_action_is_sent_under_the_offered_spelling() -> None:
    action = Action.model_validate({"mcp": {"server": "my-tool", "tool": "search",
                                            "input": {"query": "x"}}})
    name, _ = translate(action, "openai", ["exec_command", "mcp__my_tool__search"], None)
    assert name == "mcp__my_tool__search"
    name, _ = translate(action, "anthropic", ["Bash", "mcp__my-tool__search"], None)
    assert name == "mcp__my-tool__search"


def test_validity_counts_a_codex_call_to_a_hyphenated_server(tmp_path: Path) -> None:
    rule = Validity(kind="tool_call_prefix", prefix="mcp__my-tool__")
    call = ToolCall(step=0, id="c", name="mcp__my_tool__search", input={})
    assert tool_adopted(rule, Transcript(parser="codex_json", tool_calls=[call]), tmp_path)
    other = ToolCall(step=0, id="c", name="mcp__codesearch__search", input={})
    assert not tool_adopted(rule, Transcript(parser="codex_json", tool_calls=[other]),
                            tmp_path)


def test_the_tool_search_turn_defaults_to_the_scripts_scale() -> None:
    """Claude Code's extra ToolSearch turn, unset in a script whose step sets usage: small and
    cached like the step, not derived from a request of tens of kB (a +51% 'regression')."""
    from copeca_action.scripted._script import Usage
    from copeca_action.scripted._server import tool_search_default

    step = Usage(input=400, output=60, cache_read=2700, cache_write=300)
    assert tool_search_default(step) == Usage(input=100, output=25, cache_read=3000)
    assert tool_search_default(None) is None
