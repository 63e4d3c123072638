"""The Anthropic Messages wire format: SSE events, the non-streaming message, error bodies."""

from __future__ import annotations

import json
from typing import Any

from copeca_action.scripted._reply import Event, Reply, split

ERROR_TYPES = {400: "invalid_request_error", 401: "authentication_error",
               403: "permission_error", 404: "not_found_error", 413: "request_too_large",
               429: "rate_limit_error", 500: "api_error", 502: "api_error", 503: "api_error",
               529: "overloaded_error"}


def _usage(reply: Reply, output: int) -> dict[str, Any]:
    u = reply.usage
    return {"input_tokens": u.input, "cache_creation_input_tokens": u.cache_write,
            "cache_read_input_tokens": u.cache_read, "output_tokens": output}


def _blocks(reply: Reply) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = []
    if reply.text:
        blocks.append({"type": "text", "text": reply.text})
    blocks.extend({"type": "tool_use", "id": c.id, "name": c.name, "input": c.input}
                  for c in reply.calls)
    return blocks


def _stop_reason(reply: Reply) -> str:
    return "end_turn" if reply.final else "tool_use"


def message(reply: Reply) -> dict[str, Any]:
    """The non-streaming response body."""
    return {"id": reply.message_id, "type": "message", "role": "assistant",
            "model": reply.model, "content": _blocks(reply), "stop_reason": _stop_reason(reply),
            "stop_sequence": None, "usage": _usage(reply, reply.usage.output)}


def events(reply: Reply) -> list[Event]:
    """The stream, as the API sends it: message_start carries input usage (output 1),
    message_delta the final output count (and the input figures again, as the API does)."""
    start: dict[str, Any] = {"id": reply.message_id, "type": "message", "role": "assistant",
             "model": reply.model, "content": [], "stop_reason": None, "stop_sequence": None,
             "usage": _usage(reply, 1)}
    out: list[Event] = [("message_start", {"type": "message_start", "message": start}),
                        ("ping", {"type": "ping"})]
    for index, block in enumerate(_blocks(reply)):
        first: dict[str, Any]
        deltas: list[dict[str, Any]]
        if block["type"] == "text":
            first = {"type": "text", "text": ""}
            deltas = [{"type": "text_delta", "text": t} for t in split(block["text"])]
        else:
            first = {"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}
            deltas = [{"type": "input_json_delta", "partial_json": p}
                      for p in split(json.dumps(block["input"]))]
        out.append(("content_block_start", {"type": "content_block_start", "index": index,
                                            "content_block": first}))
        out.extend(("content_block_delta", {"type": "content_block_delta", "index": index,
                                            "delta": d}) for d in deltas)
        out.append(("content_block_stop", {"type": "content_block_stop", "index": index}))
    out.append(("message_delta", {"type": "message_delta",
                                  "delta": {"stop_reason": _stop_reason(reply),
                                            "stop_sequence": None},
                                  "usage": _usage(reply, reply.usage.output)}))
    out.append(("message_stop", {"type": "message_stop"}))
    return out


def error_body(status: int, message: str) -> dict[str, Any]:
    return {"type": "error",
            "error": {"type": ERROR_TYPES.get(status, "api_error"), "message": message}}


def error_event(status: int, message: str) -> Event:
    return "error", error_body(status, message)
