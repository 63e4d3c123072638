"""The key forwarder: a loopback HTTP server per runner that holds the real model key, so the
agent (and everything it starts) holds only a placeholder.

```
agent CLI ──(placeholder key)──► 127.0.0.1:PORT ──(real key, same bytes)──► the API
```
A request is sent on only when every credential it carries is this job's placeholder, in a
place the runner's family sends its key (`_families.py`); then the real key replaces it, and
the request goes byte for byte to the one configured upstream: the vendor's API, or the
user's `--base-url`. The reply comes back as it arrives (an SSE stream chunk by chunk, never
buffered), with its status and headers (429, 529, 5xx and `retry-after` drive the CLIs'
retries). Nothing is logged: no body, no header, no key. An upstream that cannot be reached
is answered 502 and remembered per run (the `x-copeca-run` header), so the engine records
that run as an infra error naming the endpoint, never as a wrong answer.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import secrets
import socket
import ssl
import threading
import time
import urllib.parse
import urllib.request
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any, cast

from copeca_action.errors import InfraError
from copeca_action.keyproxy._families import Family, Refused, swap_headers, swap_query

PLACEHOLDER_PREFIX = "copeca-forwarded-"
"""The placeholder key an agent holds behind the forwarder: this prefix and 32 random hex
digits, new for every job (another local process cannot guess it to spend the key)."""
RUN_HEADER = "x-copeca-run"
"""The run key every model request carries (agent/_config.RUN_KEY_HEADER): failures are
remembered per run by it; it is not sent on to a vendor."""
HOP_BY_HOP = frozenset(("connection", "keep-alive", "proxy-connection", "te", "trailer",
                        "transfer-encoding", "upgrade", "host", "content-length", "expect"))
"""Headers that describe one connection, not the message: never passed through."""
MAX_BODY = 64 * 1024 * 1024
CONNECT_TIMEOUT_S = 30.0
READ_TIMEOUT_S = 900.0
"""How long a reply may be silent (a model thinking before its first token)."""
CHUNK = 64 * 1024


@dataclass(frozen=True)
class Route:
    """One runner's way out: its family's key rules, the upstream and the key."""

    name: str
    family: Family
    upstream: str
    """`scheme://host[:port][/path]`: the agent's base URL is the forwarder's origin plus this
    path, and request paths go on unchanged to this origin."""
    key: str = field(repr=False)
    vendor: bool = True
    """The upstream is the vendor's own API (not a user's `--base-url`): the run header is
    not sent on."""


def placeholder_key() -> str:
    return PLACEHOLDER_PREFIX + secrets.token_hex(16)


def _proxy_for(url: urllib.parse.SplitResult, env: Mapping[str, str]) -> tuple[str, int,
                                                                              str | None] | None:
    """The HTTP(S)_PROXY to tunnel through for `url` (NO_PROXY honoured), as the harness's
    environment says: (host, port, Proxy-Authorization value or None)."""
    names = ("HTTPS_PROXY", "https_proxy") if url.scheme == "https" else ("HTTP_PROXY",
                                                                          "http_proxy")
    proxy = next((env[n] for n in names if env.get(n, "").strip()), "")
    if not proxy:
        return None
    no_proxy = env.get("NO_PROXY") or env.get("no_proxy") or ""
    host = url.hostname or ""
    if no_proxy and urllib.request.proxy_bypass_environment(  # type: ignore[attr-defined]
            host, {"no": no_proxy}):
        return None
    parsed = urllib.parse.urlsplit(proxy if "://" in proxy else f"http://{proxy}")
    auth = None
    if parsed.username is not None:
        import base64

        user = urllib.parse.unquote(parsed.username)
        word = urllib.parse.unquote(parsed.password or "")
        auth = "Basic " + base64.b64encode(f"{user}:{word}".encode()).decode()
    return parsed.hostname or "", parsed.port or 80, auth


def _ssl_context(env: Mapping[str, str]) -> ssl.SSLContext:
    """The system's trust store, plus the CA files the harness's environment names (a
    corporate proxy's)."""
    ctx = ssl.create_default_context()
    for name in ("SSL_CERT_FILE", "NODE_EXTRA_CA_CERTS", "REQUESTS_CA_BUNDLE"):
        path = env.get(name, "")
        if path and os.path.isfile(path):
            with contextlib.suppress(ssl.SSLError, OSError):
                ctx.load_verify_locations(cafile=path)
    return ctx


class _RouteServer(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False

    def __init__(self, forwarder: KeyForwarder, route: Route) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.forwarder = forwarder
        self.route = route
        url = urllib.parse.urlsplit(route.upstream)
        if url.scheme not in ("http", "https") or not url.hostname:
            raise InfraError(f"key forwarder: upstream {route.upstream!r} is not an "
                             "http(s)://HOST URL")
        self.upstream = url
        self.origin = f"{url.scheme}://{url.netloc}"
        self.port = int(self.server_address[1])
        self.hosts = {f"{h}:{self.port}" for h in ("127.0.0.1", "localhost", "[::1]")}
        self.proxy = _proxy_for(url, forwarder.env) if route.vendor else None
        self.ssl = _ssl_context(forwarder.env) if url.scheme == "https" else None

    def connect(self) -> http.client.HTTPConnection:
        url = self.upstream
        port = url.port or (443 if url.scheme == "https" else 80)
        if self.proxy is not None:
            host, pport, auth = self.proxy
            conn: http.client.HTTPConnection = (
                http.client.HTTPSConnection(host, pport, timeout=CONNECT_TIMEOUT_S,
                                            context=self.ssl)
                if self.ssl is not None else
                http.client.HTTPConnection(host, pport, timeout=CONNECT_TIMEOUT_S))
            conn.set_tunnel(url.hostname or "", port,
                            headers={"Proxy-Authorization": auth} if auth else None)
        elif self.ssl is not None:
            conn = http.client.HTTPSConnection(url.hostname or "", port,
                                               timeout=CONNECT_TIMEOUT_S, context=self.ssl)
        else:
            conn = http.client.HTTPConnection(url.hostname or "", port,
                                              timeout=CONNECT_TIMEOUT_S)
        conn.connect()
        if conn.sock is not None:
            conn.sock.settimeout(READ_TIMEOUT_S)
            with contextlib.suppress(OSError):
                conn.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        return conn


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "copeca-key-forwarder/1"
    disable_nagle_algorithm = True
    _conn: http.client.HTTPConnection | None = None

    @property
    def _server(self) -> _RouteServer:
        return cast("_RouteServer", self.server)

    def log_message(self, format: str, *args: Any) -> None:
        """Silent: nothing about a request (its body, headers, key) is ever logged."""

    def finish(self) -> None:
        self._drop_upstream()
        super().finish()

    def _drop_upstream(self) -> None:
        if self._conn is not None:
            with contextlib.suppress(Exception):
                self._conn.close()
            self._conn = None

    # -- replies of the forwarder's own ---------------------------------------------------

    def _error(self, status: int, message: str) -> None:
        body = json.dumps({"type": "error", "error": {
            "type": "forwarder_error", "message": f"copeca key forwarder: {message}"}}).encode()
        self.send_response_only(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)
        self.wfile.flush()

    def do_CONNECT(self) -> None:
        self.close_connection = True
        self._error(405, "no tunnels: only requests to the configured model endpoint")

    # -- forwarding -------------------------------------------------------------------------

    def _read_body(self) -> bytes:
        if "chunked" in (self.headers.get("transfer-encoding") or "").lower():
            parts: list[bytes] = []
            size = 0
            while True:
                line = self.rfile.readline(1024)
                n = int(line.split(b";", 1)[0].strip() or b"0", 16)
                if n == 0:
                    while self.rfile.readline(8192) not in (b"\r\n", b"\n", b""):
                        pass  # trailers: dropped
                    return b"".join(parts)
                size += n
                if size > MAX_BODY:
                    raise Refused(413, f"request body over {MAX_BODY} bytes")
                parts.append(self.rfile.read(n))
                self.rfile.readline(8)
        length = int(self.headers.get("content-length") or 0)
        if length > MAX_BODY:
            raise Refused(413, f"request body over {MAX_BODY} bytes")
        return self.rfile.read(length) if length > 0 else b""

    def _prepare(self) -> tuple[str, list[tuple[str, str]], bytes]:
        server, route = self._server, self._server.route
        if not self.path.startswith("/"):  # absolute-form: a proxy request for another host
            raise Refused(403, "only paths of the configured model endpoint are forwarded, "
                               "never another host")
        host = (self.headers.get("host") or "").strip().lower()
        if host not in server.hosts:
            raise Refused(403, f"Host {host!r} is not this forwarder: requests go only to the "
                               "configured model endpoint")
        path, sep, query = self.path.partition("?")
        placeholder = server.forwarder.placeholder
        query, in_query = swap_query(route.family, query, placeholder, route.key)
        kept = [(k, v) for k, v in self.headers.items() if k.lower() not in HOP_BY_HOP
                and not (route.vendor and k.lower() == RUN_HEADER)]
        headers, in_headers = swap_headers(route.family, kept, placeholder, route.key)
        body = self._read_body()
        headers.append(("Host", server.upstream.netloc))
        if body or self.command in ("POST", "PUT", "PATCH"):
            headers.append(("Content-Length", str(len(body))))
        del in_query, in_headers  # a request with no credential goes on without one
        return path + (sep + query if sep else ""), headers, body

    def _send_upstream(self, target: str, headers: list[tuple[str, str]],
                       body: bytes) -> http.client.HTTPResponse:
        """Send on the kept connection (once more on a fresh one if the kept one had gone
        stale); OSError / HTTPException when the upstream cannot be reached."""
        for attempt in (0, 1):
            reused = self._conn is not None
            if self._conn is None:
                self._conn = self._server.connect()
            conn = self._conn
            try:
                conn.putrequest(self.command, target, skip_host=True,
                                skip_accept_encoding=True)
                for k, v in headers:
                    conn.putheader(k, v)
                conn.endheaders(body if body else None)
                return conn.getresponse()
            except (OSError, http.client.HTTPException):
                self._drop_upstream()
                if not reused or attempt:
                    raise
        raise AssertionError("unreachable")

    def _forward(self) -> None:
        forwarder = self._server.forwarder
        run_key = self.headers.get(RUN_HEADER, "")
        started = time.perf_counter()
        try:
            target, headers, body = self._prepare()
        except Refused as exc:
            self.close_connection = True
            self._error(exc.status, exc.reason)
            return
        except ValueError as exc:  # a malformed chunked body
            self.close_connection = True
            self._error(400, f"unreadable request body ({exc})")
            return
        try:
            resp = self._send_upstream(target, headers, body)
        except (OSError, http.client.HTTPException) as exc:
            why = (f"the key forwarder could not reach the model endpoint "
                   f"{self._server.origin} ({type(exc).__name__}: {exc})")
            forwarder.record_failure(run_key, why)
            self._error(502, why)
            return
        forwarder.record_latency(time.perf_counter() - started)
        self._relay(resp)

    def _relay(self, resp: http.client.HTTPResponse) -> None:
        """The upstream's reply as it comes: status, headers, then each piece of the body
        the moment it arrives."""
        status = resp.status
        self.send_response_only(status, resp.reason)
        length = resp.getheader("content-length")
        for k, v in resp.getheaders():
            if k.lower() not in HOP_BY_HOP:
                self.send_header(k, v)
        bodyless = self.command == "HEAD" or status in (204, 304) or status < 200
        streamed = not bodyless and (resp.chunked or length is None)
        if bodyless and length is not None:
            self.send_header("Content-Length", length)
        elif streamed:
            self.send_header("Transfer-Encoding", "chunked")
        else:
            self.send_header("Content-Length", length or "0")
        self.end_headers()
        self.wfile.flush()
        try:
            if bodyless:
                resp.read()
            else:
                while data := resp.read1(CHUNK):
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data) if streamed else data)
                    self.wfile.flush()
                resp.read()  # marks the reply done (read1 does not): the connection is reused
                if streamed:
                    self.wfile.write(b"0\r\n\r\n")
                    self.wfile.flush()
        except (OSError, http.client.HTTPException):
            # the client went away, or the upstream cut its reply: both connections end
            # (the client sees a cut stream, as it would from the vendor)
            self.close_connection = True
            self._drop_upstream()
            return
        if resp.will_close:
            self._drop_upstream()

    do_GET = do_POST = do_HEAD = do_PUT = do_PATCH = do_DELETE = do_OPTIONS = _forward


class KeyForwarder:
    """One job's forwarder: a loopback listener per route, on a random port each.

    Use as a context manager; `agent_url(name)` is the base URL the runner's CLI is given,
    `placeholder` the key it holds."""

    def __init__(self, routes: Sequence[Route], env: Mapping[str, str] | None = None) -> None:
        self.env: Mapping[str, str] = dict(os.environ if env is None else env)
        self.placeholder = placeholder_key()
        self._failures: dict[str, list[str]] = {}
        self._latency: list[float] = []
        self._lock = threading.Lock()
        self._servers: dict[str, _RouteServer] = {}
        self._threads: list[threading.Thread] = []
        try:
            for route in routes:
                self._servers[route.name] = _RouteServer(self, route)
        except OSError as exc:
            self.close()
            raise InfraError(f"the key forwarder could not listen on 127.0.0.1: {exc}") from exc
        for name, server in self._servers.items():
            thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.2},
                                      name=f"key-forwarder-{name}", daemon=True)
            thread.start()
            self._threads.append(thread)

    def __enter__(self) -> KeyForwarder:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()

    def close(self) -> None:
        for server in self._servers.values():
            if self._threads:
                server.shutdown()
            server.server_close()
        for thread in self._threads:
            thread.join(timeout=5)
        self._threads = []

    @property
    def routes(self) -> list[str]:
        return sorted(self._servers)

    def agent_url(self, name: str) -> str:
        """The base URL the runner `name`'s CLI is given: this forwarder's origin plus the
        upstream's path (so the CLI builds the same request paths as against the upstream)."""
        server = self._servers[name]
        return f"http://127.0.0.1:{server.port}{server.upstream.path.rstrip('/')}"

    def upstream(self, name: str) -> str:
        return self._servers[name].route.upstream

    def record_failure(self, run_key: str, why: str) -> None:
        with self._lock:
            self._failures.setdefault(run_key, []).append(why)

    def take_failure(self, run_key: str) -> str | None:
        """The first unreachable-endpoint failure of the run `run_key` since the last call
        (then forgotten: a retried attempt starts clean); None when there was none."""
        with self._lock:
            found = self._failures.pop(run_key, [])
        return found[0] if found else None

    def record_latency(self, seconds: float) -> None:
        with self._lock:
            self._latency.append(seconds)

    def latencies(self) -> list[float]:
        """Per forwarded request, the seconds from its arrival to the upstream's status line
        (the forwarder's overhead plus the upstream's time to first byte)."""
        with self._lock:
            return list(self._latency)
