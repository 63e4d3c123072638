"""TOML keys are written bare only when they are wholly bare-key characters: `$` in the
pattern matched before a final newline, so a key ending in one was written unquoted."""

from __future__ import annotations

import tomllib

from copeca_action.agent._toml import dumps


def test_a_toml_key_ending_in_a_newline_is_quoted() -> None:
    text = dumps({"mcp_servers": {"tool\n": {"command": "x"}, "plain": {"command": "y"}}})
    assert tomllib.loads(text)["mcp_servers"] == {"tool\n": {"command": "x"},
                                                  "plain": {"command": "y"}}
    assert "[mcp_servers.plain]" in text
