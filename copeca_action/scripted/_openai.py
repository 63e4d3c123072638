"""The OpenAI Responses wire format: SSE events and error bodies.

`input_tokens` counts cached tokens too: the scripted usage maps as input_tokens = input +
cache_read + cache_write, with `input_tokens_details.cached_tokens` = cache_read and
`cache_write_tokens` = cache_write (Codex reads both).
"""

from __future__ import annotations

import json
import time
from typing import Any

from copeca_action.scripted._reply import Event, Reply, split

ERROR_CODES = {400: ("invalid_request_error", "invalid_request"),
               401: ("invalid_request_error", "invalid_api_key"),
               403: ("invalid_request_error", "forbidden"),
               404: ("invalid_request_error", "not_found"),
               413: ("invalid_request_error", "request_too_large"),
               429: ("rate_limit_error", "rate_limit_exceeded"),
               500: ("server_error", "server_error"), 502: ("server_error", "bad_gateway"),
               503: ("server_error", "server_overloaded"), 529: ("server_error", "overloaded")}


def usage(reply: Reply) -> dict[str, Any]:
    u = reply.usage
    total_in = u.input + u.cache_read + u.cache_write
    return {"input_tokens": total_in,
            "input_tokens_details": {"cached_tokens": u.cache_read,
                                     "cache_write_tokens": u.cache_write},
            "output_tokens": u.output, "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": total_in + u.output}


def _items(reply: Reply) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    if reply.text:
        items.append({"id": f"msg_{reply.message_id}", "type": "message", "status": "completed",
                      "role": "assistant",
                      "content": [{"type": "output_text", "text": reply.text,
                                   "annotations": []}]})
    for c in reply.calls:
        item = {"id": f"fc_{c.id}", "type": "function_call", "status": "completed",
                "call_id": c.id, "name": c.name, "arguments": json.dumps(c.input)}
        if c.namespace:
            item["namespace"] = c.namespace
        items.append(item)
    return items


def _response(reply: Reply, status: str, output: list[dict[str, Any]],
              with_usage: bool) -> dict[str, Any]:
    return {"id": f"resp_{reply.message_id}", "object": "response",
            "created_at": int(time.time()), "status": status, "model": reply.model,
            "output": output, "usage": usage(reply) if with_usage else None,
            "error": None, "incomplete_details": None}


def response(reply: Reply) -> dict[str, Any]:
    """The non-streaming response body."""
    return _response(reply, "completed", _items(reply), True)


def events(reply: Reply) -> list[Event]:
    """created, in_progress, per item added/deltas/done, completed (with usage)."""
    out: list[Event] = []

    def add(name: str, data: dict[str, Any]) -> None:
        out.append((name, {"type": name, "sequence_number": len(out), **data}))

    add("response.created", {"response": _response(reply, "in_progress", [], False)})
    add("response.in_progress", {"response": _response(reply, "in_progress", [], False)})
    items = _items(reply)
    for index, item in enumerate(items):
        if item["type"] == "message":
            text = item["content"][0]["text"]
            add("response.output_item.added", {"output_index": index,
                                               "item": {**item, "status": "in_progress",
                                                        "content": []}})
            part = {"type": "output_text", "text": "", "annotations": []}
            add("response.content_part.added", {"item_id": item["id"], "output_index": index,
                                                "content_index": 0, "part": part})
            for piece in split(text):
                add("response.output_text.delta", {"item_id": item["id"],
                                                   "output_index": index, "content_index": 0,
                                                   "delta": piece})
            add("response.output_text.done", {"item_id": item["id"], "output_index": index,
                                              "content_index": 0, "text": text})
            add("response.content_part.done", {"item_id": item["id"], "output_index": index,
                                               "content_index": 0,
                                               "part": {**part, "text": text}})
        else:
            add("response.output_item.added", {"output_index": index,
                                               "item": {**item, "status": "in_progress",
                                                        "arguments": ""}})
            for piece in split(item["arguments"]):
                add("response.function_call_arguments.delta",
                    {"item_id": item["id"], "output_index": index, "delta": piece})
            add("response.function_call_arguments.done",
                {"item_id": item["id"], "output_index": index, "arguments": item["arguments"]})
        add("response.output_item.done", {"output_index": index, "item": item})
    add("response.completed", {"response": _response(reply, "completed", items, True)})
    return out


def error_body(status: int, message: str) -> dict[str, Any]:
    kind, code = ERROR_CODES.get(status, ("server_error", "server_error"))
    return {"error": {"message": message, "type": kind, "param": None, "code": code}}


def error_event(status: int, message: str) -> Event:
    return "error", {"type": "error", "sequence_number": 0, **error_body(status, message)["error"]}
