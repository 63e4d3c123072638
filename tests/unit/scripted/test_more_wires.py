"""The Chat Completions (Qwen Code) and Gemini (Gemini CLI) wires over real HTTP, and the
tool spellings of Gemini CLI, Qwen Code and OpenCode: shapes as the vendors document them,
conversations continued from the ids in history, usage as served, faults."""

from __future__ import annotations

import json
from typing import Any

import pytest

from copeca_action.scripted import Script, ScriptedServer
from copeca_action.scripted._actions import translate
from copeca_action.scripted._script import Action
from tests.unit.scripted.wire import post

SYSTEM = "You are an agent. I'm currently working in the directory: /work/repo\n"
TWO_STEP = Script.model_validate({
    "id": "two-step",
    "match": {"prompt_contains": "greeting"},
    "steps": [
        {"text": "Reading.", "tools": [{"read": "greeting.txt"}, {"bash": "ls"}],
         "usage": {"input": 1000, "output": 30, "cache_read": 500, "cache_write": 200}},
        {"answer": "It says hello.", "usage": {"input": 1300, "output": 20, "cache_read": 700}},
    ],
})
FAULTS = [Script.model_validate({
    "id": f"fault-{kind}", "match": {"prompt_contains": f"FAULT-{kind}"},
    "steps": [{"answer": "after the fault", "usage": {"input": 10, "output": 5}}],
    "faults": [fault]}) for kind, fault in [
        ("429", {"kind": "http", "status": 429, "times": 1}),
        ("500", {"kind": "http", "status": 500, "times": None}),
        ("malformed", {"kind": "malformed", "times": 1}),
        ("drop", {"kind": "drop", "times": 1})]]
CHAT_TOOLS = [{"type": "function", "function": {"name": name, "parameters": {
    "type": "object", "properties": {p: {"type": "string"} for p in params}}}}
    for name, params in [("read_file", ["file_path", "offset"]),
                         ("run_shell_command", ["command", "description"]),
                         ("edit", ["file_path", "old_string", "new_string"])]]
GEMINI_TOOLS = [{"functionDeclarations": [
    {"name": name, "parametersJsonSchema": {"type": "object", "properties": {
        p: {"type": "string"} for p in params}}}
    for name, params in [("read_file", ["file_path", "start_line"]),
                         ("run_shell_command", ["command", "dir_path"]),
                         ("replace", ["file_path", "instruction", "old_string",
                                      "new_string"])]]}]


@pytest.fixture
def server() -> Any:
    with ScriptedServer([TWO_STEP, *FAULTS], seed=1) as srv:
        yield srv


def sse(raw: bytes) -> list[Any]:
    """`data:` payloads (JSON, or the bare `[DONE]`)."""
    out: list[Any] = []
    for frame in raw.decode().split("\n\n"):
        for line in frame.splitlines():
            if line.startswith("data: "):
                data = line[6:]
                out.append(data if data == "[DONE]" else json.loads(data))
    return out


def chat_body(prompt: str, stream: bool = True) -> dict[str, Any]:
    return {"model": "qwen3-coder-plus", "stream": stream,
            "stream_options": {"include_usage": True}, "tools": CHAT_TOOLS,
            "messages": [{"role": "system", "content": SYSTEM},
                         {"role": "user", "content": [{"type": "text", "text": prompt}]}]}


def gemini_body(prompt: str) -> dict[str, Any]:
    return {"systemInstruction": {"role": "user", "parts": [{"text": SYSTEM}]},
            "tools": GEMINI_TOOLS, "generationConfig": {"temperature": 1},
            "contents": [{"role": "user", "parts": [{"text": prompt}]}]}


def gemini_url(stream: bool = True, model: str = "gemini-2.5-flash") -> str:
    method = "streamGenerateContent?alt=sse" if stream else "generateContent"
    return f"/v1beta/models/{model}:{method}"


def test_chat_stream_has_the_documented_chunk_sequence(server: ScriptedServer) -> None:
    resp = post(server.url, "/v1/chat/completions", chat_body("What does greeting say?"))
    assert resp.status == 200 and resp.headers["content-type"] == "text/event-stream"
    chunks = sse(resp.raw)
    assert chunks[-1] == "[DONE]"
    data = chunks[:-1]
    assert all(c["object"] == "chat.completion.chunk" for c in data)
    assert data[0]["choices"][0]["delta"]["role"] == "assistant"
    text = "".join(c["choices"][0]["delta"].get("content") or "" for c in data if c["choices"])
    assert text == "Reading."
    calls: dict[int, dict[str, str]] = {}
    for c in data:
        for tc in (c["choices"][0]["delta"].get("tool_calls") or []) if c["choices"] else []:
            slot = calls.setdefault(tc["index"], {"id": "", "name": "", "arguments": ""})
            slot["id"] += tc.get("id", "")
            slot["name"] += tc.get("function", {}).get("name", "")
            slot["arguments"] += tc.get("function", {}).get("arguments", "")
    assert [calls[k]["name"] for k in sorted(calls)] == ["read_file", "run_shell_command"]
    assert json.loads(calls[0]["arguments"]) == {"file_path": "/work/repo/greeting.txt"}
    assert json.loads(calls[1]["arguments"]) == {"command": "ls"}
    finish = [c["choices"][0]["finish_reason"] for c in data if c["choices"]]
    assert finish[-1] == "tool_calls" and set(finish[:-1]) == {None}
    # stream_options.include_usage: a last chunk with empty choices carries the usage
    assert data[-1]["choices"] == []
    assert data[-1]["usage"] == {"prompt_tokens": 1700, "completion_tokens": 30,
                                 "total_tokens": 1730,
                                 "prompt_tokens_details": {"cached_tokens": 500},
                                 "completion_tokens_details": {"reasoning_tokens": 0}}
    # the conversation continues from the tool-call ids sent back in history
    body = chat_body("What does greeting say?", stream=False)
    body["messages"] += [{"role": "assistant", "content": "Reading.", "tool_calls": [
        {"id": calls[k]["id"], "type": "function",
         "function": {"name": calls[k]["name"], "arguments": calls[k]["arguments"]}}
        for k in sorted(calls)]}] + [{"role": "tool", "tool_call_id": calls[k]["id"],
                                      "content": "ok"} for k in sorted(calls)]
    final = post(server.url, "/v1/chat/completions", body).json()
    assert final["object"] == "chat.completion"
    assert final["choices"][0]["message"] == {"role": "assistant", "content": "It says hello."}
    assert final["choices"][0]["finish_reason"] == "stop"
    [conv] = server.served()
    assert conv.api == "chat" and conv.completed and conv.answer == "It says hello."
    # no cache-write figure on this wire: served, and recorded, as plain input
    assert (conv.tokens.input, conv.tokens.cache_read, conv.tokens.cache_write,
            conv.tokens.output) == (1000 + 200 + 1300, 1200, 0, 50)


def test_gemini_stream_and_function_calls(server: ScriptedServer) -> None:
    resp = post(server.url, gemini_url(), gemini_body("What does greeting say?"))
    assert resp.status == 200
    chunks = sse(resp.raw)
    assert all("candidates" in c for c in chunks)
    parts = [p for c in chunks for p in c["candidates"][0]["content"]["parts"]]
    assert "".join(p.get("text", "") for p in parts) == "Reading."
    calls = [p["functionCall"] for p in parts if "functionCall" in p]
    assert [c["name"] for c in calls] == ["read_file", "run_shell_command"]
    assert calls[0]["args"] == {"file_path": "/work/repo/greeting.txt"}
    assert all(c["content"]["role"] == "model" for ch in chunks for c in ch["candidates"])
    assert chunks[-1]["candidates"][0]["finishReason"] == "STOP"
    assert "usageMetadata" not in chunks[0]
    assert chunks[-1]["usageMetadata"]["promptTokenCount"] == 1700
    assert chunks[-1]["usageMetadata"]["cachedContentTokenCount"] == 500
    assert chunks[-1]["usageMetadata"]["candidatesTokenCount"] == 30
    assert chunks[-1]["usageMetadata"]["thoughtsTokenCount"] == 0
    body = gemini_body("What does greeting say?")
    body["contents"] += [{"role": "model", "parts": [{"text": "Reading."},
                                                     *[{"functionCall": c} for c in calls]]},
                         {"role": "user", "parts": [{"functionResponse": {
                             "id": c["id"], "name": c["name"], "response": {"output": "x"}}}
                             for c in calls]}]
    final = post(server.url, gemini_url(stream=False), body).json()
    assert final["candidates"][0]["content"] == {"role": "model",
                                                 "parts": [{"text": "It says hello."}]}
    [conv] = server.served()
    assert conv.api == "gemini" and conv.model == "gemini-2.5-flash" and conv.completed
    assert (conv.tokens.input, conv.tokens.cache_read, conv.tokens.cache_write) == (
        2500, 1200, 0)


@pytest.mark.parametrize("wire", ["chat", "gemini"])
@pytest.mark.parametrize("status", [429, 500])
def test_http_faults_have_each_vendors_error_body(server: ScriptedServer, wire: str,
                                                  status: int) -> None:
    if wire == "chat":
        resp = post(server.url, "/v1/chat/completions", chat_body(f"FAULT-{status}"))
        assert resp.json()["error"]["code"] in ("rate_limit_exceeded", "server_error")
    else:
        resp = post(server.url, gemini_url(), gemini_body(f"FAULT-{status}"))
        assert resp.json()["error"]["code"] == status
        assert resp.json()["error"]["status"] in ("RESOURCE_EXHAUSTED", "INTERNAL")
    assert resp.status == status
    [conv] = server.served()
    assert not conv.completed and conv.steps[0].faults == [f"http {status}"]


@pytest.mark.parametrize("wire", ["chat", "gemini"])
@pytest.mark.parametrize("kind", ["malformed", "drop"])
def test_broken_streams_then_a_good_one(server: ScriptedServer, wire: str, kind: str) -> None:
    def call() -> bytes:
        if wire == "chat":
            return post(server.url, "/v1/chat/completions", chat_body(f"FAULT-{kind}")).raw
        return post(server.url, gemini_url(), gemini_body(f"FAULT-{kind}")).raw

    try:
        first = call()
    except Exception:  # a dropped connection may surface as a client error
        first = b""
    [conv] = server.served()
    assert not conv.completed and conv.steps[0].faults == [kind]
    if kind == "malformed":
        assert first and b"[DONE]" not in first
        with pytest.raises(ValueError):
            sse(first)
    second = sse(call())
    assert (second[-1] == "[DONE]") == (wire == "chat")
    [conv] = server.served()
    assert conv.completed and conv.steps[0].attempts == 2
    assert conv.answer == "after the fault"


def test_gemini_count_tokens(server: ScriptedServer) -> None:
    resp = post(server.url, "/v1beta/models/gemini-2.5-flash:countTokens",
                {"contents": [{"role": "user", "parts": [{"text": "x" * 400}]}]})
    assert resp.status == 200 and resp.json()["totalTokens"] > 0


@pytest.mark.parametrize(("params", "action", "expected"), [
    # Gemini CLI 0.61
    ({"read_file": ["file_path"], "run_shell_command": ["command"]}, {"read": "a.py"},
     ("read_file", {"file_path": "/w/a.py"})),
    ({"grep_search": ["pattern", "dir_path"]}, {"grep": {"pattern": "x", "path": "."}},
     ("grep_search", {"pattern": "x", "dir_path": "/w"})),
    ({"replace": ["file_path", "instruction", "old_string", "new_string"]},
     {"edit": {"path": "v.py", "old": "1", "new": "2"}},
     ("replace", {"file_path": "/w/v.py", "old_string": "1", "new_string": "2",
                  "instruction": "Replace the given text in v.py."})),
    # Qwen Code 0.24
    ({"edit": ["file_path", "old_string", "new_string"]},
     {"edit": {"path": "v.py", "old": "1", "new": "2"}},
     ("edit", {"file_path": "/w/v.py", "old_string": "1", "new_string": "2"})),
    ({"run_shell_command": ["command"]}, {"read": "a.py"},
     ("run_shell_command", {"command": "cat -- a.py"})),
    # OpenCode 1.18 (over the Anthropic wire, lower-case tools)
    ({"read": ["filePath"], "bash": ["command"]}, {"read": "a.py"},
     ("read", {"filePath": "/w/a.py"})),
    ({"edit": ["filePath", "oldString", "newString"]},
     {"edit": {"path": "v.py", "old": "1", "new": "2"}},
     ("edit", {"filePath": "/w/v.py", "oldString": "1", "newString": "2"})),
    ({"write": ["content", "filePath"]}, {"write": {"path": "n.txt", "content": "c"}},
     ("write", {"filePath": "/w/n.txt", "content": "c"})),
    ({"bash": ["command"]}, {"bash": "ls"}, ("bash", {"command": "ls"})),
])
def test_actions_take_each_clis_own_tool_and_parameter_names(
        params: dict[str, list[str]], action: dict[str, Any],
        expected: tuple[str, dict[str, Any]]) -> None:
    api = "anthropic" if any(k in params for k in ("read", "bash", "write")) else "gemini"
    got = translate(Action.model_validate(action), api, list(params), "/w", params)
    assert got == expected


@pytest.mark.parametrize(("offered", "expected"), [
    (["mcp__codesearch__search"], "mcp__codesearch__search"),   # Claude Code, Qwen Code
    (["mcp_codesearch_search"], "mcp_codesearch_search"),       # Gemini CLI
    (["codesearch_search"], "codesearch_search"),               # OpenCode
])
def test_mcp_tools_take_each_clis_spelling(offered: list[str], expected: str) -> None:
    action = Action.model_validate({"mcp": {"server": "codesearch", "tool": "search"}})
    assert translate(action, "gemini", ["read_file", *offered], "/w")[0] == expected


def test_an_edit_without_an_edit_tool_is_refused() -> None:
    from copeca_action.scripted._actions import ActionError
    action = Action.model_validate({"edit": {"path": "v.py", "old": "1", "new": "2"}})
    with pytest.raises(ActionError):
        translate(action, "chat", ["run_shell_command"], "/w", {"run_shell_command": []})
