"""Claude Code's `--output-format stream-json --verbose` output parsed into a Transcript.

What the real CLI prints (2.1.x, see tests/fixtures/transcripts/):
- `system/init` with `claude_code_version`, `model`, `session_id`;
- one `assistant` line per content block of a message, each repeating that message's id and
  its `message_start` usage (so usage is counted once per message id, and its `output_tokens`
  is a placeholder);
- with `--include-partial-messages`, `stream_event` lines carrying the raw stream, whose
  `message_delta` holds the message's real output tokens;
- `user` lines with tool results; a final `result` with totals, cost, answer and errors;
- a `system` line tagged `hook_no_verdict` for each hook that gave no usable answer (it
  could not start, failed or timed out; the CLI goes on without it).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from copeca_action.records import Tokens
from copeca_action.transcript._lines import (
    as_dict,
    as_int,
    as_str,
    read_events,
    result_text,
    sum_tokens,
    tool_input,
)
from copeca_action.transcript._model import ToolCall, Transcript, Turn

SYNTHETIC_MODEL = "<synthetic>"
"""The model name Claude Code gives messages it made up itself (API error notices)."""

_IGNORED_TYPES = frozenset({"system", "rate_limit_event", "keep_alive", "control_response",
                            "control_request", "tool_progress", "auth_status"})


def _usage_tokens(usage: dict[str, Any]) -> Tokens:
    written = as_int(usage.get("cache_creation_input_tokens"))
    split = as_dict(usage.get("cache_creation"))
    return Tokens(input=as_int(usage.get("input_tokens")),
                  output=as_int(usage.get("output_tokens")),
                  cache_write=written,
                  cache_read=as_int(usage.get("cache_read_input_tokens")),
                  cache_write_1h=min(written, as_int(split.get("ephemeral_1h_input_tokens"))))


@dataclass
class _Message:
    """One model response being assembled from its lines."""

    index: int
    model: str | None
    tokens: Tokens
    output_final: bool = False
    texts: list[str] = field(default_factory=list)
    calls: list[str] = field(default_factory=list)
    """Tool-use ids, in order (the calls live in `_State.calls`)."""


@dataclass
class _State:
    messages: dict[str, _Message] = field(default_factory=dict)
    calls: dict[str, ToolCall] = field(default_factory=dict)
    streaming: dict[str | None, str] = field(default_factory=dict)
    """The message id each stream (main agent or one sub-agent) is currently streaming."""
    result: dict[str, Any] | None = None
    init: dict[str, Any] = field(default_factory=dict)
    synthetic_errors: list[str] = field(default_factory=list)
    hook_failures: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)

    def message(self, mid: str, model: str | None, tokens: Tokens) -> _Message:
        found = self.messages.get(mid)
        if found is None:
            found = _Message(index=len(self.messages), model=model, tokens=tokens)
            self.messages[mid] = found
        return found


def parse_stream_json(stdout_path: Path, config_dir: Path | None = None) -> Transcript:
    """Parse one run's stdout. `config_dir` is unused: everything is on stdout."""
    state = _State()
    for number, event in read_events(stdout_path, state.problems):
        kind = event["type"]
        if kind == "assistant":
            _assistant(state, number, event)
        elif kind == "user":
            _user(state, event)
        elif kind == "stream_event":
            _stream_event(state, event)
        elif kind == "result":
            if state.result is not None:
                state.problems.append(f"line {number}: a second `result` line (kept the last)")
            state.result = event
        elif kind == "system":
            if event.get("subtype") == "init":
                state.init = event
            elif event.get("tag") == "hook_no_verdict":
                state.hook_failures.append(_hook_failure(event))
        elif kind not in _IGNORED_TYPES:
            state.problems.append(f"line {number}: unknown event type {kind!r}")
    return _finish(state)


def _assistant(state: _State, number: int, event: dict[str, Any]) -> None:
    message = as_dict(event.get("message"))
    model = as_str(message.get("model"))
    content = message.get("content")
    blocks = [as_dict(b) for b in content] if isinstance(content, list) else []
    if model == SYNTHETIC_MODEL:
        state.synthetic_errors.extend(t for b in blocks if (t := as_str(b.get("text"))))
        return
    mid = as_str(message.get("id"))
    if mid is None:
        mid = f"<line {number}>"
        state.problems.append(f"line {number}: an assistant message without an id "
                              "(counted as its own step)")
    msg = state.message(mid, model, _usage_tokens(as_dict(message.get("usage"))))
    for block in blocks:
        btype = block.get("type")
        if btype == "text":
            text = as_str(block.get("text"))
            if text:
                msg.texts.append(text)
        elif btype == "tool_use":
            call_id = as_str(block.get("id")) or f"{mid}#{len(msg.calls)}"
            if call_id in state.calls:
                continue
            name = as_str(block.get("name")) or "?"
            state.calls[call_id] = ToolCall(step=msg.index, id=call_id, name=name,
                                            input=tool_input(block.get("input")))
            msg.calls.append(call_id)


def _user(state: _State, event: dict[str, Any]) -> None:
    content = as_dict(event.get("message")).get("content")
    if not isinstance(content, list):
        return
    for block in map(as_dict, content):
        if block.get("type") != "tool_result":
            continue
        call_id = as_str(block.get("tool_use_id"))
        call = state.calls.get(call_id or "")
        if call is None:
            state.problems.append(f"a tool result for an unknown tool call {call_id!r}")
            continue
        state.calls[call.id or ""] = call.model_copy(update={
            "result": result_text(block.get("content")),
            "is_error": block.get("is_error") is True})


def _stream_event(state: _State, event: dict[str, Any]) -> None:
    raw = as_dict(event.get("event"))
    parent = as_str(event.get("parent_tool_use_id"))
    etype = raw.get("type")
    if etype == "message_start":
        message = as_dict(raw.get("message"))
        mid = as_str(message.get("id"))
        if mid is None:
            return
        state.message(mid, as_str(message.get("model")),
                      _usage_tokens(as_dict(message.get("usage"))))
        state.streaming[parent] = mid
    elif etype == "message_delta":
        msg = state.messages.get(state.streaming.get(parent, ""))
        usage = as_dict(raw.get("usage"))
        if msg is None or "output_tokens" not in usage:
            return
        update = {"output": as_int(usage.get("output_tokens"))}
        # Newer API versions repeat (final) input-side counts in message_delta.
        for key, name in (("input_tokens", "input"), ("cache_creation_input_tokens",
                          "cache_write"), ("cache_read_input_tokens", "cache_read")):
            if key in usage:
                update[name] = as_int(usage[key])
        if "cache_creation" in usage:
            update["cache_write_1h"] = as_int(
                as_dict(usage["cache_creation"]).get("ephemeral_1h_input_tokens"))
        msg.tokens = msg.tokens.model_copy(update=update)
        msg.output_final = True


def _finish(state: _State) -> Transcript:
    turns = [Turn(index=m.index, tokens=m.tokens, text="\n".join(m.texts),
                  tool_calls=[state.calls[c] for c in m.calls])
             for m in state.messages.values()]
    tool_calls = [c for t in turns for c in t.tool_calls]
    turn_sum = sum_tokens([t.tokens for t in turns])
    result = state.result or {}
    init = state.init
    model = as_str(init.get("model")) or next(
        (m.model for m in state.messages.values() if m.model), None)
    problems = state.problems
    if state.result is None:
        problems.append("no `result` line: the run ended before the CLI finished "
                        "(killed, crashed or timed out); tokens are the per-message sums")
    by_model = _model_usage(as_dict(result.get("modelUsage")))
    tokens = _totals(result, by_model, turn_sum, problems)
    served = _served(state)
    by_model = _by_served_model(by_model, state, served, problems)
    if not by_model and tokens.total:
        named = served[0] if served else model
        if named:
            by_model = {named: tokens}
    if state.result is not None and turns:
        if not all(m.output_final for m in state.messages.values()):
            problems.append("per-step output tokens are placeholders (no partial messages "
                            "on stdout); the totals come from the result")
        elif turn_sum != tokens:
            problems.append(f"per-message usage sums to {turn_sum.model_dump()} but the "
                            f"result reports {tokens.model_dump()}")
    is_error = result.get("is_error") is True
    subtype = as_str(result.get("subtype")) or ""
    errors = result.get("errors")
    error_text = "; ".join(e for e in errors if isinstance(e, str)) if isinstance(
        errors, list) else ""
    if is_error and not error_text:
        error_text = as_str(result.get("result")) or "; ".join(state.synthetic_errors)
    status = result.get("api_error_status")
    cost = result.get("total_cost_usd")
    duration = result.get("duration_ms")
    return Transcript(
        parser="stream_json",
        cli_version=as_str(init.get("claude_code_version")),
        model=model,
        served_model=served[0] if served else None,
        turns=turns,
        tool_calls=tool_calls,
        tokens=tokens,
        tokens_by_model=by_model,
        answer=None if is_error else as_str(result.get("result")),
        vendor_cost_usd=float(cost) if isinstance(cost, int | float) and cost >= 0 else None,
        duration_ms=as_int(duration) if duration is not None else None,
        num_turns=len(turns),
        is_error=is_error or (state.result is None),
        ended=state.result is not None,
        api_error_status=status if isinstance(status, int) and status > 0 else None,
        max_turns_reached=subtype == "error_max_turns"
        or result.get("terminal_reason") == "max_turns",
        budget_exhausted=subtype == "error_max_budget_usd"
        or result.get("terminal_reason") == "budget_exhausted",
        stop_reason=as_str(result.get("terminal_reason")) or subtype or None,
        permission_denials=[as_dict(d) for d in result.get("permission_denials") or []
                            if isinstance(d, dict)],
        error=error_text or None,
        session_id=as_str(result.get("session_id")) or as_str(init.get("session_id")),
        problems=problems,
        tool_start_failures=_mcp_failures(init),
        hook_failures=state.hook_failures,
    )


def _hook_failure(event: dict[str, Any]) -> str:
    """A `hook_no_verdict` line: which hook event, and whether it timed out."""
    detail = as_dict(event.get("hook_no_verdict"))
    hook = as_str(detail.get("hook_event")) or "a"
    return f"{hook} hook gave no usable answer" + (
        " (timed out)" if detail.get("timed_out") is True else "")


def _mcp_failures(init: dict[str, Any]) -> list[str]:
    """MCP servers Claude Code's `system/init` line reports as not connected
    (`{"name": "x", "status": "failed"}`): the run went without the tool under test."""
    servers = init.get("mcp_servers")
    out: list[str] = []
    for server in servers if isinstance(servers, list) else []:
        entry = as_dict(server)
        status = as_str(entry.get("status"))
        if status in ("failed", "needs-auth"):
            out.append(f"MCP server {as_str(entry.get('name')) or '?'!r} {status} to start"
                       if status == "failed" else
                       f"MCP server {as_str(entry.get('name')) or '?'!r} needs auth")
    return out


def _totals(result: dict[str, Any], by_model: dict[str, Tokens], turn_sum: Tokens,
            problems: list[str]) -> Tokens:
    """The run's totals: Σ `modelUsage` (every request, every model), else the result's
    `usage`, else the per-message sums. No field may be below the per-message sum: Claude
    Code 2.1.330 reports zero `usage` (but a right `modelUsage`) when it stops at its budget."""
    if by_model:
        total = sum_tokens(list(by_model.values()))
    elif "usage" in result:
        total = _usage_tokens(as_dict(result["usage"]))
    else:
        return turn_sum
    floor = {k: max(v, getattr(turn_sum, k)) for k, v in total.model_dump().items()}
    if floor != total.model_dump():
        problems.append(f"the result's totals {total.model_dump()} are below the per-message "
                        f"sums {turn_sum.model_dump()}; kept the larger of each")
        return Tokens(**floor)
    return total


def _served(state: _State) -> list[str]:
    """The models the endpoint named in its responses, the main agent's first."""
    return list(dict.fromkeys(m.model for m in state.messages.values()
                              if m.model and m.model != SYNTHETIC_MODEL))


def _by_served_model(by_model: dict[str, Tokens], state: _State, served: list[str],
                     problems: list[str]) -> dict[str, Tokens]:
    """Claude Code keys `modelUsage` by the model it asked for; the cost follows the model
    the endpoint answered with. A key no response named is renamed to the one served model
    no key names; without `modelUsage` the per-message usage is grouped by served model."""
    if not by_model:
        grouped: dict[str, Tokens] = {}
        for m in state.messages.values():
            if m.model and m.model != SYNTHETIC_MODEL:
                grouped[m.model] = sum_tokens([grouped.get(m.model, Tokens()), m.tokens])
        return {k: v for k, v in grouped.items() if v.total}
    unnamed = [k for k in by_model if k not in served]
    unkeyed = [m for m in served if m not in by_model]
    if not unnamed or not unkeyed:
        return by_model
    if len(unnamed) == 1 and len(unkeyed) == 1:
        out = dict(by_model)
        out[unkeyed[0]] = out.pop(unnamed[0])
        return out
    problems.append(f"the endpoint served {', '.join(unkeyed)} but usage is reported for "
                    f"{', '.join(unnamed)}: priced as reported")
    return by_model


def _model_usage(model_usage: dict[str, Any]) -> dict[str, Tokens]:
    """`modelUsage` (camelCase, per model) as Tokens; models with no tokens are left out."""
    out: dict[str, Tokens] = {}
    for name, raw in model_usage.items():
        usage = as_dict(raw)
        tokens = Tokens(input=as_int(usage.get("inputTokens")),
                        output=as_int(usage.get("outputTokens")),
                        cache_write=as_int(usage.get("cacheCreationInputTokens")),
                        cache_read=as_int(usage.get("cacheReadInputTokens")),
                        cache_write_1h=min(as_int(usage.get("cacheCreationInputTokens")),
                                           as_int(usage.get(
                                               "cacheCreationEphemeral1hInputTokens"))))
        if tokens.total:
            out[name] = tokens
    return out
