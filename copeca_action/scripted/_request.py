"""What the server needs to know about one incoming request, for either API.

The server keeps no conversation state it cannot rebuild: the tool-call ids it emits encode the
conversation, its variant and the step (`…cpc_<conv>_<variant>_<step>_<k>`), and the CLIs send
them back in the history, so the next step is read from the request itself.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from typing import Any

from copeca_action.scripted._script import Api

ID_RE = re.compile(r"cpc_(\d+)_(\d+)_(\d+)_(\d+)")
AUX_K = 90
"""Tool-call index marking an auxiliary call (Claude Code's `ToolSearch` loading a deferred
tool) made before a step's own calls: the step is still to be served after it."""
_DEFERRED_RE = re.compile(r"before calling them:\n((?:[A-Za-z0-9_.:-]+\n)+)")
_MCP_RE = re.compile(r"\bmcp__[A-Za-z0-9_-]+?__[A-Za-z0-9_-]+")
_CWD_RES = (re.compile(r"Primary working directory: (\S+)"),
            re.compile(r"<cwd>([^<]+)</cwd>"),
            re.compile(r"Working directory: (\S+)"))


@dataclass(frozen=True)
class Position:
    """Where a request stands in a conversation this server started."""

    conv: int
    variant: int
    step: int
    """The step the last assistant turn served."""
    aux: bool = False
    """That turn was an auxiliary call, so the request asks for `step` itself, not `step + 1`."""

    @property
    def next_step(self) -> int:
        return self.step if self.aux else self.step + 1


@dataclass(frozen=True)
class RequestView:
    api: Api
    model: str
    stream: bool
    prompt: str
    """Every user-authored text block, joined (tool results excluded)."""
    everything: str
    """System prompt, instructions and all message text, joined."""
    tools: list[str]
    deferred: list[str]
    """Tools the CLI names but has not loaded (Claude Code's deferred tools, MCP tools among
    them): callable only after `ToolSearch` fetched their schema."""
    cwd: str | None
    namespaces: dict[str, tuple[str, str]]
    """Responses tools offered inside a `namespace` group (Codex's MCP servers): full name
    (`mcp__codesearch__search`) → (namespace, name), as a call must name them."""
    position: Position | None
    digest: str
    """Hash of the conversation's opening (system + first user turn), for first requests."""
    body_bytes: int


def make_id(api: Api, conv: int, variant: int, step: int, k: int) -> str:
    prefix = "toolu_" if api == "anthropic" else "call_"
    return f"{prefix}cpc_{conv}_{variant}_{step}_{k}"


def _list(value: Any) -> list[Any]:
    """A JSON array as a list; anything else (a client's malformed field) as empty."""
    return value if isinstance(value, list) else []


def _texts(content: Any) -> list[str]:
    """Plain text out of a content field (a string or a list of typed blocks)."""
    if isinstance(content, str):
        return [content]
    out: list[str] = []
    if isinstance(content, list):
        for block in content:
            if isinstance(block, dict) and block.get("type") in ("text", "input_text",
                                                                  "output_text"):
                text = block.get("text")
                if isinstance(text, str):
                    out.append(text)
    return out


def _latest_position(ids: list[str]) -> Position | None:
    best: Position | None = None
    for ident in ids:  # history order: the last of our ids is the latest turn
        m = ID_RE.search(ident)
        if m:
            conv, variant, step, k = (int(g) for g in m.groups())
            best = Position(conv, variant, step, aux=k >= AUX_K)
    return best


def _deferred(text: str, system: list[str]) -> list[str]:
    found: list[str] = []
    for m in _DEFERRED_RE.finditer(text):
        found.extend(line for line in m.group(1).splitlines() if line)
    if not found:
        for chunk in system:
            found.extend(_MCP_RE.findall(chunk))
    return list(dict.fromkeys(found))


def _find_cwd(text: str) -> str | None:
    for rx in _CWD_RES:
        m = rx.search(text)
        if m:
            return m.group(1).strip()
    return None


def _digest(parts: list[str]) -> str:
    return hashlib.sha256("\x00".join(parts).encode()).hexdigest()[:16]


def view_anthropic(body: dict[str, Any], size: int) -> RequestView:
    """Claude Code's Messages request: `system` blocks, `messages` (which may hold
    `role: system` entries), `tools[].name`."""
    system = _texts(body.get("system"))
    prompt: list[str] = []
    other: list[str] = []
    system_msgs: list[str] = []
    ids: list[str] = []
    opening: list[str] = list(system)
    seen_assistant = False
    for msg in _list(body.get("messages")):
        if not isinstance(msg, dict):
            continue
        role = msg.get("role")
        texts = _texts(msg.get("content"))
        if role == "user":
            prompt.extend(texts)
        else:
            other.extend(texts)
        if role == "system":
            system_msgs.extend(texts)
        if role == "assistant":
            seen_assistant = True
        if not seen_assistant:
            opening.extend(texts)
        content = msg.get("content")
        if role == "assistant" and isinstance(content, list):
            ids.extend(str(b.get("id", "")) for b in content
                       if isinstance(b, dict) and b.get("type") == "tool_use")
    tools = [str(t.get("name")) for t in _list(body.get("tools"))
             if isinstance(t, dict) and t.get("name")]
    everything = "\n".join(system + prompt + other)
    return RequestView(api="anthropic", model=str(body.get("model", "")),
                       stream=bool(body.get("stream")), prompt="\n".join(prompt),
                       everything=everything, tools=tools,
                       deferred=[d for d in _deferred(everything, system + system_msgs)
                                 if d not in tools],
                       cwd=_find_cwd(everything), namespaces={}, position=_latest_position(ids),
                       digest=_digest(opening), body_bytes=size)


def view_openai(body: dict[str, Any], size: int) -> RequestView:
    """Codex's Responses request: `instructions`, `input` items (messages with roles
    developer/user/assistant, `function_call` items carrying `call_id`), `tools`."""
    system = _texts(body.get("instructions"))
    prompt: list[str] = []
    other: list[str] = []
    ids: list[str] = []
    opening: list[str] = list(system)
    seen_call = False
    items = body.get("input")
    if isinstance(items, str):
        items = [{"type": "message", "role": "user", "content": items}]
    for item in _list(items):
        if not isinstance(item, dict):
            continue
        kind = item.get("type", "message")
        if kind in ("function_call", "custom_tool_call", "local_shell_call"):
            seen_call = True
            ids.append(str(item.get("call_id", "")))
            continue
        if kind != "message":
            continue
        texts = _texts(item.get("content"))
        if item.get("role") == "user":
            prompt.extend(texts)
        else:
            other.extend(texts)
        if not seen_call:
            opening.extend(texts)
    tools: list[str] = []
    namespaces: dict[str, tuple[str, str]] = {}
    for t in _list(body.get("tools")):
        if isinstance(t, dict):
            name = t.get("name") or t.get("type")
            if name:
                tools.append(str(name))
            for sub in _list(t.get("tools")):  # namespaced groups (Codex MCP servers)
                if isinstance(sub, dict) and sub.get("name") and name:
                    full = f"{name}__{sub['name']}"
                    tools.append(full)
                    namespaces[full] = (str(name), str(sub["name"]))
    everything = "\n".join(system + other + prompt)
    return RequestView(api="openai", model=str(body.get("model", "")),
                       stream=bool(body.get("stream")), prompt="\n".join(prompt),
                       everything=everything, tools=tools, deferred=[],
                       cwd=_find_cwd(everything), namespaces=namespaces,
                       position=_latest_position(ids),
                       digest=_digest(opening), body_bytes=size)


def parse_body(raw: bytes) -> dict[str, Any]:
    """The JSON request body, or ValueError with a reason a client can read."""
    try:
        body = json.loads(raw or b"{}")
    except json.JSONDecodeError as exc:
        raise ValueError(f"request body is not JSON: {exc}") from exc
    if not isinstance(body, dict):
        raise ValueError("request body must be a JSON object")
    return body
