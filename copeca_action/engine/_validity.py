"""Tool adoption: did the run really use the tool under test? One rule per mode."""

from __future__ import annotations

from pathlib import Path

from copeca_action._util.mcp_names import has_prefix
from copeca_action.scenario import Validity
from copeca_action.transcript import Transcript


def _mcp_names(name: str) -> list[str]:
    """A tool call's name as Claude spells MCP tools, plus Codex's `server.tool` forms."""
    names = [name]
    for sep in (".", "/", ":"):
        if sep in name and not name.startswith("mcp__"):
            server, _, tool = name.partition(sep)
            names.append(f"mcp__{server}__{tool}")
    return names


def tool_adopted(rule: Validity | None, transcript: Transcript, workdir: Path) -> bool | None:
    """None when the mode has no rule (the baseline); else whether the rule saw the tool."""
    if rule is None:
        return None
    if rule.kind == "tool_call_prefix":
        assert rule.prefix is not None
        return any(has_prefix(n, rule.prefix) for c in transcript.tool_calls
                   for n in _mcp_names(c.name))
    assert rule.path is not None
    path = Path(rule.path) if Path(rule.path).is_absolute() else workdir / rule.path
    if rule.kind == "marker_file":
        return path.exists()
    return proxy_count(path) >= rule.min_requests


def proxy_count(path: Path) -> int:
    """A counter file: one integer, or one line per request."""
    try:
        text = path.read_text().strip()
    except OSError:
        return 0
    if text.isdigit():
        return int(text)
    return len([line for line in text.splitlines() if line.strip()])
