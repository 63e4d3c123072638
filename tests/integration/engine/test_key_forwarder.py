"""The model key stays in the harness: real Claude Code and Codex, a real `copeca-action run`
against a "vendor" (the scripted model server behind a recorder that checks each request's
credential), with test-only keys in the harness's environment.

The agents run `env`: their transcripts (the raw bytes, before any scrubbing) show the
forwarder's placeholder; the vendor got the real key on every request; no file of the job
(run folders, records, request log, report, the signed bundle's members) holds the key in any
encoding, nor a redaction marker of it (it never was there to scrub); the runs' token counts
equal the scripted server's ledger (streaming went through whole). An unreachable endpoint
is an infra_error naming it, never a wrong answer.
"""

from __future__ import annotations

import base64
import http.client
import io
import json
import os
import secrets
import socket
import subprocess
import sys
import threading
import zipfile
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from engine_helpers import write

from copeca_action._util.paths import runners_dir
from copeca_action.keyproxy import PLACEHOLDER_PREFIX
from copeca_action.records import read_records
from copeca_action.scripted import ScriptedServer

BIN = runners_dir() / "node_modules" / ".bin"
ROOT = Path(__file__).resolve().parents[3]
pytestmark = [pytest.mark.cli, pytest.mark.slow, pytest.mark.skipif(
    not (BIN / "claude").exists() or not (BIN / "codex").exists(),
    reason="Claude Code and Codex are not installed (run `make node`)")]

CLAUDE, CODEX = "claude-sonnet-4-5", "gpt-5"
OK = "It is generate_unique_id in fastapi/utils.py."
HOP = {"connection", "keep-alive", "transfer-encoding", "content-length", "host"}


class Vendor(ThreadingHTTPServer):
    """A recorder in front of the scripted server: notes each request's credentials, then
    relays it and streams the reply back as it comes."""

    daemon_threads = True

    def __init__(self, upstream: str) -> None:
        super().__init__(("127.0.0.1", 0), _VendorHandler)
        self.upstream = upstream.removeprefix("http://")
        self.seen: list[dict[str, str]] = []
        threading.Thread(target=self.serve_forever, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"


class _VendorHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def _relay(self) -> None:
        server: Vendor = self.server  # type: ignore[assignment]
        body = self.rfile.read(int(self.headers.get("content-length") or 0))
        server.seen.append({"method": self.command, "path": self.path, **{
            k.lower(): v for k, v in self.headers.items()
            if k.lower() in ("x-api-key", "authorization", "x-goog-api-key")}})
        host, port = server.upstream.split(":")
        conn = http.client.HTTPConnection(host, int(port), timeout=120)
        conn.request(self.command, self.path, body=body or None,
                     headers={k: v for k, v in self.headers.items() if k.lower() not in HOP})
        resp = conn.getresponse()
        self.send_response_only(resp.status, resp.reason)
        for k, v in resp.getheaders():
            if k.lower() not in HOP:
                self.send_header(k, v)
        self.send_header("transfer-encoding", "chunked")
        self.end_headers()
        if self.command != "HEAD":
            while data := resp.read1(65536):
                self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
                self.wfile.flush()
        self.wfile.write(b"0\r\n\r\n")
        conn.close()

    do_GET = do_POST = do_HEAD = _relay


def _u(inp: int, out: int, read: int = 0, wrote: int = 0) -> dict[str, int]:
    return {"input": inp, "output": out, "cache_read": read, "cache_write": wrote}


@pytest.fixture(scope="module")
def keys() -> dict[str, str]:
    return {"ANTHROPIC_API_KEY": f"sk-ant-test-forwarded-{secrets.token_hex(16)}",
            "OPENAI_API_KEY": f"sk-test-forwarded-{secrets.token_hex(16)}"}


def _job(tmp: Path, keys: dict[str, str], base_url: str, *extra: str,
         env_extra: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    corpus = tmp / "corpus"
    (corpus / "modes").mkdir(parents=True)
    (corpus / "repos.yaml").write_text((ROOT / "corpus" / "repos.yaml").read_text())
    (corpus / "modes" / "baseline.yaml").write_text(
        (ROOT / "corpus" / "modes" / "baseline.yaml").read_text())
    write(corpus / "tasks" / "fastapi" / "env.yaml", {
        "id": "fastapi/env", "repo": "fastapi", "type": "comprehension", "category": "locate",
        "language": "python",
        "prompt": "KEY-ENV: which function builds the default operation id?",
        "source": {"origin": "original"},
        "grading": {"answer": {"required": ["generate_unique_id"]}}})
    scenario = write(corpus / "scenarios" / "keys.yaml", {
        "name": "keys", "tasks": {"include": ["fastapi/*"]}, "modes": ["baseline"],
        "models": [CLAUDE, CODEX], "model_runner_map": {CLAUDE: "claude", CODEX: "codex"},
        "repetitions": 1, "timeout_s": 90, "max_turns": 6, "workers": 2, "seed": 3})
    subprocess.run([sys.executable, "-m", "copeca_action.cli", "keygen", "--out",
                    str(tmp / "signing")], check=True, capture_output=True, timeout=60)
    env = {k: v for k, v in os.environ.items() if k not in ("COPECA_SIGNING_KEY",
                                                            "COPECA_KEY_PROXY")}
    env.update(keys, PYTHONUNBUFFERED="1", **(env_extra or {}))
    return subprocess.run(
        [sys.executable, "-m", "copeca_action.cli", "run", str(scenario), "--out",
         str(tmp / "out"), "--cache", str(tmp / "cache"), "--base-url", base_url, "--plain",
         "--key", str(tmp / "signing" / "copeca-signing.key"), *extra],
        env=env, capture_output=True, text=True, timeout=600, check=False)


def _files(out: Path) -> Iterator[tuple[str, bytes]]:
    for path in sorted(out.rglob("*")):
        if path.is_file() and not path.is_symlink():
            data = path.read_bytes()
            yield str(path.relative_to(out)), data
            if path.suffix == ".copeca":
                with zipfile.ZipFile(io.BytesIO(data)) as bundle:
                    for info in bundle.infolist():
                        yield f"{path.name}!{info.filename}", bundle.read(info)


def _encodings(value: str) -> list[bytes]:
    raw = value.encode()
    out = [raw, raw.hex().encode(), raw[::-1], json.dumps(value)[1:-1].encode()]
    for pad in range(3):
        enc = base64.b64encode(b"\0" * pad + raw + b"\0\0")
        out.append(enc[-(-8 * pad // 6):(8 * (pad + len(raw))) // 6])
    return out


@pytest.fixture(scope="module")
def forwarded(tmp_path_factory: pytest.TempPathFactory,
              keys: dict[str, str]) -> Iterator[dict[str, Any]]:
    tmp = tmp_path_factory.mktemp("forwarded")
    scripts = [{"id": "env", "match": {"prompt_contains": "KEY-ENV"}, "steps": [
        {"tools": [{"bash": "env"}], "usage": _u(812, 41, 2300, 1200)},
        {"answer": OK, "usage": _u(433, 57, 5100, 80)}]}]
    write(tmp / "scripts" / "env.yaml", {"version": 1, "scripts": scripts})
    with ScriptedServer(tmp / "scripts", seed=3, log_path=tmp / "served.jsonl") as server:
        vendor = Vendor(server.url)
        try:
            proc = _job(tmp, keys, vendor.url)
        finally:
            vendor.shutdown()
            vendor.server_close()
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    served = [json.loads(x) for x in (tmp / "served.jsonl").read_text().splitlines() if x]
    yield {"out": tmp / "out", "seen": vendor.seen, "served": served,
           "records": read_records(tmp / "out" / "results.jsonl"),
           "left": dict(_files(tmp / "out"))}


def test_the_vendor_got_the_real_key_on_every_request(forwarded: dict[str, Any],
                                                      keys: dict[str, str]) -> None:
    seen = forwarded["seen"]
    posts = [s for s in seen if s["method"] == "POST"]
    assert {s["path"].split("?")[0] for s in posts} >= {"/v1/messages", "/v1/responses"}
    for s in posts:
        if s["path"].startswith("/v1/messages"):
            assert s.get("x-api-key") == keys["ANTHROPIC_API_KEY"], s["path"]
        else:
            assert s.get("authorization") == f"Bearer {keys['OPENAI_API_KEY']}", s["path"]
    for s in seen:  # nothing but the real key ever reached the vendor
        creds = [v for k, v in s.items() if k in ("x-api-key", "authorization")]
        assert all(keys["ANTHROPIC_API_KEY"] in c or keys["OPENAI_API_KEY"] in c
                   for c in creds), s


def test_the_agents_held_only_the_placeholder(forwarded: dict[str, Any]) -> None:
    records = forwarded["records"]
    assert {r.runner for r in records} == {"claude", "codex"}
    for r in records:
        assert r.outcome == "ok" and r.correct, (r.runner, r.error)
        assert r.endpoint == "real" and "key_in_agent_env" not in r.flags
        stdout = (forwarded["out"] / r.run_dir / "stdout.jsonl").read_bytes()
        assert PLACEHOLDER_PREFIX.encode() in stdout, r.runner  # its `env` ran and showed it


def test_no_file_of_the_job_holds_the_key(forwarded: dict[str, Any],
                                          keys: dict[str, str]) -> None:
    left = forwarded["left"]
    assert any(p.endswith(".copeca") for p in left) and len(left) > 15
    found = [f"{name} in {path}" for name, value in keys.items() for needle in
             _encodings(value) for path, data in left.items() if needle in data]
    assert found == []
    # never there to be scrubbed: the raw bytes the agents wrote never held it
    markers = [path for path, data in left.items()
               if b"[REDACTED:env:ANTHROPIC_API_KEY]" in data
               or b"[REDACTED:env:OPENAI_API_KEY]" in data]
    assert markers == []


def test_streamed_tokens_equal_the_servers_ledger(forwarded: dict[str, Any]) -> None:
    api = {"claude": "anthropic", "codex": "openai"}
    for r in forwarded["records"]:
        billed = [e["billed"] for e in forwarded["served"]
                  if e.get("api") == api[r.runner] and "billed" in e]
        assert billed, r.runner
        for field in ("input", "output", "cache_read"):
            assert getattr(r.tokens, field) == sum(b[field] for b in billed), (r.runner, field)


def test_an_unreachable_endpoint_is_an_infra_error_naming_it(tmp_path: Path,
                                                             keys: dict[str, str]) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{probe.getsockname()[1]}"
    proc = _job(tmp_path, keys, dead, "--no-bundle")
    output = proc.stdout + proc.stderr
    assert proc.returncode == 2, output[-3000:]
    assert "Traceback" not in output
    records = read_records(tmp_path / "out" / "results.jsonl")
    assert {r.runner for r in records} == {"claude", "codex"}
    assert all(r.outcome == "infra_error" and not r.correct for r in records), records
    # five endpoint failures in a row stop the job (engine/_scheduler.ENDPOINT_STOP); a run
    # still in flight then is recorded as interrupted
    named = [r for r in records if not (r.error or "").startswith("interrupted")]
    assert {r.runner for r in named} == {"claude", "codex"}
    for r in named:
        assert (r.error or "").startswith("the model endpoint failed"), r.error
        assert dead in (r.error or "") and "key forwarder" in (r.error or ""), r.error
    assert "stopped before spending more" in output
