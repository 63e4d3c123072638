"""The server's record of what it served: the truth a parser's output is checked against."""

from __future__ import annotations

from typing import Any

from copeca_action._util.model import RecordModel
from copeca_action.records import Tokens


class ServedToolCall(RecordModel):
    id: str
    name: str
    """As sent to the CLI (`Read`, `exec_command`, `mcp__codesearch__search`, ...)."""
    input: dict[str, Any] = {}


class ServedStep(RecordModel):
    """One model turn of one conversation, over all the attempts the CLI made at it."""

    index: int
    """The script step (an inserted extra step counts)."""
    aux: bool = False
    """An auxiliary turn before the step: Claude Code's `ToolSearch` loading a deferred tool
    (MCP tools are deferred in current versions) that the step then calls."""
    attempts: int
    """Requests received for this step (retries included)."""
    faults: list[str] = []
    """What was served instead, per failed attempt: `http 529`, `stall`, `malformed`, `drop`."""
    completed: bool
    """A full response reached the client (its usage counts)."""
    tokens: Tokens = Tokens()
    """The usage reported in the completed response (zero if none completed)."""
    text: str | None = None
    tool_calls: list[ServedToolCall] = []
    final: bool = False


class ServedConversation(RecordModel):
    """One agent run as the server saw it."""

    conv: int
    script: str
    api: str
    model: str
    """The model the CLI asked for (its first request)."""
    served_model: str | None = None
    """The model the replies named (the script's `serves_model`, else `model`)."""
    variant: int
    wrong_answer: bool
    extra_step: bool
    steps: list[ServedStep] = []
    tokens: Tokens = Tokens()
    """Sum over completed steps: what a correct parser must report."""
    tool_calls: list[ServedToolCall] = []
    """Every tool call of completed steps, in order."""
    answer: str | None = None
    """The final answer, once served."""
    completed: bool = False
    """The final answer was served in full."""
