"""One model response, independent of the wire format that carries it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from copeca_action.scripted._script import Usage


@dataclass(frozen=True)
class ToolUse:
    id: str
    name: str
    input: dict[str, Any]
    namespace: str | None = None
    """Responses API only: the tool's group; `name` is then the name inside it."""


@dataclass(frozen=True)
class Reply:
    model: str
    message_id: str
    text: str | None
    """Narration before tool calls, or the final answer."""
    calls: list[ToolUse] = field(default_factory=list)
    usage: Usage = field(default_factory=Usage)

    @property
    def final(self) -> bool:
        return not self.calls


Event = tuple[str, dict[str, Any]]
"""An SSE event: its name and its JSON data."""


def split(text: str, parts: int = 3) -> list[str]:
    """Cut text into a few pieces so clients see real incremental deltas."""
    if len(text) < 2 * parts:
        return [text] if text else []
    size = -(-len(text) // parts)
    return [text[i:i + size] for i in range(0, len(text), size)]
