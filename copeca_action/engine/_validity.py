"""Tool adoption: did the run really use the tool under test? One rule per mode."""

from __future__ import annotations

from pathlib import Path

from copeca_action._util.mcp import starts_with_mcp
from copeca_action.agent._probe import hook_commands
from copeca_action.scenario import Mode, Validity
from copeca_action.transcript import ToolCall, Transcript


def _mcp_names(name: str) -> list[str]:
    """A tool call's name as Claude spells MCP tools, plus Codex's `server.tool` forms."""
    names = [name]
    for sep in (".", "/", ":"):
        if sep in name and not name.startswith("mcp__"):
            server, _, tool = name.partition(sep)
            names.append(f"mcp__{server}__{tool}")
    return names


def _calls_to_tool(rule: Validity, transcript: Transcript) -> list[ToolCall]:
    """The run's calls to the tool under test, as a `tool_call_prefix` rule names it."""
    assert rule.prefix is not None
    prefix = rule.prefix
    return [c for c in transcript.tool_calls
            if any(starts_with_mcp(n, prefix) for n in _mcp_names(c.name))]


def tool_adopted(rule: Validity | None, transcript: Transcript, workdir: Path) -> bool | None:
    """None when the mode has no rule (the baseline); else whether the rule saw the tool."""
    if rule is None:
        return None
    if rule.kind == "tool_call_prefix":
        return bool(_calls_to_tool(rule, transcript))
    assert rule.path is not None
    path = Path(rule.path) if Path(rule.path).is_absolute() else workdir / rule.path
    if rule.kind == "marker_file":
        return path.exists()
    return proxy_count(path) >= rule.min_requests


def tool_failed(mode: Mode, transcript: Transcript, adopted: bool | None) -> bool:
    """The tool under test failed in the run, so that it could not serve the agent:

    - the agent called it and every call came back an error (a server that died: Claude
      Code answers each later call "Connection closed"); only a rule that names the
      tool's calls (`tool_call_prefix`) can tell. The run adopted the tool (the agent chose
      it);
    - or the mode's hooks gave no usable answer (they could not start, failed or timed
      out) and the rule did not see the tool: it went unused because it failed, which is
      not the agent's choice.

    The run still counts, cost and answer, as the tool's result; the flag lets the report
    say the tool broke."""
    rule = mode.validity
    if rule is not None and rule.kind == "tool_call_prefix":
        calls = _calls_to_tool(rule, transcript)
        if calls and all(c.is_error for c in calls):
            return True
    return (adopted is False and bool(transcript.hook_failures)
            and bool(hook_commands(mode.agent_config)))


def proxy_count(path: Path) -> int:
    """A counter file: one integer, or one line per request."""
    try:
        text = path.read_text().strip()
    except OSError:
        return 0
    if text.isdigit():
        return int(text)
    return len([line for line in text.splitlines() if line.strip()])
