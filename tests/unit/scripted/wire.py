"""A tiny HTTP/SSE client for talking to the scripted server the way the CLIs do."""

from __future__ import annotations

import http.client
import json
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit


@dataclass
class Response:
    status: int
    headers: dict[str, str]
    raw: bytes

    def json(self) -> Any:
        return json.loads(self.raw)

    def events(self) -> list[tuple[str, Any]]:
        """SSE frames as (event name, parsed data); unparsable data is kept as a string."""
        out: list[tuple[str, Any]] = []
        for frame in self.raw.decode().split("\n\n"):
            name, data = "", ""
            for line in frame.splitlines():
                if line.startswith("event: "):
                    name = line[7:]
                elif line.startswith("data: "):
                    data += line[6:]
            if name or data:
                try:
                    out.append((name, json.loads(data)))
                except json.JSONDecodeError:
                    out.append((name, data))
        return out


def post(url: str, path: str, body: dict[str, Any], headers: dict[str, str] | None = None,
         timeout: float = 10) -> Response:
    parts = urlsplit(url)
    conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=timeout)
    try:
        conn.request("POST", path, json.dumps(body),
                     {"content-type": "application/json", **(headers or {})})
        resp = conn.getresponse()
        return Response(resp.status, {k.lower(): v for k, v in resp.getheaders()}, resp.read())
    finally:
        conn.close()


def request(url: str, method: str, path: str) -> Response:
    parts = urlsplit(url)
    conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=10)
    try:
        conn.request(method, path)
        resp = conn.getresponse()
        return Response(resp.status, {k.lower(): v for k, v in resp.getheaders()}, resp.read())
    finally:
        conn.close()


CLAUDE_TOOLS = [{"name": n, "input_schema": {"type": "object"}}
                for n in ("Bash", "Read", "Grep", "Glob", "Edit", "Write")]


def anthropic_body(prompt: str, *, history: list[dict[str, Any]] | None = None,
                   tools: list[dict[str, Any]] | None = None, stream: bool = True,
                   model: str = "claude-sonnet-4-5", cwd: str = "/work/repo",
                   extra_system: str = "") -> dict[str, Any]:
    """A request shaped like Claude Code's: system blocks, a `role: system` message."""
    return {"model": model, "stream": stream, "max_tokens": 1000,
            "system": [{"type": "text", "text": "You are an agent."},
                       {"type": "text", "text": f" - Primary working directory: {cwd}\n"}],
            "tools": CLAUDE_TOOLS if tools is None else tools,
            "messages": [{"role": "user", "content": [
                {"type": "text", "text": "<system-reminder>date</system-reminder>"},
                {"type": "text", "text": prompt}]},
                {"role": "system", "content": extra_system or "Available agent types: none"},
                *(history or [])]}


def anthropic_continue(body: dict[str, Any], message: dict[str, Any],
                       result: str = "ok") -> dict[str, Any]:
    """The next request after `message` (a non-stream reply): its tool_use blocks answered."""
    content = [b for b in message["content"]]
    results = [{"type": "tool_result", "tool_use_id": b["id"], "content": result}
               for b in content if b["type"] == "tool_use"]
    return {**body, "messages": [*body["messages"], {"role": "assistant", "content": content},
                                 {"role": "user", "content": results}]}


def openai_body(prompt: str, *, tools: list[dict[str, Any]] | None = None,
                history: list[dict[str, Any]] | None = None, stream: bool = True,
                model: str = "gpt-5", cwd: str = "/work/repo") -> dict[str, Any]:
    """A request shaped like Codex's: developer message, environment context, user prompt."""
    context = f"<environment_context><cwd>{cwd}</cwd></environment_context>"
    default_tools = [{"type": "function", "name": "exec_command",
                      "parameters": {"type": "object"}}]
    return {"model": model, "stream": stream,
            "tools": default_tools if tools is None else tools,
            "input": [{"type": "message", "role": "developer",
                       "content": [{"type": "input_text", "text": "You are Codex."}]},
                      {"type": "message", "role": "user", "content": [
                          {"type": "input_text", "text": context}]},
                      {"type": "message", "role": "user",
                       "content": [{"type": "input_text", "text": prompt}]},
                      *(history or [])]}


def openai_continue(body: dict[str, Any], output: list[dict[str, Any]]) -> dict[str, Any]:
    """The next request after a response's output items: each function call answered."""
    extra: list[dict[str, Any]] = []
    for item in output:
        extra.append(item)
        if item["type"] == "function_call":
            extra.append({"type": "function_call_output", "call_id": item["call_id"],
                          "output": "ok"})
    return {**body, "input": [*body["input"], *extra]}
