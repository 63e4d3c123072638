"""The scripted server over real HTTP: wire formats, conversation tracking, truth, log."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import pytest

from copeca_action.errors import InfraError
from copeca_action.scripted import Script, ScriptedServer
from tests.unit.scripted.wire import (
    anthropic_body,
    anthropic_continue,
    openai_body,
    openai_continue,
    post,
    request,
)


def script(data: dict[str, Any]) -> Script:
    return Script.model_validate(data)


TWO_STEP = script({
    "id": "two-step",
    "match": {"prompt_contains": "greeting"},
    "steps": [
        {"text": "Reading.", "tools": [{"read": "greeting.txt"}, {"bash": "ls"}],
         "usage": {"input": 1000, "output": 30, "cache_read": 500, "cache_write": 200}},
        {"answer": "It says hello.", "usage": {"input": 1300, "output": 20, "cache_read": 700}},
    ],
})


@pytest.fixture
def server() -> Any:
    with ScriptedServer([TWO_STEP], seed=1) as srv:
        yield srv


def names(events: list[tuple[str, Any]]) -> list[str]:
    return [n for n, _ in events]


def test_head_and_unknown_paths(server: ScriptedServer) -> None:
    assert request(server.url, "HEAD", "/").status == 200
    assert request(server.url, "GET", "/").json()["scripts"] == 1
    assert post(server.url, "/v2/other", {}).status == 404


def test_anthropic_stream_has_the_api_event_sequence(server: ScriptedServer) -> None:
    resp = post(server.url, "/v1/messages?beta=true", anthropic_body("What does greeting say?"))
    assert resp.status == 200 and resp.headers["content-type"] == "text/event-stream"
    events = resp.events()
    assert names(events) == [
        "message_start", "ping",
        "content_block_start", "content_block_delta", "content_block_delta",
        "content_block_delta", "content_block_stop",
        "content_block_start", *["content_block_delta"] * 3, "content_block_stop",
        "content_block_start", *["content_block_delta"] * 3, "content_block_stop",
        "message_delta", "message_stop"]
    start = events[0][1]["message"]
    assert start["usage"] == {"input_tokens": 1000, "cache_creation_input_tokens": 200,
                              "cache_read_input_tokens": 500, "output_tokens": 1}
    # tool input arrives as partial JSON that reassembles into the translated call
    blocks: dict[int, dict[str, Any]] = {}
    for name, data in events:
        if name == "content_block_start":
            blocks[data["index"]] = {**data["content_block"], "json": "", "text": ""}
        elif name == "content_block_delta":
            delta = data["delta"]
            key = "json" if delta["type"] == "input_json_delta" else "text"
            blocks[data["index"]][key] += delta.get("partial_json", delta.get("text", ""))
    assert blocks[0]["text"] == "Reading."
    assert blocks[1]["name"] == "Read"
    assert json.loads(blocks[1]["json"]) == {"file_path": "/work/repo/greeting.txt"}
    assert blocks[2]["name"] == "Bash" and json.loads(blocks[2]["json"])["command"] == "ls"
    delta = events[-2][1]
    assert delta["delta"]["stop_reason"] == "tool_use"
    assert delta["usage"]["output_tokens"] == 30


def test_anthropic_conversation_continues_from_the_ids_in_history(
        server: ScriptedServer) -> None:
    body = anthropic_body("What does greeting say?", stream=False)
    first = post(server.url, "/v1/messages", body).json()
    assert first["stop_reason"] == "tool_use"
    second = post(server.url, "/v1/messages", anthropic_continue(body, first)).json()
    assert second["stop_reason"] == "end_turn"
    assert second["content"] == [{"type": "text", "text": "It says hello."}]
    [conv] = server.served()
    assert conv.completed and conv.answer == "It says hello."
    assert [s.index for s in conv.steps] == [0, 1]
    assert (conv.tokens.input, conv.tokens.output, conv.tokens.cache_read,
            conv.tokens.cache_write) == (2300, 50, 1200, 200)
    assert [c.name for c in conv.tool_calls] == ["Read", "Bash"]
    assert [c.id for c in conv.tool_calls] == [b["id"] for b in first["content"][1:]]


def test_a_new_prompt_opens_a_new_conversation(server: ScriptedServer) -> None:
    for _ in range(3):
        post(server.url, "/v1/messages", anthropic_body("greeting?", stream=False))
    assert [c.conv for c in server.served()] == [1, 2, 3]


def test_openai_stream_has_the_responses_event_sequence(server: ScriptedServer) -> None:
    resp = post(server.url, "/v1/responses", openai_body("What does greeting say?"))
    events = resp.events()
    assert names(events)[:2] == ["response.created", "response.in_progress"]
    assert names(events)[-1] == "response.completed"
    assert [d["sequence_number"] for _, d in events] == list(range(len(events)))
    done = [d["item"] for n, d in events if n == "response.output_item.done"]
    assert [i["type"] for i in done] == ["message", "function_call", "function_call"]
    assert done[0]["content"][0]["text"] == "Reading."
    assert done[1]["name"] == "exec_command"
    assert json.loads(done[1]["arguments"]) == {"cmd": "cat -- greeting.txt"}
    args = "".join(d["delta"] for n, d in events
                   if n == "response.function_call_arguments.delta"
                   and d["item_id"] == done[1]["id"])
    assert args == done[1]["arguments"]
    usage = events[-1][1]["response"]["usage"]
    assert usage["input_tokens"] == 1000 + 500 + 200
    assert usage["input_tokens_details"] == {"cached_tokens": 500, "cache_write_tokens": 200}
    assert usage["output_tokens"] == 30
    second = post(server.url, "/v1/responses",
                  openai_continue(openai_body("What does greeting say?"), done)).events()
    final = [d["item"] for n, d in second if n == "response.output_item.done"]
    assert final[0]["content"][0]["text"] == "It says hello."
    [conv] = server.served()
    assert conv.api == "openai" and conv.completed and conv.tokens.input == 2300


def test_count_tokens_and_no_matching_script(server: ScriptedServer) -> None:
    counted = post(server.url, "/v1/messages/count_tokens", anthropic_body("x")).json()
    assert counted["input_tokens"] > 0
    resp = post(server.url, "/v1/messages", anthropic_body("unrelated prompt"))
    assert resp.status == 400
    assert resp.json()["error"]["type"] == "invalid_request_error"
    assert "no script matches" in resp.json()["error"]["message"]
    resp = post(server.url, "/v1/responses", openai_body("unrelated prompt"))
    assert resp.status == 400 and "no script matches" in resp.json()["error"]["message"]


def test_tool_arm_is_chosen_by_the_offered_tool(scripts_dir: Path) -> None:
    prompt = "What does greeting.txt say?"
    mcp = [{"name": "mcp__codesearch__search", "input_schema": {"type": "object"}}]
    with ScriptedServer(scripts_dir) as srv:
        post(srv.url, "/v1/messages", anthropic_body(prompt, stream=False))
        post(srv.url, "/v1/messages", anthropic_body(
            prompt, stream=False, tools=[*anthropic_body("")["tools"], *mcp]))
        codex_ns = [{"type": "function", "name": "exec_command"},
                    {"type": "namespace", "name": "mcp__codesearch",
                     "tools": [{"type": "function", "name": "search"}]}]
        out = post(srv.url, "/v1/responses", openai_body(prompt, tools=codex_ns,
                                                         stream=False)).json()["output"]
        scripts = [c.script for c in srv.served()]
    assert scripts == ["example/read-greeting/baseline", "example/read-greeting/codesearch",
                       "example/read-greeting/codesearch"]
    call = next(i for i in out if i["type"] == "function_call")
    assert (call["namespace"], call["name"]) == ("mcp__codesearch", "search")


def test_deferred_mcp_tool_is_loaded_with_tool_search_first(scripts_dir: Path) -> None:
    prompt = "What does greeting.txt say?"
    tools = [*anthropic_body("")["tools"], {"name": "ToolSearch", "input_schema": {}}]
    deferred = ("Use ToolSearch with query \"select:<name>\" to load tool schemas before "
                "calling them:\nWebFetch\nmcp__codesearch__search\n\nmore text")
    body = anthropic_body(prompt, stream=False, tools=tools, extra_system=deferred)
    with ScriptedServer(scripts_dir) as srv:
        first = post(srv.url, "/v1/messages", body).json()
        assert [b["name"] for b in first["content"] if b["type"] == "tool_use"] == [
            "ToolSearch"]
        assert first["content"][0]["input"]["query"] == "select:mcp__codesearch__search"
        loaded = [*tools, {"name": "mcp__codesearch__search", "input_schema": {}}]
        body2 = {**anthropic_continue(body, first), "tools": loaded}
        second = post(srv.url, "/v1/messages", body2).json()
        assert [b["name"] for b in second["content"] if b["type"] == "tool_use"] == [
            "mcp__codesearch__search"]
        third = post(srv.url, "/v1/messages", anthropic_continue(body2, second)).json()
        assert third["stop_reason"] == "end_turn"
        [conv] = srv.served()
    assert [(s.index, s.aux) for s in conv.steps] == [(0, True), (0, False), (1, False)]
    assert conv.steps[0].tokens.input > 0  # derived from the request: the example sets none
    assert [c.name for c in conv.tool_calls] == ["ToolSearch", "mcp__codesearch__search"]


def test_log_file_holds_one_json_line_per_request(tmp_path: Path) -> None:
    log = tmp_path / "requests.jsonl"
    with ScriptedServer([TWO_STEP], log_path=log) as srv:
        body = anthropic_body("greeting", stream=False)
        first = post(srv.url, "/v1/messages", body).json()
        post(srv.url, "/v1/messages", anthropic_continue(body, first))
        post(srv.url, "/v1/messages", anthropic_body("nothing matches"))
        in_memory = srv.requests()
    lines = [json.loads(line) for line in log.read_text().splitlines()]
    assert lines == in_memory
    assert [(e["step"], e["status"]) for e in lines[:2]] == [(0, 200), (1, 200)]
    assert lines[2]["status"] == 400 and lines[2]["error"] == "no script matches"
    assert "body" not in lines[0]


def test_many_concurrent_conversations(server: ScriptedServer) -> None:
    errors: list[str] = []

    def converse(i: int) -> None:
        body = anthropic_body("greeting", stream=False, cwd=f"/work/run-{i}")
        first = post(server.url, "/v1/messages", body).json()
        second = post(server.url, "/v1/messages", anthropic_continue(body, first)).json()
        if second["content"][0]["text"] != "It says hello.":
            errors.append(str(second))

    threads = [threading.Thread(target=converse, args=(i,)) for i in range(24)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    served = server.served()
    assert not errors
    assert len(served) == 24 and all(c.completed for c in served)
    assert len({c.conv for c in served}) == 24


def test_a_restarted_server_continues_a_conversation_from_its_history() -> None:
    body = anthropic_body("What does greeting say?", stream=False)
    with ScriptedServer([TWO_STEP], seed=1) as first_server:
        first = post(first_server.url, "/v1/messages", body).json()
    with ScriptedServer([TWO_STEP], seed=1) as second_server:
        second = post(second_server.url, "/v1/messages", anthropic_continue(body, first)).json()
        [conv] = second_server.served()
    assert second["content"] == [{"type": "text", "text": "It says hello."}]
    assert conv.steps[0].index == 1 and conv.completed


def test_a_busy_port_is_an_infra_error() -> None:
    with ScriptedServer([TWO_STEP]) as srv, pytest.raises(InfraError, match="cannot listen"):
        ScriptedServer([TWO_STEP], port=srv.port).start()


def test_tool_search_turn_reports_the_scripted_usage() -> None:
    scripted = script({"id": "mcp", "match": {"prompt_contains": "find"},
                       "tool_search_usage": {"input": 77, "output": 7},
                       "steps": [{"tools": [{"mcp": {"server": "cs", "tool": "q"}}]},
                                 {"answer": "found"}]})
    tools = [{"name": "ToolSearch", "input_schema": {}}]
    body = anthropic_body("find it", stream=False, tools=tools,
                          extra_system="before calling them:\nmcp__cs__q\n\n")
    with ScriptedServer([scripted]) as srv:
        reply = post(srv.url, "/v1/messages", body).json()
        [conv] = srv.served()
    assert reply["content"][0]["name"] == "ToolSearch"
    assert reply["usage"]["input_tokens"] == 77 and conv.steps[0].tokens.output == 7
