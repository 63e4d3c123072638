"""The scripted model server: a threaded loopback HTTP server playing scripts to agent CLIs.

Endpoints: `HEAD /`, `GET /`, `POST /v1/messages` (stream and not), `POST
/v1/messages/count_tokens`, `POST /v1/responses` (stream and not), `POST /v1/chat/completions`
(stream and not), `POST /v1beta/models/<model>:generateContent` and
`:streamGenerateContent` (SSE with `alt=sse`), `…:countTokens`, `GET /v1/models`.
It never opens an outbound connection.
"""

from __future__ import annotations

import contextlib
import json
import re
import select
import socket
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, cast

from copeca_action.errors import InfraError
from copeca_action.scripted import _anthropic, _chat, _gemini, _openai
from copeca_action.scripted._actions import ActionError, translate
from copeca_action.scripted._plan import Plan
from copeca_action.scripted._reply import Event, Reply, ToolUse
from copeca_action.scripted._request import (
    AUX_K,
    BRIDGE_TOOL,
    RequestView,
    make_id,
    parse_body,
    view_anthropic,
    view_chat,
    view_gemini,
    view_openai,
)
from copeca_action.scripted._script import Fault, Script, Usage, load_scripts
from copeca_action.scripted._served import ServedConversation
from copeca_action.scripted._state import Conversation, State

VARIANT_HEADER = "x-copeca-run"
"""Optional request header: a stable run key (e.g. the run id) that fixes the variant, so a
run's variation is reproducible for a given seed whatever order runs arrive in."""

SESSION_HEADERS = ("x-claude-code-session-id", "session-id", "x-session-id")
"""Headers by which Claude Code, Codex and OpenCode name their session: retries of a first
request belong to the same conversation even when the CLI changes the request between
attempts."""

MAX_BODY = 64 * 1024 * 1024
_GEMINI_RE = re.compile(r"^/v1(?:beta|alpha)?/models/([^/:]+):(generateContent|"
                        r"streamGenerateContent|countTokens)$")
WIRES: dict[str, Any] = {"anthropic": _anthropic, "openai": _openai, "chat": _chat,
                         "gemini": _gemini}
"""Per API, its wire module: `events(reply)`, `response(reply)`, `error_body(status, msg)`,
and for wires without a cache-write figure `carried(usage)`."""


def _fallback_usage(view: RequestView, text: str | None, calls: list[ToolUse]) -> Usage:
    """Plausible figures when a step sets none: ~4 bytes a token, request in, reply out."""
    out_chars = len(text or "") + sum(len(json.dumps(c.input)) + len(c.name) for c in calls)
    return Usage(input=max(1, view.body_bytes // 4), output=max(1, out_chars // 4 + 5))


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "copeca-scripted/1"
    disable_nagle_algorithm = True
    """Replies go out in a few small writes; Nagle plus delayed ACK would add ~40 ms each."""

    _on_commit: Callable[[bool], None] | None = None
    _entry: dict[str, Any] | None = None
    _started = 0.0

    def _commit(self, done: bool) -> None:
        """Record (or, if the last write failed, withdraw) the reply being served."""
        if self._on_commit is not None:
            self._on_commit(done)

    @property
    def state(self) -> State:
        return cast("_ScriptedHTTPServer", self.server).state

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: every request goes to the JSONL log instead."""

    # -- plumbing -------------------------------------------------------------------------

    def _json(self, status: int, body: dict[str, Any],
              headers: dict[str, str] | None = None, commit: bool = False) -> None:
        raw = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(raw)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        if commit:
            self._commit(True)
        self._settle()
        if self.command != "HEAD":
            self.wfile.write(raw)

    def _start_stream(self) -> None:
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("cache-control", "no-cache")
        self.send_header("transfer-encoding", "chunked")
        self.end_headers()

    def _chunk(self, data: bytes) -> None:
        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
        self.wfile.flush()

    def _end_stream(self, commit: bool = False) -> None:
        if commit:
            self._commit(True)
        self._settle()
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()

    @staticmethod
    def _frame(event: Event) -> bytes:
        """`event:` + `data:` (Anthropic, Responses); `data:` only when the name is empty
        (Chat Completions, Gemini); `data: [DONE]` ends a Chat Completions stream."""
        name, data = event
        if name == "[DONE]":
            return b"data: [DONE]\n\n"
        if not name:
            return f"data: {json.dumps(data)}\n\n".encode()
        return f"event: {name}\ndata: {json.dumps(data)}\n\n".encode()

    def _read_body(self) -> bytes:
        length = int(self.headers.get("content-length") or 0)
        if length > MAX_BODY:
            raise ValueError(f"request body of {length} bytes is over {MAX_BODY}")
        return self.rfile.read(length) if length else b""

    # -- verbs ----------------------------------------------------------------------------

    def do_HEAD(self) -> None:
        self.send_response(200)
        self.send_header("content-length", "0")
        self.end_headers()

    def do_GET(self) -> None:
        path = self.path.split("?", 1)[0]
        if path.rstrip("/") in ("", "/v1"):
            self._json(200, {"server": "copeca scripted model server",
                             "scripts": len(self.state.scripts)})
        elif path == "/v1/models":
            self._json(200, {"object": "list", "data": []})
        else:
            self._json(404, {"error": {"message": f"no such endpoint: GET {path}"}})

    def _settle(self) -> None:
        """Log the request (once), just before its last bytes go out: a client that has read
        its reply finds it in `requests()`."""
        entry = self._entry
        if entry is not None:
            self._entry = None
            entry["duration_ms"] = round((time.monotonic() - self._started) * 1000, 2)
            self.state.record(entry)

    def do_POST(self) -> None:
        self._started = time.monotonic()
        path = self.path.split("?", 1)[0].rstrip("/")
        entry: dict[str, Any] = {"time": time.time(), "method": "POST", "path": self.path}
        self._entry = entry
        try:
            raw = self._read_body()
            if path == "/v1/messages/count_tokens":
                entry.update(api="anthropic", status=200)
                self._json(200, {"input_tokens": max(1, len(raw) // 4)})
            elif path in ("/v1/messages", "/v1/responses", "/v1/chat/completions",
                          "/chat/completions"):
                api = {"/v1/messages": "anthropic", "/v1/responses": "openai"}.get(path, "chat")
                self._converse(api, raw, entry)
            elif (m := _GEMINI_RE.match(path)) is not None:
                model, method = m.groups()
                if method == "countTokens":
                    entry.update(api="gemini", status=200)
                    self._json(200, {"totalTokens": max(1, len(raw) // 4)})
                else:
                    self._converse("gemini", raw, entry, model=model,
                                   stream=method == "streamGenerateContent")
            else:
                entry["status"] = 404
                self._json(404, {"type": "error", "error": {
                    "type": "not_found_error", "message": f"no such endpoint: POST {path}"}})
        except (BrokenPipeError, ConnectionResetError) as exc:
            entry["error"] = f"client went away: {exc.__class__.__name__}"
            self.close_connection = True
            if entry.get("completed"):
                self._commit(False)
        except Exception as exc:  # a bug here must not leave the client hanging
            entry.update(status=500, error=f"server error: {exc!r}")
            self.close_connection = True
            if self._entry is not None:  # nothing sent yet
                self._json(500, {"type": "error", "error": {
                    "type": "api_error", "message": f"copeca scripted server: {exc!r}"}})
        finally:
            self._settle()

    def _converse(self, api: str, raw: bytes, entry: dict[str, Any], *, model: str = "",
                  stream: bool = False) -> None:
        wire = WIRES[api]
        entry["api"] = api
        try:
            body = parse_body(raw)
        except ValueError as exc:
            entry["status"] = 400
            entry["error"] = str(exc)
            self._json(400, wire.error_body(400, str(exc)))
            return
        if api == "anthropic":
            view = view_anthropic(body, len(raw))
        elif api == "openai":
            view = view_openai(body, len(raw))
        elif api == "chat":
            view = view_chat(body, len(raw))
        else:
            view = view_gemini(body, len(raw), model, stream)
        if self.state.log_bodies:
            entry["body"] = body
        entry.update(model=view.model, stream=view.stream, tools_offered=len(view.tools),
                     body_bytes=view.body_bytes, prompt_head=view.prompt[-200:])
        script = self.state.select(view)
        if script is None:
            msg = ("copeca scripted server: no script matches this request (model "
                   f"{view.model!r}, prompt ending {view.prompt[-80:]!r})")
            entry.update(status=400, error="no script matches")
            self._json(400, wire.error_body(400, msg))
            return
        session = next((self.headers[h] for h in SESSION_HEADERS if self.headers.get(h)), None)
        conv, step = self.state.conversation(view, script, self.headers.get(VARIANT_HEADER),
                                             session)
        plan = conv.plan
        step = min(step, len(plan.steps) - 1)
        try:
            reply, aux = self._reply(view, conv, plan, step)
        except ActionError as exc:
            entry.update(status=400, error=str(exc))
            self._json(400, wire.error_body(400, f"copeca scripted server: {exc}"))
            return
        with self.state.lock:
            st = conv.step(step, aux)
            st.attempts += 1
            attempt = st.attempts
        reply = replace(reply, message_id=f"{reply.message_id}_{attempt}")
        # What this reply states on the wire (the tokens a vendor would bill once it is
        # `completed`) and the model it names: the log alone prices a run.
        entry.update(script=script.id, conv=conv.conv, variant=plan.variant, step=step,
                     aux=aux, attempt=attempt, served_model=reply.model,
                     usage=reply.usage.model_dump())
        fault = None if aux else plan.fault_for(step, attempt)
        if fault is not None:
            entry["fault"] = fault.kind if fault.kind != "http" else f"http {fault.status}"
            with self.state.lock:
                st.faults.append(entry["fault"])
        def commit(done: bool) -> None:
            with self.state.lock:
                st.reply = reply if done else None
            entry["completed"] = done
            if done:
                entry["billed"] = entry["usage"]
            else:
                entry.pop("billed", None)

        entry["completed"] = False
        self._on_commit = commit
        self._send(api, view.stream, reply, fault, entry)

    def _reply(self, view: RequestView, conv: Conversation, plan: Plan,
               step: int) -> tuple[Reply, bool]:
        """The step's reply, or (True) the auxiliary `ToolSearch` turn it needs first."""
        spec = plan.steps[step]
        calls = []
        for k, action in enumerate(spec.tools):
            name, args = translate(action, view.api, view.tools + view.deferred, view.cwd,
                                   view.params)
            namespace, inner = view.namespaces.get(name, (None, name))
            if namespace is None and view.api == "openai" and "__" in name.strip("_"):
                # a tool of a group the request lists outside `tools` (Codex's
                # `collaboration` tools): `group__tool` is sent as namespace + name
                namespace, inner = name.rsplit("__", 1)
            calls.append(ToolUse(make_id(view.api, conv.conv, plan.variant, step, k), inner,
                                 args, namespace))
        to_load = [c.name for c in calls if c.name in view.deferred]
        if to_load and BRIDGE_TOOL in view.tools:  # Qwen Code: through its bridge tool
            calls = [ToolUse(c.id, BRIDGE_TOOL, {"name": c.name, "arguments": c.input})
                     if c.name in view.deferred else c for c in calls]
        elif to_load and "ToolSearch" in view.tools:
            search = ToolUse(make_id(view.api, conv.conv, plan.variant, step, AUX_K),
                             "ToolSearch", {"query": "select:" + ",".join(to_load),
                                            "max_results": len(to_load)})
            usage = (plan.script.tool_search_usage or tool_search_default(spec.usage)
                     or _fallback_usage(view, None, [search]))
            return Reply(model=plan.script.serves_model or view.model,
                         message_id=f"cpc_{conv.conv}_{step}a", text=None,
                         calls=[search], usage=usage), True
        text = spec.answer if spec.answer is not None else spec.text
        usage = plan.usage(step, _fallback_usage(view, text, calls))
        carried = getattr(WIRES[view.api], "carried", None)
        if carried is not None:  # the wire has no cache-write figure: served as input
            usage = carried(usage)
        return Reply(model=plan.script.serves_model or view.model,
                     message_id=f"cpc_{conv.conv}_{step}", text=text,
                     calls=calls, usage=usage), False

    def _send(self, api: str, stream: bool, reply: Reply, fault: Fault | None,
              entry: dict[str, Any]) -> None:
        """Serve the reply (or the fault); a complete reply is committed to the truth just
        before its last bytes go out, so a client that has read it sees it recorded."""
        wire = WIRES[api]
        if fault is not None and fault.kind == "http":
            status = fault.status or 500
            entry["status"] = status
            headers = {"retry-after": str(fault.retry_after)} if fault.retry_after else {}
            if status in (429, 529) and not fault.retry_after:
                headers["retry-after"] = "0"
            message = fault.message or f"scripted fault: HTTP {status}"
            self._json(status, wire.error_body(status, message), headers)
            return
        entry["status"] = 200
        if not stream:
            body = (_anthropic.message(reply) if api == "anthropic"
                    else wire.response(reply))
            if fault is not None:
                self._fault_plain(fault, json.dumps(body).encode())
            else:
                self._json(200, body, commit=True)
            return
        events: list[Event] = wire.events(reply)
        self._start_stream()
        if fault is None:  # one write: small writes per event cost a syscall each
            frames = b"".join(self._frame(e) for e in events)
            self.wfile.write(b"%x\r\n%s\r\n" % (len(frames), frames))
            self._end_stream(commit=True)
        else:
            self._fault_stream(fault, events)

    def _fault_stream(self, fault: Fault, events: list[Event]) -> None:
        if fault.kind == "stall":
            self._chunk(self._frame(events[0]))
            self._note_billed(events[:1])
            if self._stalled(fault.seconds):
                self.close_connection = True
                return
            for event in events[1:]:
                self._chunk(self._frame(event))
            self._end_stream(commit=True)
            return
        half = max(1, len(events) // 2) if len(events) > 1 else 0
        for event in events[:half]:
            self._chunk(self._frame(event))
        self._note_billed(events[:half])
        if fault.kind == "malformed":
            name = events[min(half, len(events) - 1)][0]
            head = f"event: {name}\n" if name and name != "[DONE]" else ""
            self._chunk(f"{head}data: {{\"type\": \"{name}\", "
                        "\"index\": 0, \"delta\": {\"type\n\n".encode())
            self._end_stream()
        else:  # drop: no terminating chunk; the connection is cut mid-body
            self._drop()
        self.close_connection = True

    def _stalled(self, seconds: float) -> bool:
        """Silence for `seconds`; True (give up) as soon as the server stops or the client
        hangs up (a killed CLI), so the request is logged when it ends, not an hour on."""
        deadline = time.monotonic() + seconds
        while (left := deadline - time.monotonic()) > 0:
            if self.state.stop.wait(min(left, 0.1)):
                return True
            if self._client_gone():
                return True
        return False

    def _client_gone(self) -> bool:
        try:
            readable, _, _ = select.select([self.connection], [], [], 0)
            return bool(readable) and self.connection.recv(1, socket.MSG_PEEK) == b""
        except OSError:
            return True

    def _note_billed(self, sent: list[Event]) -> None:
        """The usage a cut stream stated before it stopped (Anthropic's `message_start`
        carries the input figures and one output token; `message_delta` the output so far):
        a vendor bills a started request, and the CLI saw these figures. The other wires
        state usage only in their last event, so a cut stream of theirs states none."""
        entry = self._entry
        if entry is None:
            return
        stated: dict[str, Any] | None = None
        for name, data in sent:
            if name == "message_start":
                stated = dict(data["message"]["usage"])
            elif name == "message_delta" and stated is not None:
                stated.update(data.get("usage") or {})
        if stated is not None:
            entry["billed"] = {"input": stated.get("input_tokens", 0),
                               "output": stated.get("output_tokens", 0),
                               "cache_read": stated.get("cache_read_input_tokens", 0),
                               "cache_write": stated.get("cache_creation_input_tokens", 0)}

    def _fault_plain(self, fault: Fault, raw: bytes) -> None:
        if fault.kind == "stall":
            if self._stalled(fault.seconds):
                self.close_connection = True
                return
            self._json(200, json.loads(raw), commit=True)
            return
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(raw)))
        self.end_headers()
        if fault.kind == "malformed":
            self.wfile.write(raw[: len(raw) // 2].ljust(len(raw), b"#"))
        else:
            self.wfile.write(raw[: len(raw) // 2])
            self._drop()
        self.close_connection = True

    def _drop(self) -> None:
        self.wfile.flush()
        with contextlib.suppress(OSError):
            self.connection.shutdown(socket.SHUT_RDWR)


class _ScriptedHTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False
    allow_reuse_address = True
    request_queue_size = 128

    def __init__(self, port: int, state: State) -> None:
        self.state = state
        super().__init__(("127.0.0.1", port), _Handler)


class ScriptedServer:
    """The scripted model server as a context manager (tests, the engine) or a foreground
    process (`copeca-action scripted serve`).

    >>> with ScriptedServer(Path("corpus/scripts"), seed=7) as srv:  # doctest: +SKIP
    ...     run_cli(env={"ANTHROPIC_BASE_URL": srv.url})
    ...     srv.served()
    """

    def __init__(self, scripts_dir: Path | Sequence[Script], *, seed: int = 0,
                 log_path: Path | None = None, port: int = 0, log_bodies: bool = False) -> None:
        scripts = (load_scripts(scripts_dir) if isinstance(scripts_dir, Path)
                   else list(scripts_dir))
        self._state = State(scripts, seed, log_path, log_bodies)
        self._port = port
        self._httpd: _ScriptedHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle ------------------------------------------------------------------------

    def start(self) -> ScriptedServer:
        """Listen on 127.0.0.1 and serve from a background thread.

        Raises:
            InfraError: the port cannot be bound (in use, or not permitted).
        """
        if self._httpd is None:
            self._state.open()
            try:
                self._httpd = _ScriptedHTTPServer(self._port, self._state)
            except OSError as exc:
                self._state.close()
                raise InfraError(f"scripted model server cannot listen on 127.0.0.1:"
                                 f"{self._port}: {exc.strerror or exc}") from exc
            self._thread = threading.Thread(target=self._httpd.serve_forever,
                                            kwargs={"poll_interval": 0.1},
                                            name="copeca-scripted", daemon=True)
            self._thread.start()
        return self

    def stop(self) -> None:
        self._state.stop.set()
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None
        self._state.close()

    def wait(self, timeout: float | None = None) -> bool:
        """Block until `stop()` (or the timeout); True when stopped."""
        return self._state.stop.wait(timeout)

    def __enter__(self) -> ScriptedServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- facts ----------------------------------------------------------------------------

    @property
    def port(self) -> int:
        if self._httpd is None:
            raise RuntimeError("the scripted server is not running")
        return int(self._httpd.server_address[1])

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def scripts(self) -> list[Script]:
        return list(self._state.scripts)

    def requests(self) -> list[dict[str, Any]]:
        """Every request so far, as logged (one dict per request, in arrival order)."""
        with self._state.lock:
            return [dict(e) for e in self._state.log]

    def served(self) -> list[ServedConversation]:
        """Per conversation: usage per step, tool calls and final text actually served."""
        with self._state.lock:
            convs = [self._state.convs[k] for k in sorted(self._state.convs)]
            return [c.snapshot() for c in convs]


TOOL_SEARCH_INPUT = 100
TOOL_SEARCH_OUTPUT = 25


def tool_search_default(step: Usage | None) -> Usage | None:
    """The `ToolSearch` turn's usage when the script sets no `tool_search_usage` but the step
    that needs it sets `usage`: the step's context read from cache, a short new input and a
    short call, on the script's own scale. Deriving it from the request size instead (tens of
    kB of tool definitions) made a first dry run of an MCP tool read as a +51% regression.
    None: the step sets no usage either, so every figure is derived alike."""
    if step is None:
        return None
    return Usage(input=min(step.input, TOOL_SEARCH_INPUT), output=TOOL_SEARCH_OUTPUT,
                 cache_read=step.cache_read + step.cache_write, cache_write=0)
