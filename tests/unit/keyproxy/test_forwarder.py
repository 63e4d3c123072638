"""The key forwarder over real sockets: a loopback upstream records what reaches it."""

from __future__ import annotations

import http.client
import json
import socket
import statistics
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from copeca_action.keyproxy import FAMILIES, KeyForwarder, Route

KEY = "sk-test-real-key-b7c1d9e3f5a7"


class Upstream(ThreadingHTTPServer):
    """Records each request's headers, path and body; `release` holds a stream's end."""

    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _UpstreamHandler)
        self.seen: list[dict[str, Any]] = []
        self.release = threading.Event()
        self.last_sent = 0.0
        self.connections = 0
        threading.Thread(target=self.serve_forever, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"

    def get_request(self) -> tuple[socket.socket, Any]:
        self.connections += 1
        return super().get_request()


class _UpstreamHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_HEAD(self) -> None:
        self.send_response(200)
        self.send_header("content-length", "0")
        self.end_headers()

    def do_POST(self) -> None:
        server: Upstream = self.server  # type: ignore[assignment]
        body = self.rfile.read(int(self.headers.get("content-length") or 0))
        server.seen.append({"path": self.path, "headers": dict(self.headers.items()),
                            "body": body})
        if self.path.startswith("/v1/limited"):
            raw = b'{"error":"slow down"}'
            self.send_response(429)
            self.send_header("retry-after", "7")
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(raw)))
            self.end_headers()
            self.wfile.write(raw)
            return
        if self.path.startswith("/v1/overloaded"):
            self.send_response(529)
            self.send_header("content-length", "0")
            self.end_headers()
            return
        if self.path.startswith("/v1/stream"):
            self.send_response(200)
            self.send_header("content-type", "text/event-stream")
            self.send_header("transfer-encoding", "chunked")
            self.end_headers()
            for n, event in enumerate((b"event: a\ndata: {\"n\":1}\n\n",
                                       b"event: b\ndata: {\"n\":2}\n\n")):
                if n:  # the last chunk waits until the client has read the first
                    assert server.release.wait(10), "the first chunk never reached the client"
                    server.last_sent = time.monotonic()
                self.wfile.write(b"%x\r\n%s\r\n" % (len(event), event))
                self.wfile.flush()
            self.wfile.write(b"0\r\n\r\n")
            return
        raw = json.dumps({"echo": len(body)}).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("x-request-id", "req_123")
        self.send_header("content-length", str(len(raw)))
        self.end_headers()
        self.wfile.write(raw)


@pytest.fixture
def upstream() -> Iterator[Upstream]:
    server = Upstream()
    yield server
    server.shutdown()
    server.server_close()


def _forwarder(upstream: str, family: str = "anthropic", vendor: bool = False) -> KeyForwarder:
    return KeyForwarder([Route(name="r", family=FAMILIES[family], upstream=upstream, key=KEY,
                               vendor=vendor)], env={})


def _post(url: str, path: str, headers: dict[str, str], body: bytes = b"{}",
          method: str = "POST") -> http.client.HTTPResponse:
    host, port = url.removeprefix("http://").split("/", 1)[0].split(":")
    conn = http.client.HTTPConnection(host, int(port), timeout=20)
    conn.request(method, path, body=body if method != "HEAD" else None, headers=headers)
    return conn.getresponse()


def test_the_placeholder_becomes_the_key_and_the_bytes_go_on_unchanged(
        upstream: Upstream) -> None:
    with _forwarder(upstream.url, vendor=True) as fwd:
        body = json.dumps({"messages": [{"role": "user", "content": "hé \u2603"}]}).encode()
        resp = _post(fwd.agent_url("r"), "/v1/messages?beta=true",
                     {"x-api-key": fwd.placeholder, "anthropic-version": "2023-06-01",
                      "x-copeca-run": "run-1", "content-type": "application/json"}, body)
        assert resp.status == 200 and json.loads(resp.read()) == {"echo": len(body)}
        assert resp.getheader("x-request-id") == "req_123"
    seen = upstream.seen[0]
    assert seen["path"] == "/v1/messages?beta=true" and seen["body"] == body
    assert seen["headers"]["x-api-key"] == KEY
    assert seen["headers"]["Host"] == upstream.url.removeprefix("http://")
    assert "x-copeca-run" not in seen["headers"]  # a vendor is not told the run id
    assert fwd.placeholder.startswith("copeca-forwarded-") and KEY not in fwd.placeholder


def test_a_users_endpoint_keeps_the_run_header_and_its_path(upstream: Upstream) -> None:
    with _forwarder(upstream.url + "/gateway", family="openai") as fwd:
        assert fwd.agent_url("r").endswith("/gateway")
        resp = _post(fwd.agent_url("r"), "/gateway/v1/responses",
                     {"authorization": f"Bearer {fwd.placeholder}", "x-copeca-run": "run-2"})
        assert resp.status == 200
        resp.read()
    assert upstream.seen[0]["headers"]["authorization"] == f"Bearer {KEY}"
    assert upstream.seen[0]["headers"]["x-copeca-run"] == "run-2"
    assert upstream.seen[0]["path"] == "/gateway/v1/responses"


def test_gemini_query_key(upstream: Upstream) -> None:
    with _forwarder(upstream.url, family="gemini") as fwd:
        resp = _post(fwd.agent_url("r"),
                     f"/v1beta/models/m:streamGenerateContent?alt=sse&key={fwd.placeholder}", {})
        resp.read()
    assert upstream.seen[0]["path"] == f"/v1beta/models/m:streamGenerateContent?alt=sse&key={KEY}"


@pytest.mark.parametrize("headers", [{"x-api-key": "sk-ant-someone-elses-key"},
                                     {"authorization": "Bearer sk-someone-elses"}])
def test_a_foreign_credential_is_refused_401_and_never_sent(upstream: Upstream,
                                                             headers: dict[str, str]) -> None:
    with _forwarder(upstream.url) as fwd:
        resp = _post(fwd.agent_url("r"), "/v1/messages", headers)
        assert resp.status == 401
        assert "placeholder" in json.loads(resp.read())["error"]["message"]
    assert upstream.seen == []


def test_another_host_is_refused(upstream: Upstream) -> None:
    with _forwarder(upstream.url) as fwd:
        port = int(fwd.agent_url("r").rsplit(":", 1)[1])
        for target, host in (("/v1/messages", "evil.example:80"),
                             ("http://evil.example/v1/messages", f"127.0.0.1:{port}")):
            with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
                sock.sendall(f"POST {target} HTTP/1.1\r\nHost: {host}\r\nx-api-key: "
                             f"{fwd.placeholder}\r\nContent-Length: 0\r\n\r\n".encode())
                reply = sock.recv(4096)
            assert reply.startswith(b"HTTP/1.1 403"), (target, reply)
        with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
            sock.sendall(b"CONNECT evil.example:443 HTTP/1.1\r\nHost: evil.example:443\r\n\r\n")
            assert sock.recv(4096).startswith(b"HTTP/1.1 405")
    assert upstream.seen == []


def test_status_and_retry_after_pass_through(upstream: Upstream) -> None:
    with _forwarder(upstream.url) as fwd:
        resp = _post(fwd.agent_url("r"), "/v1/limited", {"x-api-key": fwd.placeholder})
        assert resp.status == 429 and resp.getheader("retry-after") == "7"
        assert resp.read() == b'{"error":"slow down"}'
        resp = _post(fwd.agent_url("r"), "/v1/overloaded", {"x-api-key": fwd.placeholder})
        assert resp.status == 529
        resp = _post(fwd.agent_url("r"), "/", {}, method="HEAD")
        assert resp.status == 200 and resp.read() == b""


def test_a_stream_is_relayed_as_it_arrives(upstream: Upstream) -> None:
    """The upstream sends its last chunk only once the client has read the first: a
    forwarder that buffered the reply would never deliver the first (the test would hang
    and fail on the upstream's 10 s wait)."""
    with _forwarder(upstream.url) as fwd:
        resp = _post(fwd.agent_url("r"), "/v1/stream", {"x-api-key": fwd.placeholder})
        assert resp.status == 200
        assert resp.getheader("content-type") == "text/event-stream"
        first = resp.read1(65536)
        got_first = time.monotonic()
        assert first == b"event: a\ndata: {\"n\":1}\n\n"
        upstream.release.set()
        rest = resp.read()
    assert rest == b"event: b\ndata: {\"n\":2}\n\n"
    assert got_first < upstream.last_sent


def test_an_unreachable_upstream_is_a_named_502_remembered_per_run() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{probe.getsockname()[1]}"
    with _forwarder(dead) as fwd:
        resp = _post(fwd.agent_url("r"), "/v1/messages",
                     {"x-api-key": fwd.placeholder, "x-copeca-run": "run-9"})
        assert resp.status == 502
        message = json.loads(resp.read())["error"]["message"]
        assert dead in message and KEY not in message
        why = fwd.take_failure("run-9")
        assert why is not None and dead in why and "ConnectionRefused" in why
        assert fwd.take_failure("run-9") is None  # a retried attempt starts clean


def test_the_added_latency_is_small(upstream: Upstream) -> None:
    """A request's round trip through the forwarder against the same request direct, on
    kept-alive connections (the CLIs keep theirs): the median difference is printed (see
    docs/security.md) and must stay under 20 ms."""
    def median_ms(url: str, headers: dict[str, str]) -> float:
        host, port = url.removeprefix("http://").split(":")
        conn = http.client.HTTPConnection(host, int(port), timeout=20)
        times = []
        for _ in range(200):
            t0 = time.perf_counter()
            conn.request("POST", "/v1/messages", body=b"{}", headers=headers)
            conn.getresponse().read()
            times.append(time.perf_counter() - t0)
        conn.close()
        return statistics.median(times[20:]) * 1000

    with _forwarder(upstream.url) as fwd:
        direct = median_ms(upstream.url, {"x-api-key": KEY})
        before = upstream.connections
        through = median_ms(fwd.agent_url("r"), {"x-api-key": fwd.placeholder})
    assert upstream.connections - before == 1  # one kept-alive upstream connection
    print(f"median round trip: direct {direct:.3f} ms, through the forwarder {through:.3f} ms"
          f" (+{through - direct:.3f} ms)")
    assert through - direct < 20
