"""Codex's `codex exec --json` output (plus its session rollout file) parsed into a Transcript.

stdout (0.169, see tests/fixtures/transcripts/) has `thread.started`, `turn.started`,
`item.started/updated/completed` (agent_message, command_execution, mcp_tool_call, file_change,
reasoning, error, ...), `turn.completed` with the turn's summed usage, `turn.failed` and
`error`. It carries no per-request usage, no cost and no request count.

The rollout file `$CODEX_HOME/sessions/YYYY/MM/DD/rollout-*-<thread id>.jsonl` does: each
model response's items (`response_item`) are followed by a `token_usage_record` with that
response's usage, and `task_complete` holds the final message, the error and the duration.
When the rollout is there, turns and tool calls come from it; otherwise from stdout.
"""

from __future__ import annotations

import re
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

_STDOUT_IGNORED = frozenset({"turn.started", "item.updated"})
_ROLLOUT_TYPES = frozenset({"session_meta", "response_item", "event_msg", "token_usage_record",
                            "inter_agent_communication_metadata",
                            "turn_context", "world_state", "compacted"})
_STATUS_RE = re.compile(r"\b(?:status(?: code)?:?\s*|HTTP\s*)([1-5]\d\d)\b", re.IGNORECASE)
_ERROR_INFO_STATUS = {"internal_server_error": 500, "server_overloaded": 529,
                      "usage_limit_exceeded": 429, "unauthorized": 401, "bad_request": 400,
                      "context_window_exceeded": 400}


def openai_tokens(usage: dict[str, Any]) -> Tokens:
    """Responses-API usage (as Codex records it) as Tokens.

    `input_tokens` includes cached (and cache-write) tokens, so they are taken out of `input`;
    `output_tokens` already includes reasoning tokens.
    """
    cached = as_int(usage.get("cached_input_tokens"))
    details = as_dict(usage.get("input_tokens_details"))
    cached = cached or as_int(details.get("cached_tokens"))
    written = as_int(usage.get("cache_write_input_tokens")) or as_int(
        details.get("cache_write_tokens"))
    return Tokens(input=max(0, as_int(usage.get("input_tokens")) - cached - written),
                  output=as_int(usage.get("output_tokens")),
                  cache_read=cached, cache_write=written)


@dataclass
class _Stdout:
    thread_id: str | None = None
    calls: dict[str, ToolCall] = field(default_factory=dict)
    messages: list[str] = field(default_factory=list)
    last_kind: str | None = None
    """Kind of the last completed item: an answer is a message after the last tool call."""
    turn_tokens: list[Tokens] = field(default_factory=list)
    failed: bool = False
    errors: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


def parse_codex_json(stdout_path: Path, config_dir: Path | None = None) -> Transcript:
    """Parse stdout; use the rollout file under `config_dir` (CODEX_HOME) when it is there."""
    out = _read_stdout(stdout_path)
    rollout = _find_rollout(config_dir, out.thread_id) if config_dir else None
    if rollout is None:
        return _from_stdout(out)
    assert config_dir is not None
    return _with_subagents(_from_rollout(out, rollout), rollout, config_dir / "sessions")


# ---------------------------------------------------------------- stdout


def _read_stdout(path: Path) -> _Stdout:
    out = _Stdout()
    for number, event in read_events(path, out.problems):
        kind = event["type"]
        if kind == "thread.started":
            out.thread_id = as_str(event.get("thread_id"))
        elif kind in ("item.started", "item.completed"):
            _item(out, as_dict(event.get("item")), done=kind == "item.completed")
        elif kind == "turn.completed":
            out.turn_tokens.append(openai_tokens(as_dict(event.get("usage"))))
        elif kind == "turn.failed":
            out.failed = True
            message = as_str(as_dict(event.get("error")).get("message"))
            if message:
                out.errors.append(message)
        elif kind == "error":
            message = as_str(event.get("message"))
            if message and not message.startswith("Reconnecting"):
                out.errors.append(message)
        elif kind not in _STDOUT_IGNORED:
            out.problems.append(f"line {number}: unknown event type {kind!r}")
    return out


def _item(out: _Stdout, item: dict[str, Any], *, done: bool) -> None:
    itype = as_str(item.get("type")) or "?"
    iid = as_str(item.get("id")) or f"item{len(out.calls)}"
    if itype == "agent_message":
        if done:
            out.messages.append(as_str(item.get("text")) or "")
            out.last_kind = itype
        return
    if itype in ("reasoning", "todo_list"):
        return
    if itype == "error":
        if done and (message := as_str(item.get("message"))):
            out.problems.append(f"the CLI reported: {message}")
        return
    call = _stdout_call(itype, item)
    if call is None:
        return
    if done or iid not in out.calls:
        out.calls[iid] = call
    if done:
        out.last_kind = itype


def _stdout_call(itype: str, item: dict[str, Any]) -> ToolCall | None:
    status = as_str(item.get("status"))
    failed = status in ("failed", "declined")
    if itype == "command_execution":
        code = item.get("exit_code")
        return ToolCall(step=0, id=as_str(item.get("id")), name="exec_command",
                        input={"cmd": as_str(item.get("command")) or ""},
                        result=as_str(item.get("aggregated_output")),
                        is_error=failed or (isinstance(code, int) and code != 0))
    if itype == "mcp_tool_call":
        server, tool = as_str(item.get("server")) or "?", as_str(item.get("tool")) or "?"
        error = as_dict(item.get("error"))
        return ToolCall(step=0, id=as_str(item.get("id")), name=f"mcp__{server}__{tool}",
                        input=tool_input(item.get("arguments")),
                        result=result_text(as_dict(item.get("result")).get("content"))
                        or as_str(error.get("message")),
                        is_error=failed or bool(error))
    if itype == "file_change":
        return ToolCall(step=0, id=as_str(item.get("id")), name="apply_patch",
                        input={"changes": item.get("changes")}, is_error=failed)
    if itype == "web_search":
        return ToolCall(step=0, id=as_str(item.get("id")), name="web_search",
                        input={"query": item.get("query")})
    return ToolCall(step=0, id=as_str(item.get("id")), name=itype, input={})


def _from_stdout(out: _Stdout) -> Transcript:
    """No rollout: one step per `turn.completed` (Codex's turn), the calls made in it."""
    problems = [*out.problems, "no session rollout file: per-request usage is unknown "
                "(one step per Codex turn)"]
    tokens = sum_tokens(out.turn_tokens)
    turns = [Turn(index=i, tokens=t) for i, t in enumerate(out.turn_tokens)]
    last = max(0, len(turns) - 1)
    calls = [c.model_copy(update={"step": last}) for c in out.calls.values()]
    if turns:
        turns[-1] = turns[-1].model_copy(update={
            "tool_calls": calls, "text": "\n".join(out.messages)})
    completed = bool(out.turn_tokens) and not out.failed
    if not out.turn_tokens and not out.failed:
        problems.append("no `turn.completed` line: the run ended before the CLI finished")
    # Items without any usage line: model responses were served whose tokens are unknown.
    usage_complete = bool(out.turn_tokens) or not (out.calls or out.messages)
    answer = out.messages[-1] if completed and out.messages and \
        out.last_kind == "agent_message" else None
    error = "; ".join(dict.fromkeys(out.errors)) or None
    return Transcript(parser="codex_json", turns=turns, tool_calls=calls, tokens=tokens,
                      usage_complete=usage_complete,
                      answer=answer, num_turns=len(turns), is_error=not completed,
                      ended=bool(out.turn_tokens) or out.failed,
                      api_error_status=_status(error, None), error=error,
                      session_id=out.thread_id, problems=problems)


# ---------------------------------------------------------------- rollout


def _find_rollout(config_dir: Path, thread_id: str | None) -> Path | None:
    sessions = config_dir / "sessions"
    if not sessions.is_dir():
        return None
    found = sorted(sessions.rglob("rollout-*.jsonl"))
    if thread_id:
        mine = [p for p in found if p.stem.endswith(thread_id)]
        if mine:
            return mine[-1]
    return found[-1] if len(found) == 1 else None


@dataclass
class _Pending:
    texts: list[str] = field(default_factory=list)
    calls: list[ToolCall] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.texts or self.calls)


def _from_rollout(out: _Stdout, path: Path) -> Transcript:
    problems = list(out.problems)
    meta: dict[str, Any] = {}
    model: str | None = None
    complete: dict[str, Any] | None = None
    turns: list[Turn] = []
    calls: dict[str, ToolCall] = {}
    pending = _Pending()
    rollout_problems: list[str] = []
    for number, event in read_events(path, rollout_problems):
        kind, payload = event["type"], as_dict(event.get("payload"))
        if kind == "session_meta":
            meta = payload
        elif kind == "response_item":
            _response_item(payload, pending, calls, len(turns))
        elif kind == "token_usage_record":
            turns.append(Turn(index=len(turns),
                              tokens=openai_tokens(as_dict(payload.get("usage"))),
                              text="\n".join(pending.texts), tool_calls=pending.calls))
            pending = _Pending()
        elif kind == "event_msg":
            ptype = payload.get("type")
            if ptype == "task_complete":
                complete = payload
            elif ptype == "thread_settings_applied":
                model = as_str(as_dict(payload.get("thread_settings")).get("model")) or model
        elif kind not in _ROLLOUT_TYPES:
            rollout_problems.append(f"line {number}: unknown record type {kind!r}")
    problems.extend(f"rollout {p}" for p in rollout_problems)
    usage_complete = not pending
    if pending:
        problems.append("the last model response has no usage record (the run was cut off): "
                        "its tokens are unknown")
        turns.append(Turn(index=len(turns), text="\n".join(pending.texts),
                          tool_calls=pending.calls))
    # Results arrive after their call's turn was closed: attach them now.
    turns = [t.model_copy(update={"tool_calls": [calls.get(c.id or "", c)
                                                 for c in t.tool_calls]}) for t in turns]
    tool_calls = [c for t in turns for c in t.tool_calls]
    tokens = sum_tokens([t.tokens for t in turns])
    stdout_total = sum_tokens(out.turn_tokens)
    if out.turn_tokens and stdout_total != tokens:
        problems.append(f"rollout usage sums to {tokens.model_dump()} but stdout's "
                        f"turn.completed reports {stdout_total.model_dump()}")
    error_info = as_dict(complete.get("error")) if complete else {}
    error = as_str(error_info.get("message")) or "; ".join(dict.fromkeys(out.errors)) or None
    finished = complete is not None and not error_info and not out.failed
    if complete is None:
        problems.append("no `task_complete` record: the run ended before the CLI finished")
    duration = complete.get("duration_ms") if complete else None
    return Transcript(
        parser="codex_json",
        cli_version=as_str(meta.get("cli_version")),
        model=model,
        turns=turns,
        tool_calls=tool_calls,
        tokens=tokens,
        tokens_by_model={model: tokens} if model and tokens.total else {},
        usage_complete=usage_complete,
        answer=as_str(complete.get("last_agent_message")) if finished and complete else None,
        duration_ms=as_int(duration) if duration is not None else None,
        num_turns=len(turns),
        is_error=not finished,
        ended=complete is not None and not pending,
        api_error_status=_status(error, error_info.get("codex_error_info")),
        stop_reason=_reason(error_info.get("codex_error_info"))
        or ("completed" if finished else None),
        error=error,
        session_id=as_str(meta.get("id")) or out.thread_id,
        problems=problems,
    )


def _with_subagents(main: Transcript, rollout: Path, sessions: Path) -> Transcript:
    """Add the usage of every sub-agent session (`spawn_agent`) to the main one: each writes
    its own rollout file (`session_meta.parent_thread_id`) and stdout's `turn.completed`
    holds the main thread's usage only. Their turns and tool calls stay their own."""
    others = [p for p in sorted(sessions.rglob("rollout-*.jsonl"))
              if p != rollout]
    if not others:
        return main
    by_model = dict(main.tokens_by_model)
    total = main.tokens
    problems = list(main.problems)
    complete = main.usage_complete
    found = 0
    for path in others:
        sub = _subagent_usage(path)
        if sub is None:
            problems.append(f"{path.name}: a session that is not a sub-agent of this run "
                            "(left out)")
            continue
        found += 1
        model, tokens, sub_complete, sub_problems = sub
        problems.extend(f"sub-agent {path.name}: {p}" for p in sub_problems)
        complete = complete and sub_complete
        if not tokens.total:
            continue
        total = sum_tokens([total, tokens])
        if model is None:
            complete = False
            problems.append(f"sub-agent {path.name}: no model named; its tokens cannot be "
                            "priced")
            continue
        by_model[model] = sum_tokens([by_model.get(model, Tokens()), tokens])
    return main.model_copy(update={"tokens": total, "tokens_by_model": by_model,
                                   "subagent_sessions": found, "usage_complete": complete,
                                   "problems": problems})


def _subagent_usage(path: Path) -> tuple[str | None, Tokens, bool, list[str]] | None:
    """(model, summed usage, usage complete, problems) of one sub-agent rollout, or None
    when it is not a sub-agent session."""
    problems: list[str] = []
    model: str | None = None
    parent: str | None = None
    used: list[Tokens] = []
    open_items = False
    for _number, event in read_events(path, problems):
        kind, payload = event["type"], as_dict(event.get("payload"))
        if kind == "session_meta":
            parent = as_str(payload.get("parent_thread_id"))
        elif kind == "turn_context":
            model = as_str(payload.get("model")) or model
        elif kind == "event_msg" and payload.get("type") == "thread_settings_applied":
            model = as_str(as_dict(payload.get("thread_settings")).get("model")) or model
        elif kind == "response_item":
            ptype = payload.get("type")
            if ptype in ("function_call", "custom_tool_call", "local_shell_call") or (
                    ptype == "message" and payload.get("role") == "assistant"):
                open_items = True
        elif kind == "token_usage_record":
            used.append(openai_tokens(as_dict(payload.get("usage"))))
            open_items = False
    if parent is None:  # the config dir is the run's own: every child session is its own
        return None
    return model, sum_tokens(used), not open_items, problems


def _response_item(payload: dict[str, Any], pending: _Pending, calls: dict[str, ToolCall],
                   step: int) -> None:
    ptype = payload.get("type")
    if ptype == "message" and payload.get("role") == "assistant":
        content = payload.get("content")
        for block in map(as_dict, content if isinstance(content, list) else []):
            if block.get("type") == "output_text" and (text := as_str(block.get("text"))):
                pending.texts.append(text)
    elif ptype in ("function_call", "custom_tool_call", "local_shell_call"):
        call_id = as_str(payload.get("call_id")) or as_str(payload.get("id")) or \
            f"call{len(calls)}"
        raw = payload.get("arguments") if ptype == "function_call" else \
            {"input": payload.get("input")} if ptype == "custom_tool_call" else \
            as_dict(payload.get("action"))
        name = as_str(payload.get("name")) or "local_shell"
        namespace = as_str(payload.get("namespace"))
        if namespace:  # MCP tools: namespace `mcp__<server>`, name `<tool>`
            name = f"{namespace}__{name}"
        call = ToolCall(step=step, id=call_id, name=name, input=tool_input(raw))
        calls[call_id] = call
        pending.calls.append(call)
    elif ptype in ("function_call_output", "custom_tool_call_output"):
        call_id = as_str(payload.get("call_id")) or ""
        if call_id in calls:
            output = payload.get("output")
            text = result_text(output) if isinstance(output, str | list) else result_text(
                as_dict(output).get("content"))
            calls[call_id] = calls[call_id].model_copy(update={
                "result": text, "is_error": as_dict(output).get("success") is False})


def _reason(info: Any) -> str | None:
    """Codex's error info in one word: the string itself, or the key of a one-key object."""
    if isinstance(info, str):
        return info
    if isinstance(info, dict) and len(info) == 1:
        return str(next(iter(info)))
    return None


def _status(error: str | None, info: Any) -> int | None:
    """The HTTP status behind a Codex error: from its error info, else from the message."""
    stack = [info]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            code = item.get("http_status_code")
            if isinstance(code, int):
                return code
            stack.extend(item.values())
        elif isinstance(item, str) and item in _ERROR_INFO_STATUS:
            return _ERROR_INFO_STATUS[item]
    match = _STATUS_RE.search(error or "")
    return int(match.group(1)) if match else None
