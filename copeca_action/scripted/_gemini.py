"""The Gemini API wire format (Gemini CLI): `generateContent` responses, the SSE stream of
`streamGenerateContent?alt=sse`, and error bodies.

Usage (`usageMetadata`): `promptTokenCount` counts cached tokens too,
`cachedContentTokenCount` the cached part, `candidatesTokenCount` the output
(`thoughtsTokenCount`, billed as output, is served as 0). The Gemini API has no cache-write
figure, so a step's `cache_write` is served (and recorded as served) as plain input.
"""

from __future__ import annotations

from typing import Any

from copeca_action.scripted._reply import Event, Reply, split
from copeca_action.scripted._script import Usage

STATUS = {400: "INVALID_ARGUMENT", 401: "UNAUTHENTICATED", 403: "PERMISSION_DENIED",
          404: "NOT_FOUND", 413: "INVALID_ARGUMENT", 429: "RESOURCE_EXHAUSTED",
          500: "INTERNAL", 502: "UNAVAILABLE", 503: "UNAVAILABLE", 529: "UNAVAILABLE"}


def carried(u: Usage) -> Usage:
    """The usage as this wire can state it: cache writes are plain input here."""
    return Usage(input=u.input + u.cache_write, output=u.output, cache_read=u.cache_read)


def usage(reply: Reply) -> dict[str, Any]:
    u = reply.usage
    prompt = u.input + u.cache_read + u.cache_write
    meta: dict[str, Any] = {"promptTokenCount": prompt, "candidatesTokenCount": u.output,
                            "thoughtsTokenCount": 0, "totalTokenCount": prompt + u.output,
                            "promptTokensDetails": [{"modality": "TEXT",
                                                     "tokenCount": prompt}]}
    if u.cache_read:
        meta["cachedContentTokenCount"] = u.cache_read
        meta["cacheTokensDetails"] = [{"modality": "TEXT", "tokenCount": u.cache_read}]
    return meta


def _parts(reply: Reply) -> list[dict[str, Any]]:
    parts: list[dict[str, Any]] = []
    if reply.text:
        parts.append({"text": reply.text})
    parts.extend({"functionCall": {"id": c.id, "name": c.name, "args": c.input}}
                 for c in reply.calls)
    return parts


def _body(reply: Reply, parts: list[dict[str, Any]], finish: str | None,
          with_usage: bool) -> dict[str, Any]:
    candidate: dict[str, Any] = {"content": {"role": "model", "parts": parts}, "index": 0}
    if finish:
        candidate["finishReason"] = finish
    body: dict[str, Any] = {"candidates": [candidate], "modelVersion": reply.model,
                            "responseId": reply.message_id}
    if with_usage:
        body["usageMetadata"] = usage(reply)
    return body


def response(reply: Reply) -> dict[str, Any]:
    """The `generateContent` body: one candidate, finish reason STOP, usage."""
    return _body(reply, _parts(reply), "STOP", True)


def events(reply: Reply) -> list[Event]:
    """`streamGenerateContent?alt=sse`: one `GenerateContentResponse` per `data:` line; text
    in a few pieces, each function call whole (as the API streams them), and the last chunk
    carrying `finishReason` and the usage."""
    chunks = [[{"text": piece}] for piece in split(reply.text or "")]
    calls = [p for p in _parts(reply) if "functionCall" in p]
    if calls:
        chunks.append(calls)
    if not chunks:
        chunks.append([{"text": ""}])
    out: list[Event] = [("", _body(reply, parts, None, False)) for parts in chunks[:-1]]
    out.append(("", _body(reply, chunks[-1], "STOP", True)))
    return out


def error_body(status: int, message: str) -> dict[str, Any]:
    return {"error": {"code": status, "message": message,
                      "status": STATUS.get(status, "INTERNAL")}}
