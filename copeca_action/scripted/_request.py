"""What the server needs to know about one incoming request, for either API.

The server keeps no conversation state it cannot rebuild: the tool-call ids it emits encode the
conversation, its variant and the step (`…cpc_<conv>_<variant>_<step>_<k>`), and the CLIs send
them back in the history, so the next step is read from the request itself.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from typing import Any

from copeca_action.scripted._script import Api

ID_RE = re.compile(r"cpc_(\d+)_(\d+)_(\d+)_(\d+)")
BRIDGE_TOOL = "tool_call"
"""Qwen Code's tool that invokes a deferred tool: `tool_call {name, arguments}`."""
AUX_K = 90
"""Tool-call index marking an auxiliary call (Claude Code's `ToolSearch` loading a deferred
tool) made before a step's own calls: the step is still to be served after it."""
_DEFERRED_RE = re.compile(r"before calling them:\n((?:[A-Za-z0-9_.:-]+\n)+)")
_MCP_RE = re.compile(r"\bmcp__[A-Za-z0-9_-]+?__[A-Za-z0-9_-]+")
_CWD_RES = (re.compile(r"Primary working directory: (\S+)"),
            re.compile(r"<cwd>([^<]+)</cwd>"),
            re.compile(r"Working directory: (\S+)"),
            re.compile(r"Workspace Directories:\*\*\n\s*- (\S+)"),
            re.compile(r"working in the directory: (/\S+)"))


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
    params: dict[str, list[str]] = field(default_factory=dict)
    """Per offered tool, its parameter names (from its JSON schema): a CLI's own spelling
    (`file_path`, `filePath`, `dir_path`) is taken from what it declares."""


def make_id(api: Api, conv: int, variant: int, step: int, k: int) -> str:
    prefix = {"anthropic": "toolu_", "gemini": "fc_"}.get(api, "call_")
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
                       digest=_digest(opening), body_bytes=size, params=_anthropic_params(body))


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


def _schema_params(schema: Any) -> list[str]:
    props = schema.get("properties") if isinstance(schema, dict) else None
    return [str(k) for k in props] if isinstance(props, dict) else []


def _anthropic_params(body: dict[str, Any]) -> dict[str, list[str]]:
    return {str(t["name"]): _schema_params(t.get("input_schema"))
            for t in _list(body.get("tools")) if isinstance(t, dict) and t.get("name")}


def view_chat(body: dict[str, Any], size: int) -> RequestView:
    """A Chat Completions request (Qwen Code): `messages` with roles system/developer/user/
    assistant/tool, assistant `tool_calls[].id`, `tools[].function{name, parameters}`."""
    system: list[str] = []
    prompt: list[str] = []
    other: list[str] = []
    ids: list[str] = []
    opening: list[str] = []
    seen_call = False
    for msg in _list(body.get("messages")):
        if not isinstance(msg, dict):
            continue
        role = msg.get("role")
        texts = _texts(msg.get("content"))
        if role in ("system", "developer"):
            system.extend(texts)
        elif role == "user":
            prompt.extend(texts)
        elif role == "assistant":
            other.extend(texts)
            for call in _list(msg.get("tool_calls")):
                if isinstance(call, dict):
                    seen_call = True
                    ids.append(str(call.get("id", "")))
        if not seen_call and role != "tool":
            opening.extend(texts)
    params: dict[str, list[str]] = {}
    for t in _list(body.get("tools")):
        fn = t.get("function") if isinstance(t, dict) else None
        if isinstance(fn, dict) and fn.get("name"):
            params[str(fn["name"])] = _schema_params(fn.get("parameters"))
    tools = list(params)
    everything = "\n".join(system + prompt + other)
    # Qwen Code lists MCP tools by name only and has them called through its `tool_call`
    # bridge (after an optional `tool_search`): deferred, as Claude Code's are.
    deferred = ([d for d in dict.fromkeys(_MCP_RE.findall(everything)) if d not in params]
                if BRIDGE_TOOL in params else [])
    return RequestView(api="chat", model=str(body.get("model", "")),
                       stream=bool(body.get("stream")), prompt="\n".join(prompt),
                       everything=everything, tools=tools, deferred=deferred,
                       cwd=_find_cwd(everything), namespaces={},
                       position=_latest_position(ids), digest=_digest(opening),
                       body_bytes=size, params=params)


def view_gemini(body: dict[str, Any], size: int, model: str, stream: bool) -> RequestView:
    """A Gemini `generateContent` request (Gemini CLI): `systemInstruction.parts`, `contents`
    with roles user/model and parts `text`, `functionCall{id, name, args}`,
    `functionResponse`; `tools[].functionDeclarations[]{name, parametersJsonSchema |
    parameters}`. The model and streaming come from the URL."""
    instruction = body.get("systemInstruction")
    system = _parts_text(instruction.get("parts") if isinstance(instruction, dict)
                         else instruction)
    prompt: list[str] = []
    other: list[str] = []
    ids: list[str] = []
    opening: list[str] = list(system)
    seen_call = False
    for content in _list(body.get("contents")):
        if not isinstance(content, dict):
            continue
        parts = _list(content.get("parts"))
        texts = _parts_text(parts)
        if content.get("role", "user") == "user":
            prompt.extend(texts)
        else:
            other.extend(texts)
            for part in parts:
                call = part.get("functionCall") if isinstance(part, dict) else None
                if isinstance(call, dict):
                    seen_call = True
                    ids.append(str(call.get("id", "")))
        if not seen_call:
            opening.extend(texts)
    params: dict[str, list[str]] = {}
    for t in _list(body.get("tools")):
        for decl in _list(t.get("functionDeclarations") if isinstance(t, dict) else None):
            if isinstance(decl, dict) and decl.get("name"):
                schema = decl.get("parametersJsonSchema") or decl.get("parameters")
                params[str(decl["name"])] = _schema_params(schema)
    everything = "\n".join(system + prompt + other)
    return RequestView(api="gemini", model=model, stream=stream, prompt="\n".join(prompt),
                       everything=everything, tools=list(params), deferred=[],
                       cwd=_find_cwd(everything), namespaces={},
                       position=_latest_position(ids), digest=_digest(opening),
                       body_bytes=size, params=params)


def _parts_text(parts: Any) -> list[str]:
    """The `text` of Gemini parts, thoughts left out."""
    if isinstance(parts, str):
        return [parts]
    return [str(p["text"]) for p in _list(parts)
            if isinstance(p, dict) and isinstance(p.get("text"), str) and not p.get("thought")]


def parse_body(raw: bytes) -> dict[str, Any]:
    """The JSON request body, or ValueError with a reason a client can read."""
    try:
        body = json.loads(raw or b"{}")
    except json.JSONDecodeError as exc:
        raise ValueError(f"request body is not JSON: {exc}") from exc
    if not isinstance(body, dict):
        raise ValueError("request body must be a JSON object")
    return body
