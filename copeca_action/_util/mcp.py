"""MCP tool names as each CLI spells them, for rules written in Claude Code's spelling.

Claude Code, Codex (top level) and Qwen Code name a server's tool `mcp__<server>__<tool>`;
Gemini CLI `mcp_<server>_<tool>`; OpenCode `<server>_<tool>`. Claude Code keeps the server's
name as written (`mcp__my-tool__search`); Codex replaces every character outside
`[A-Za-z0-9_]` with `_` (`my-tool` → namespace `mcp__my_tool`). A script, a validity prefix or
a mode written with `mcp__my-tool__` therefore matches every CLI's spelling.
"""

from __future__ import annotations

import re

_OUTSIDE = re.compile(r"[^A-Za-z0-9_]")
_CLAUDE_PREFIX = re.compile(r"mcp__([A-Za-z0-9-]+(?:_[A-Za-z0-9-]+)*)__(.*)", re.DOTALL)


def mcp_key(name: str) -> str:
    """`name` with every character Codex would not keep replaced by `_`."""
    return _OUTSIDE.sub("_", name)


def prefix_spellings(prefix: str) -> list[str]:
    """A tool-name prefix in Claude's spelling (`mcp__codesearch__`) and the same prefix as
    Gemini CLI and OpenCode spell it (`mcp_codesearch_`, `codesearch_`); any other prefix as
    is."""
    match = _CLAUDE_PREFIX.fullmatch(prefix)
    if match is None:
        return [prefix]
    server, rest = match.groups()
    return [prefix, f"mcp_{server}_{rest}", f"{server}_{rest}"]


def starts_with_mcp(name: str, prefix: str) -> bool:
    """Whether tool `name` starts with `prefix` as any CLI spells the server (Codex's
    normalised characters included)."""
    key = mcp_key(name)
    return any(name.startswith(p) or key.startswith(mcp_key(p))
               for p in prefix_spellings(prefix))
