"""Fault injection over real HTTP: error statuses and bodies, retries, stall, malformed, drop."""

from __future__ import annotations

import http.client
import json
import socket
import threading
import time
from typing import Any

import pytest

from copeca_action.scripted import Script, ScriptedServer
from tests.unit.scripted.wire import anthropic_body, anthropic_continue, openai_body, post


def faulty(*faults: dict[str, Any], steps: list[dict[str, Any]] | None = None) -> Script:
    return Script.model_validate({
        "id": "faulty", "match": {"prompt_contains": "go"},
        "steps": steps or [{"answer": "done", "usage": {"input": 10, "output": 2}}],
        "faults": list(faults)})


@pytest.mark.parametrize(("status", "kind"), [(400, "invalid_request_error"),
                                               (429, "rate_limit_error"),
                                               (500, "api_error"),
                                               (529, "overloaded_error")])
def test_http_fault_then_success_on_retry(status: int, kind: str) -> None:
    with ScriptedServer([faulty({"kind": "http", "status": status})]) as srv:
        first = post(srv.url, "/v1/messages", anthropic_body("go", stream=False))
        second = post(srv.url, "/v1/messages", anthropic_body("go", stream=False))
        [conv] = srv.served()
    assert first.status == status
    assert first.json() == {"type": "error", "error": {
        "type": kind, "message": f"scripted fault: HTTP {status}"}}
    if status in (429, 529):
        assert first.headers["retry-after"] == "0"
    assert second.status == 200 and second.json()["content"][0]["text"] == "done"
    # the retry is the same conversation; only the completed attempt counts
    assert conv.steps[0].attempts == 2 and conv.steps[0].faults == [f"http {status}"]
    assert conv.completed and conv.tokens.input == 10


def test_openai_error_body_and_every_attempt_failing() -> None:
    with ScriptedServer([faulty({"kind": "http", "status": 500, "times": None})]) as srv:
        statuses = [post(srv.url, "/v1/responses", openai_body("go")).status for _ in range(3)]
        body = post(srv.url, "/v1/responses", openai_body("go")).json()
        [conv] = srv.served()
    assert statuses == [500, 500, 500]
    assert body["error"]["type"] == "server_error"
    assert conv.steps[0].attempts == 4 and not conv.completed


def test_fault_on_a_later_step_only() -> None:
    steps = [{"tools": [{"bash": "true"}]}, {"answer": "done"}]
    with ScriptedServer([faulty({"kind": "http", "status": 529, "step": 1},
                                steps=steps)]) as srv:
        body = anthropic_body("go", stream=False)
        first = post(srv.url, "/v1/messages", body)
        assert first.status == 200
        nxt = anthropic_continue(body, first.json())
        assert post(srv.url, "/v1/messages", nxt).status == 529
        assert post(srv.url, "/v1/messages", nxt).status == 200


def test_probability_zero_never_faults() -> None:
    with ScriptedServer([faulty({"kind": "http", "status": 500, "probability": 0})]) as srv:
        assert all(post(srv.url, "/v1/messages", anthropic_body("go", cwd=f"/w{i}")).status
                   == 200 for i in range(5))


def test_malformed_frame_is_not_json() -> None:
    with ScriptedServer([faulty({"kind": "malformed"})]) as srv:
        events = post(srv.url, "/v1/messages", anthropic_body("go")).events()
        [conv] = srv.served()
    assert events[0][0] == "message_start"
    assert isinstance(events[-1][1], str)  # the broken frame
    assert "message_stop" not in [n for n, _ in events]
    assert conv.steps[0].faults == ["malformed"] and not conv.completed


@pytest.mark.parametrize("api", ["anthropic", "openai"])
def test_drop_cuts_the_connection_mid_body(api: str) -> None:
    path, body = (("/v1/messages", anthropic_body("go")) if api == "anthropic"
                  else ("/v1/responses", openai_body("go")))
    with ScriptedServer([faulty({"kind": "drop"})]) as srv, pytest.raises(
            (http.client.IncompleteRead, ConnectionError)):
        post(srv.url, path, body)


def test_stall_holds_the_stream_until_the_server_stops() -> None:
    srv = ScriptedServer([faulty({"kind": "stall"})]).start()
    got: dict[str, Any] = {}

    def client() -> None:
        try:
            got["resp"] = post(srv.url, "/v1/messages", anthropic_body("go"), timeout=30)
        except Exception as exc:  # the cut-off stream surfaces as a read error
            got["error"] = exc

    thread = threading.Thread(target=client)
    thread.start()
    deadline = time.monotonic() + 10
    while not srv.served() and time.monotonic() < deadline:  # the request has arrived
        thread.join(0.02)
    assert thread.is_alive(), "the stalled request should still be waiting"
    started = time.monotonic()
    srv.stop()
    thread.join(10)
    assert not thread.is_alive() and time.monotonic() - started < 5
    [conv] = srv.served()
    assert conv.steps[0].faults == ["stall"] and not conv.completed


def test_short_stall_then_the_full_reply() -> None:
    with ScriptedServer([faulty({"kind": "stall", "seconds": 0.2})]) as srv:
        started = time.monotonic()
        events = post(srv.url, "/v1/messages", anthropic_body("go")).events()
        elapsed = time.monotonic() - started
        [conv] = srv.served()
    assert elapsed >= 0.2
    assert events[-1][0] == "message_stop" and conv.completed


def test_a_client_hanging_up_on_a_stall_is_logged_at_once_with_what_it_was_billed() -> None:
    """A killed CLI: the server sees the hang-up, logs the request (not an hour later), and
    `billed` holds the usage `message_start` stated (input figures, one output token)."""
    script = faulty({"kind": "stall"}, steps=[{"answer": "done", "usage": {
        "input": 10, "output": 7, "cache_read": 30, "cache_write": 4}}])
    with ScriptedServer([script]) as srv:
        conn = http.client.HTTPConnection(srv.url.removeprefix("http://").split("/")[0],
                                          timeout=10)
        conn.request("POST", "/v1/messages", body=json.dumps(anthropic_body("go")),
                     headers={"content-type": "application/json"})
        resp = conn.getresponse()
        assert b"message_start" in resp.fp.readline() + resp.fp.readline()
        conn.sock.shutdown(socket.SHUT_RDWR)
        conn.close()
        deadline = time.monotonic() + 5
        while not srv.requests() and time.monotonic() < deadline:
            time.sleep(0.02)
        [entry] = srv.requests()
    assert entry["fault"] == "stall" and entry["completed"] is False
    assert entry["billed"] == {"input": 10, "output": 1, "cache_read": 30, "cache_write": 4}
    assert entry["usage"] == {"input": 10, "output": 7, "cache_read": 30, "cache_write": 4}


def test_a_completed_reply_is_billed_its_whole_usage() -> None:
    with ScriptedServer([faulty()]) as srv:
        post(srv.url, "/v1/responses", openai_body("go"))
        [entry] = srv.requests()
    assert entry["completed"] is True and entry["served_model"]
    assert entry["billed"] == entry["usage"] == {"input": 10, "output": 2, "cache_read": 0,
                                                 "cache_write": 0}
