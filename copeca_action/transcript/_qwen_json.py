"""Qwen Code's `--output-format stream-json` output parsed into a Transcript.

What the real CLI prints (0.24.x, see tests/fixtures/transcripts/qwen_*): Claude-style JSON
lines, with differences that matter:
- `system/init` carries `qwen_code_version`, `model`, `session_id`;
- one `assistant` line per content block, each with its own `message.id`; only the last line
  of a model response carries that response's `usage` (the others carry zeros), so a turn
  ends at the line with non-zero usage or a `stop_reason`;
- `usage.input_tokens` counts cached tokens too (the OpenAI `prompt_tokens`), with the cached
  part in `cache_read_input_tokens`; Chat Completions reports no cache writes;
- `user` lines carry `tool_result` blocks; `stream_event` lines are progress, ignored;
- the final `result`: `subtype`, `is_error`, `num_turns`, `result`, `usage`, `error`;
- MCP tools are deferred: called through the `tool_call` bridge, reported here as the inner
  call (`mcp__codesearch__search` with its arguments).
No cost is reported.
"""

from __future__ import annotations

import re
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

PARSER = "qwen_json"
BRIDGE_TOOL = "tool_call"
"""Qwen Code calls deferred (MCP) tools through `tool_call {name, arguments}`: such a call is
reported as the inner tool's call."""
_STATUS_RE = re.compile(r"\b([45]\d\d)\b")
_IGNORED = frozenset({"stream_event", "system"})
MAX_TURNS_TEXT = "Reached max session turns"
"""What Qwen Code 0.24 writes to stderr (and nothing to stdout) when --max-session-turns
stops it; the launcher keeps stderr beside stdout (`stderr.txt`)."""


def _stderr_tail(stdout_path: Path) -> str:
    try:
        return (stdout_path.parent / "stderr.txt").read_text(errors="replace")[-4000:]
    except OSError:
        return ""


def _tokens(usage: dict[str, Any]) -> Tokens:
    cached = as_int(usage.get("cache_read_input_tokens"))
    return Tokens(input=max(0, as_int(usage.get("input_tokens")) - cached),
                  output=as_int(usage.get("output_tokens")),
                  cache_write=as_int(usage.get("cache_creation_input_tokens")),
                  cache_read=cached)


def parse_qwen_json(stdout_path: Path, config_dir: Path | None = None) -> Transcript:
    """Parse one run's stdout. `config_dir` is unused: everything is on stdout."""
    problems: list[str] = []
    init: dict[str, Any] = {}
    result: dict[str, Any] | None = None
    turns: list[Turn] = []
    texts: list[str] = []
    calls: list[ToolCall] = []
    by_id: dict[str, ToolCall] = {}
    model: str | None = None
    for number, event in read_events(stdout_path, problems):
        kind = event["type"]
        if kind == "system" and event.get("subtype") == "init":
            init = event
        elif kind == "assistant":
            message = as_dict(event.get("message"))
            model = as_str(message.get("model")) or model
            for block in message.get("content") or []:
                block = as_dict(block)
                if block.get("type") == "text":
                    texts.append(as_str(block.get("text")) or "")
                elif block.get("type") == "tool_use":
                    name = as_str(block.get("name")) or "?"
                    args = tool_input(block.get("input"))
                    if name == BRIDGE_TOOL and as_str(args.get("name")):
                        name, args = str(args["name"]), tool_input(args.get("arguments"))
                    calls.append(ToolCall(step=len(turns), id=as_str(block.get("id")),
                                          name=name, input=args))
            tokens = _tokens(as_dict(message.get("usage")))
            if tokens.total or message.get("stop_reason"):
                turns.append(Turn(index=len(turns), tokens=tokens, text="".join(texts),
                                  tool_calls=calls))
                for call in calls:
                    if call.id:
                        by_id[call.id] = call
                texts, calls = [], []
        elif kind == "user":
            for block in as_dict(event.get("message")).get("content") or []:
                block = as_dict(block)
                if block.get("type") != "tool_result":
                    continue
                found = by_id.get(as_str(block.get("tool_use_id")) or "")
                if found is None:
                    problems.append(f"line {number}: a tool result for an unknown call")
                    continue
                updated = found.model_copy(update={"result": result_text(block.get("content")),
                                                   "is_error": bool(block.get("is_error"))})
                by_id[found.id or ""] = updated
        elif kind == "result":
            result = event
        elif kind not in _IGNORED:
            problems.append(f"line {number}: unknown event type {kind!r}")
    if texts or calls:
        problems.append("the last model response has no usage line (cut short?)")
    turns = [t.model_copy(update={"tool_calls": [by_id.get(c.id or "", c)
                                                 for c in t.tool_calls]}) for t in turns]
    tool_calls = [c for t in turns for c in t.tool_calls]
    tokens = sum_tokens([t.tokens for t in turns])
    res = result or {}
    if result is not None and _tokens(as_dict(res.get("usage"))) != tokens:
        problems.append(f"per-message usage {tokens} differs from the result's "
                        f"{_tokens(as_dict(res.get('usage')))}")
    subtype = as_str(res.get("subtype"))
    failed = result is None or bool(res.get("is_error")) or subtype != "success"
    error_info = res.get("error")
    error = (as_str(as_dict(error_info).get("message")) or as_str(error_info)
             or (None if not failed else as_str(res.get("result"))))
    max_turns = subtype == "error_max_turns"
    if result is None:
        error = "no result event (the CLI was killed or crashed)"
        said = _stderr_tail(stdout_path)
        if MAX_TURNS_TEXT in said:  # 0.24 prints no result line at its turn limit
            error, max_turns = MAX_TURNS_TEXT, True
    elif failed and error is None:
        error = subtype or "error"
    code = None
    if failed and error:
        match = _STATUS_RE.search(error)
        code = int(match.group(1)) if match else None
    answer = as_str(res.get("result")) if not failed else None
    model = model or as_str(init.get("model"))
    return Transcript(parser=PARSER, cli_version=as_str(init.get("qwen_code_version")),
                      model=model, turns=turns, tool_calls=tool_calls, tokens=tokens,
                      tokens_by_model={model: tokens} if model and tokens.total else {},
                      answer=answer or None,
                      duration_ms=as_int(res.get("duration_ms")) or None,
                      num_turns=len(turns), is_error=failed, api_error_status=code,
                      ended=result is not None, max_turns_reached=max_turns,
                      stop_reason=subtype, error=error if failed else None,
                      session_id=as_str(init.get("session_id")), problems=problems)
