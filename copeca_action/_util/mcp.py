"""MCP tool names as each CLI spells them.

Claude Code names a server's tool `mcp__<server>__<tool>` with the server's name as written
(`mcp__my-tool__search`); Codex replaces every character outside `[A-Za-z0-9_]` with `_`
(`my-tool` → namespace `mcp__my_tool`). Names are compared in that normalised form, so a
script, a validity prefix or a mode written with `my-tool` matches both CLIs.
"""

from __future__ import annotations

import re

_OUTSIDE = re.compile(r"[^A-Za-z0-9_]")


def mcp_key(name: str) -> str:
    """`name` with every character Codex would not keep replaced by `_`."""
    return _OUTSIDE.sub("_", name)


def starts_with_mcp(name: str, prefix: str) -> bool:
    """Whether tool `name` starts with `prefix`, as either CLI spells the server."""
    return name.startswith(prefix) or mcp_key(name).startswith(mcp_key(prefix))
