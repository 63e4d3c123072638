"""The Transcript: what one agent run did, parsed from the CLI's own output."""

from __future__ import annotations

from typing import Any

from copeca_action._util.model import RecordModel
from copeca_action.records import Tokens


class ToolCall(RecordModel):
    """One tool call the agent made. `step` is the index of the model response that made it."""

    step: int
    id: str | None = None
    name: str
    """As the CLI names it: `Read`, `Bash`, `mcp__codesearch__search`, `exec_command`, ..."""
    input: dict[str, Any] = {}
    result: str | None = None
    is_error: bool = False


class Turn(RecordModel):
    """One model response (a step): its usage, counted once, and what it said and called."""

    index: int
    tokens: Tokens = Tokens()
    text: str = ""
    tool_calls: list[ToolCall] = []


class Transcript(RecordModel):
    """Parsed run. Unknown or truncated lines become `problems`, never exceptions."""

    parser: str
    cli_version: str | None = None
    model: str | None = None
    turns: list[Turn] = []
    tool_calls: list[ToolCall] = []
    tokens: Tokens = Tokens()
    """Totals over all turns."""
    tokens_by_model: dict[str, Tokens] = {}
    """Totals per model id (a CLI may call a second model, e.g. for sub-agents); priced apart."""
    served_model: str | None = None
    """The model the endpoint said it served, when the CLI's output shows it (Claude Code:
    each response's `model`); None when it does not (Codex)."""
    subagent_sessions: int = 0
    """Sub-agent sessions found beside the main one and added to the usage (Codex)."""
    usage_complete: bool = True
    """False when the output names model responses whose usage it does not give, or gives a
    count no run reaches (`_lines.PLAUSIBLE_COUNT`): the cost is then unknown, never 0."""
    answer: str | None = None
    """The final result text, not intermediate narration."""
    vendor_cost_usd: float | None = None
    duration_ms: int | None = None
    num_turns: int = 0
    """Model responses parsed (requests that returned), the same measure for every CLI."""
    is_error: bool = False
    ended: bool = False
    """The CLI's closing event is in its output (Claude Code's, Qwen Code's and Gemini's
    `result`; Codex's `task_complete`, or without its rollout `turn.completed`/`turn.failed`;
    OpenCode's last `step_finish` with reason `stop`): the CLI had finished, no model
    request was in flight, so the usage it states is the run's whole (a harness stopped or
    killed after it counts an exact cost, not a lower bound)."""
    api_error_status: int | None = None
    max_turns_reached: bool = False
    budget_exhausted: bool = False
    """The CLI stopped itself at the per-run budget (Claude Code's --max-budget-usd)."""
    stop_reason: str | None = None
    """How the CLI said the run ended, in its own words (Claude Code's `terminal_reason` or
    `subtype`, Codex's error info), for reports and debugging."""
    permission_denials: list[dict[str, Any]] = []
    error: str | None = None
    """The CLI's own error text (API error, failed turn), when it reported one."""
    session_id: str | None = None
    problems: list[str] = []
    hook_failures: list[str] = []
    """Hooks the CLI ran that gave no usable answer (Claude Code's `system` line tagged
    `hook_no_verdict`: the hook could not start, failed or timed out), one entry each."""
    tool_start_failures: list[str] = []
    """The tool under test did not start in this run (Claude Code's `system/init` lists an
    MCP server with status `failed`): the run is an infra error, not a non-adoption."""
