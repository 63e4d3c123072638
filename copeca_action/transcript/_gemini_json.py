"""Gemini CLI's `--output-format stream-json` output, with its session file, parsed into a
Transcript.

What the real CLI prints (0.61.x, see tests/fixtures/transcripts/gemini_*):
- stdout: `init` (`session_id`, `model`), `message` (`role` user/assistant, `content`, `delta`),
  `tool_use` (`tool_name`, `tool_id`, `parameters`), `tool_result` (`tool_id`, `status`,
  `output`, `error`), `error` (warnings and errors), and a final `result` (`status`
  success/error, `error{type, message}`, `stats{input_tokens, output_tokens, cached, input,
  tool_calls, duration_ms, models{MODEL: {...}}}`): run totals only, no per-turn usage;
- its session file, `$GEMINI_CLI_HOME/.gemini/tmp/<project>/chats/session-*.jsonl`: one
  record per message, a model message (`type: gemini`) rewritten as it completes, with
  `tokens{input (cached included), output, cached, thoughts, tool}`, `model` and
  `toolCalls[{id, name, args, result, status}]`. Turns and per-turn usage come from it.
Tool call ids are the API's `functionCall.id` prefixed by Gemini CLI with `<tool>__`; the
prefix is removed. Thoughts are counted as output (billed so); tool-use prompt tokens as input.
No cost is reported.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from copeca_action.records import Tokens
from copeca_action.transcript._lines import (
    add_tokens,
    as_dict,
    as_int,
    as_str,
    read_events,
    sum_tokens,
    tool_input,
)
from copeca_action.transcript._model import ToolCall, Transcript, Turn

PARSER = "gemini_json"
_STATUS_RE = re.compile(r"\"code\"\s*:\s*(\d{3})|\b(?:status|Status)\s*:?\s*(\d{3})\b")
_QUOTA_RE = re.compile(r"request a quota increase|RESOURCE_EXHAUSTED|[Qq]uota exceeded")
"""Gemini CLI's own wording for a 429 (its message carries no status number)."""
_MAX_TURNS_RE = re.compile(r"[Mm]aximum (?:session )?turns|max(?:imum)? session turns")


def _tokens(raw: dict[str, Any]) -> Tokens:
    cached = as_int(raw.get("cached"))
    return Tokens(input=max(0, as_int(raw.get("input")) - cached) + as_int(raw.get("tool")),
                  output=as_int(raw.get("output")) + as_int(raw.get("thoughts")),
                  cache_read=cached)


def _call_id(ident: str | None, name: str) -> str | None:
    if ident and ident.startswith(f"{name}__"):
        return ident[len(name) + 2:]
    return ident


def _result_text(result: Any) -> str | None:
    """The `output` (or `error`) of a recorded call's functionResponse parts."""
    texts: list[str] = []
    for part in result if isinstance(result, list) else []:
        response = as_dict(as_dict(as_dict(part).get("functionResponse")).get("response"))
        text = as_str(response.get("output")) or as_str(response.get("error"))
        if text is None and response:
            text = json.dumps(response)
        if text is not None:
            texts.append(text)
    return "\n".join(texts) if texts else None


def _session_messages(config_dir: Path | None, problems: list[str]) -> list[dict[str, Any]]:
    """The model messages of every session file, each in its last recorded form."""
    if config_dir is None:
        return []
    files = sorted((config_dir / ".gemini" / "tmp").glob("*/chats/session-*.json*"))
    messages: dict[str, dict[str, Any]] = {}
    for path in files:
        for number, line in enumerate(path.read_text(encoding="utf-8",
                                                     errors="replace").splitlines(), 1):
            try:
                record = json.loads(line)
            except ValueError:
                problems.append(f"{path.name} line {number}: not JSON")
                continue
            if isinstance(record, dict) and record.get("type") == "gemini" and record.get("id"):
                messages[f"{path.name}/{record['id']}"] = record
    return list(messages.values())


def parse_gemini_json(stdout_path: Path, config_dir: Path | None = None) -> Transcript:
    """Parse one run's stdout, and the session file in its config dir (`GEMINI_CLI_HOME`)."""
    problems: list[str] = []
    init: dict[str, Any] = {}
    result: dict[str, Any] | None = None
    warnings: list[str] = []
    answer_parts: list[str] = []
    stream_calls: dict[str, ToolCall] = {}
    for number, event in read_events(stdout_path, problems):
        kind = event["type"]
        if kind == "init":
            init = event
        elif kind == "message":
            if event.get("role") == "assistant":
                answer_parts.append(as_str(event.get("content")) or "")
        elif kind == "tool_use":
            answer_parts = []
            name = as_str(event.get("tool_name")) or "?"
            ident = _call_id(as_str(event.get("tool_id")), name)
            stream_calls[ident or str(len(stream_calls))] = ToolCall(
                step=0, id=ident, name=name, input=tool_input(event.get("parameters")))
        elif kind == "tool_result":
            answer_parts = []
        elif kind == "error":
            warnings.append(as_str(event.get("message")) or "error")
        elif kind == "result":
            result = event
        else:
            problems.append(f"line {number}: unknown event type {kind!r}")

    turns: list[Turn] = []
    by_model: dict[str, Tokens] = {}
    for message in _session_messages(config_dir, problems):
        tokens = _tokens(as_dict(message.get("tokens")))
        calls = []
        for raw in message.get("toolCalls") or []:
            call = as_dict(raw)
            name = as_str(call.get("name")) or "?"
            calls.append(ToolCall(step=len(turns), id=_call_id(as_str(call.get("id")), name),
                                  name=name, input=tool_input(call.get("args")),
                                  result=_result_text(call.get("result")),
                                  is_error=call.get("status") not in (None, "success")))
        content = message.get("content")
        text = content if isinstance(content, str) else ""
        turns.append(Turn(index=len(turns), tokens=tokens, text=text, tool_calls=calls))
        model = as_str(message.get("model"))
        if model:
            by_model[model] = add_tokens(by_model.get(model, Tokens()), tokens)

    stats = as_dict((result or {}).get("stats"))
    totals = Tokens(input=as_int(stats.get("input")), output=as_int(stats.get("output_tokens")),
                    cache_read=as_int(stats.get("cached")))
    tokens = sum_tokens([t.tokens for t in turns])
    if not turns and totals.total:
        problems.append("no session file: per-turn usage unknown, run totals from `result`")
        tokens = totals
        turns = [Turn(index=0, tokens=totals, tool_calls=list(stream_calls.values()))]
    elif result is not None and (tokens.input + tokens.cache_read, tokens.output) != (
            as_int(stats.get("input_tokens")), as_int(stats.get("output_tokens"))):
        problems.append(f"session file tokens {tokens} differ from the result's stats "
                        f"{stats.get('input_tokens')} in / {stats.get('output_tokens')} out")
    tool_calls = [c for t in turns for c in t.tool_calls]

    error_info = as_dict((result or {}).get("error"))
    status = (result or {}).get("status")
    error = as_str(error_info.get("message"))
    if result is None:
        error = error or "no result event (the CLI was killed or crashed)"
    failed = result is None or status != "success"
    max_turns = any(_MAX_TURNS_RE.search(w) for w in [*warnings, error or ""])
    if failed and error is None:
        error = "; ".join(warnings) or f"status {status!r}"
    code = None
    match = _STATUS_RE.search(error or "") if failed else None
    if match:
        code = int(match.group(1) or match.group(2))
    elif failed and _QUOTA_RE.search(error or ""):
        code = 429
    answer = "".join(answer_parts) or None if not failed else None
    return Transcript(parser=PARSER, model=as_str(init.get("model")), turns=turns,
                      tool_calls=tool_calls, tokens=tokens, tokens_by_model=by_model,
                      answer=answer, duration_ms=as_int(stats.get("duration_ms")) or None,
                      num_turns=len(turns), is_error=failed, api_error_status=code,
                      ended=result is not None, max_turns_reached=max_turns,
                      stop_reason=as_str(status),
                      error=error if failed else None, session_id=as_str(init.get("session_id")),
                      problems=problems)
