"""OpenCode's `opencode run --format json` output parsed into a Transcript.

What the real CLI prints (1.18.x, see tests/fixtures/transcripts/opencode_*): one JSON event
per line, each with `type`, `timestamp`, `sessionID` and a `part`:
- `step_start`: a model request begins (one step = one model response);
- `text`: the step's text (`part.text`);
- `tool_use`: a finished tool call (`part.tool`, `part.callID`, `part.state{status, input,
  output | error}`);
- `step_finish`: the step's usage (`part.tokens{input, output, reasoning, cache{read,
  write}}`, input uncached) and the cost OpenCode priced from its own model catalogue
  (`part.cost`), and `part.reason` (`tool-calls`, `stop`, …);
- `error`: the run failed (`error{name, data{message, statusCode}}`).
No model name and no CLI version are printed; no turn limit is reported apart.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from copeca_action.records import Tokens
from copeca_action.transcript._lines import (
    as_dict,
    as_int,
    as_str,
    read_events,
    sum_tokens,
    tool_input,
)
from copeca_action.transcript._model import ToolCall, Transcript, Turn

PARSER = "opencode_json"


def _tokens(raw: dict[str, Any]) -> Tokens:
    cache = as_dict(raw.get("cache"))
    return Tokens(input=as_int(raw.get("input")),
                  output=as_int(raw.get("output")) + as_int(raw.get("reasoning")),
                  cache_write=as_int(cache.get("write")), cache_read=as_int(cache.get("read")))


def parse_opencode_json(stdout_path: Path, config_dir: Path | None = None) -> Transcript:
    """Parse one run's stdout. `config_dir` is unused: everything is on stdout."""
    problems: list[str] = []
    turns: list[Turn] = []
    texts: list[str] = []
    calls: list[ToolCall] = []
    cost = 0.0
    costed = True
    session: str | None = None
    errors: list[str] = []
    status: int | None = None
    last_reason: str | None = None
    open_step = False
    first_ts: int | None = None
    last_ts: int | None = None

    def close(tokens: Tokens) -> None:
        turns.append(Turn(index=len(turns), tokens=tokens, text="".join(texts),
                          tool_calls=list(calls)))

    for number, event in read_events(stdout_path, problems):
        kind = event["type"]
        part = as_dict(event.get("part"))
        session = session or as_str(event.get("sessionID"))
        ts = event.get("timestamp")
        if isinstance(ts, int):
            first_ts = ts if first_ts is None else first_ts
            last_ts = ts
        if kind == "step_start":
            # A step that never finished was a failed request (OpenCode retries a broken
            # stream): what it printed is dropped, as its usage never came.
            open_step = True
            texts, calls = [], []
        elif kind == "text":
            texts.append(as_str(part.get("text")) or "")
        elif kind == "tool_use":
            state = as_dict(part.get("state"))
            failed = state.get("status") == "error"
            result = as_str(state.get("output")) if not failed else as_str(state.get("error"))
            calls.append(ToolCall(step=len(turns), id=as_str(part.get("callID")),
                                  name=as_str(part.get("tool")) or "?",
                                  input=tool_input(state.get("input")), result=result,
                                  is_error=failed))
        elif kind == "step_finish":
            close(_tokens(as_dict(part.get("tokens"))))
            open_step = False
            last_reason = as_str(part.get("reason"))
            step_cost = part.get("cost")
            if isinstance(step_cost, int | float) and not isinstance(step_cost, bool):
                cost += float(step_cost)
            else:
                costed = False
        elif kind == "error":
            error = as_dict(event.get("error"))
            data = as_dict(error.get("data"))
            errors.append(as_str(data.get("message")) or as_str(error.get("name"))
                          or "unknown error")
            code = data.get("statusCode")
            status = code if isinstance(code, int) else status
        else:
            problems.append(f"line {number}: unknown event type {kind!r}")
    if open_step and not errors:
        problems.append("the last step has no step_finish (cut short?)")
    tool_calls = [c for t in turns for c in t.tool_calls]
    tokens = sum_tokens([t.tokens for t in turns])
    answer = (turns[-1].text or None) if turns and last_reason == "stop" and not errors \
        else None
    vendor: float | None = round(cost, 10) if turns and costed else None
    if vendor == 0 and tokens.total:
        # OpenCode prices a model it has no catalogue entry for at 0: unknown, not free.
        problems.append("OpenCode reported cost 0 for non-zero tokens (model not in its "
                        "catalogue); its cost is ignored")
        vendor = None
    duration = last_ts - first_ts if first_ts is not None and last_ts is not None else None
    return Transcript(parser=PARSER, turns=turns, tool_calls=tool_calls, tokens=tokens,
                      answer=answer, vendor_cost_usd=vendor, duration_ms=duration,
                      num_turns=len(turns), is_error=bool(errors) or answer is None,
                      ended=bool(turns) and not open_step and last_reason == "stop",
                      api_error_status=status, error="; ".join(errors) or None,
                      stop_reason=last_reason, session_id=session, problems=problems)
