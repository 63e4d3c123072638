"""The OpenAI Chat Completions wire format (Qwen Code): SSE chunks, the plain response, errors.

Usage: `prompt_tokens` counts cached tokens too, `prompt_tokens_details.cached_tokens` the
cached part. Chat Completions has no cache-write figure, so a step's `cache_write` is served
(and recorded as served) as plain input: see `carried`.
"""

from __future__ import annotations

import json
import time
from typing import Any

from copeca_action.scripted import _openai
from copeca_action.scripted._reply import Event, Reply, split
from copeca_action.scripted._script import Usage

DONE: Event = ("[DONE]", {})
"""The stream's last line, `data: [DONE]`."""


def carried(u: Usage) -> Usage:
    """The usage as this wire can state it: cache writes are plain input here."""
    return Usage(input=u.input + u.cache_write, output=u.output, cache_read=u.cache_read)


def usage(reply: Reply) -> dict[str, Any]:
    u = reply.usage
    prompt = u.input + u.cache_read + u.cache_write
    return {"prompt_tokens": prompt, "completion_tokens": u.output,
            "total_tokens": prompt + u.output,
            "prompt_tokens_details": {"cached_tokens": u.cache_read},
            "completion_tokens_details": {"reasoning_tokens": 0}}


def _calls(reply: Reply) -> list[dict[str, Any]]:
    return [{"id": c.id, "type": "function",
             "function": {"name": c.name, "arguments": json.dumps(c.input)}}
            for c in reply.calls]


def _finish(reply: Reply) -> str:
    return "stop" if reply.final else "tool_calls"


def response(reply: Reply) -> dict[str, Any]:
    """The non-streaming `chat.completion` body."""
    message: dict[str, Any] = {"role": "assistant", "content": reply.text}
    if reply.calls:
        message["tool_calls"] = _calls(reply)
    return {"id": f"chatcmpl-{reply.message_id}", "object": "chat.completion",
            "created": int(time.time()), "model": reply.model,
            "choices": [{"index": 0, "message": message, "finish_reason": _finish(reply),
                         "logprobs": None}],
            "usage": usage(reply)}


def events(reply: Reply) -> list[Event]:
    """`chat.completion.chunk`s: role, text deltas, per tool call its id and name then
    argument pieces, the finish reason, a usage chunk with empty `choices` (as
    `stream_options.include_usage` asks), then `[DONE]`."""
    created = int(time.time())

    def chunk(delta: dict[str, Any] | None, finish: str | None = None,
              with_usage: bool = False) -> Event:
        data: dict[str, Any] = {"id": f"chatcmpl-{reply.message_id}",
                                "object": "chat.completion.chunk", "created": created,
                                "model": reply.model, "choices": []}
        if delta is not None:
            data["choices"] = [{"index": 0, "delta": delta, "finish_reason": finish,
                                "logprobs": None}]
        if with_usage:
            data["usage"] = usage(reply)
        return "", data

    out = [chunk({"role": "assistant", "content": ""})]
    out.extend(chunk({"content": piece}) for piece in split(reply.text or ""))
    for k, call in enumerate(_calls(reply)):
        fn = call["function"]
        out.append(chunk({"tool_calls": [{"index": k, "id": call["id"], "type": "function",
                                          "function": {"name": fn["name"],
                                                       "arguments": ""}}]}))
        out.extend(chunk({"tool_calls": [{"index": k, "function": {"arguments": piece}}]})
                   for piece in split(fn["arguments"]))
    out.append(chunk({}, _finish(reply)))
    out.append(chunk(None, with_usage=True))
    out.append(DONE)
    return out


def error_body(status: int, message: str) -> dict[str, Any]:
    return _openai.error_body(status, message)
