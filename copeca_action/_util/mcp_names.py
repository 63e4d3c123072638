"""How agent CLIs spell an MCP server's tools, for rules written in Claude Code's spelling.

Claude Code, Codex (top level) and Qwen Code: `mcp__<server>__<tool>`; Gemini CLI:
`mcp_<server>_<tool>`; OpenCode: `<server>_<tool>`.
"""

from __future__ import annotations

import re

_CLAUDE_PREFIX = re.compile(r"mcp__([A-Za-z0-9-]+(?:_[A-Za-z0-9-]+)*)__(.*)", re.DOTALL)


def prefix_spellings(prefix: str) -> list[str]:
    """A tool-name prefix in Claude's spelling (`mcp__codesearch__`) and the same prefix as
    the other CLIs spell it (`mcp_codesearch_`, `codesearch_`); any other prefix as is."""
    match = _CLAUDE_PREFIX.fullmatch(prefix)
    if match is None:
        return [prefix]
    server, rest = match.groups()
    return [prefix, f"mcp_{server}_{rest}", f"{server}_{rest}"]


def has_prefix(name: str, prefix: str) -> bool:
    """The tool name starts with the prefix in any CLI's spelling."""
    return any(name.startswith(p) for p in prefix_spellings(prefix))
