"""How many concurrent agent conversations the scripted model server sustains.

Each conversation is what a CLI sends for a three-step script: two tool-call turns and an
answer, every turn a streamed request carrying the growing history (about 50 KB, like Claude
Code's, or 40 KB like Codex's). Clients keep their connection alive, as the CLIs do. A bounded
number of conversations runs at each concurrency level, over loopback only; the script prints
conversations and requests per second and request latency percentiles.

    .venv/bin/python bench/scripted_throughput.py [--conversations 200] [--levels 1,8,32,64]
"""

from __future__ import annotations

import argparse
import http.client
import json
import socket
import statistics
import sys
import threading
import time
from typing import Any

from copeca_action.scripted import Script, ScriptedServer

SCRIPT = Script.model_validate({
    "id": "bench", "match": {"prompt_contains": "bench"},
    "steps": [{"text": "Looking.", "tools": [{"read": "a.py"}, {"grep": {"pattern": "f"}}],
               "usage": {"input": 12000, "output": 80, "cache_read": 9000}},
              {"tools": [{"bash": "ls"}], "usage": {"input": 13000, "output": 40}},
              {"answer": "The answer is 42." * 10, "usage": {"input": 14000, "output": 120}}],
    "variation": {"token_jitter": 0.1}})

PADDING = "x" * 45_000  # a system prompt the size of a CLI's


def anthropic_request(prompt: str, history: list[dict[str, Any]]) -> dict[str, Any]:
    return {"model": "claude-sonnet-4-5", "stream": True, "max_tokens": 32000,
            "system": [{"type": "text", "text": PADDING}],
            "tools": [{"name": n, "input_schema": {}} for n in ("Read", "Grep", "Bash")],
            "messages": [{"role": "user", "content": prompt}, *history]}


def openai_request(prompt: str, history: list[dict[str, Any]]) -> dict[str, Any]:
    return {"model": "gpt-5", "stream": True, "instructions": PADDING,
            "tools": [{"type": "function", "name": "exec_command"}],
            "input": [{"type": "message", "role": "user",
                       "content": [{"type": "input_text", "text": prompt}]}, *history]}


def parse_sse(raw: bytes) -> list[tuple[str, dict[str, Any]]]:
    out = []
    for frame in raw.split(b"\n\n"):
        name, data = "", b""
        for line in frame.split(b"\n"):
            if line.startswith(b"event: "):
                name = line[7:].decode()
            elif line.startswith(b"data: "):
                data = line[6:]
        if name:
            out.append((name, json.loads(data)))
    return out


def next_history(api: str, events: list[tuple[str, dict[str, Any]]]) -> tuple[list[Any], bool]:
    """The history items this reply adds (with tool results), and whether it was final."""
    if api == "anthropic":
        calls = [d["content_block"] for n, d in events
                 if n == "content_block_start" and d["content_block"]["type"] == "tool_use"]
        if not calls:
            return [], True
        return [{"role": "assistant", "content": calls},
                {"role": "user", "content": [{"type": "tool_result", "tool_use_id": c["id"],
                                              "content": "result " * 200} for c in calls]}], False
    items = [d["item"] for n, d in events if n == "response.output_item.done"]
    calls = [i for i in items if i["type"] == "function_call"]
    if not calls:
        return [], True
    return [*items, *({"type": "function_call_output", "call_id": c["call_id"],
                       "output": "result " * 200} for c in calls)], False


def conversation(conn: http.client.HTTPConnection, api: str, n: int,
                 latencies: list[float]) -> None:
    path = "/v1/messages" if api == "anthropic" else "/v1/responses"
    build = anthropic_request if api == "anthropic" else openai_request
    history: list[Any] = []
    prompt = f"bench conversation {n}"
    for _ in range(10):
        body = json.dumps(build(prompt, history))
        started = time.perf_counter()
        conn.request("POST", path, body, {"content-type": "application/json"})
        resp = conn.getresponse()
        raw = resp.read()
        latencies.append(time.perf_counter() - started)
        if resp.status != 200:
            raise RuntimeError(f"HTTP {resp.status}: {raw[:200]!r}")
        added, final = next_history(api, parse_sse(raw))
        if final:
            return
        history.extend(added)
    raise RuntimeError("conversation did not end")


def run_level(url_port: int, api: str, concurrency: int, total: int) -> dict[str, float]:
    latencies: list[float] = []
    lock = threading.Lock()
    counter = iter(range(total))
    errors: list[str] = []

    def worker() -> None:
        conn = http.client.HTTPConnection("127.0.0.1", url_port, timeout=60)
        conn.connect()
        assert conn.sock is not None
        conn.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)  # as the CLIs do
        mine: list[float] = []
        try:
            while True:
                with lock:
                    n = next(counter, None)
                if n is None:
                    break
                conversation(conn, api, n, mine)
        except Exception as exc:
            errors.append(repr(exc))
        finally:
            conn.close()
            with lock:
                latencies.extend(mine)

    threads = [threading.Thread(target=worker) for _ in range(concurrency)]
    started = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall = time.perf_counter() - started
    if errors:
        raise RuntimeError(f"{len(errors)} workers failed, first: {errors[0]}")
    latencies.sort()
    return {"wall_s": wall, "conv_per_s": total / wall, "req_per_s": len(latencies) / wall,
            "p50_ms": 1000 * statistics.median(latencies),
            "p95_ms": 1000 * latencies[int(0.95 * (len(latencies) - 1))]}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--conversations", type=int, default=200,
                        help="conversations per level and API (default 200)")
    parser.add_argument("--levels", default="1,8,32,64", help="concurrency levels")
    args = parser.parse_args()
    levels = [int(x) for x in args.levels.split(",")]
    print(f"scripted server throughput: {args.conversations} conversations of 3 streamed "
          "turns per level, loopback, keep-alive")
    print(f"{'api':<10} {'concurrent':>10} {'conv/s':>8} {'req/s':>8} {'p50 ms':>8} "
          f"{'p95 ms':>8} {'wall s':>7}")
    with ScriptedServer([SCRIPT], seed=1) as srv:
        for api in ("anthropic", "openai"):
            for level in levels:
                r = run_level(srv.port, api, level, args.conversations)
                print(f"{api:<10} {level:>10} {r['conv_per_s']:>8.1f} {r['req_per_s']:>8.1f} "
                      f"{r['p50_ms']:>8.2f} {r['p95_ms']:>8.2f} {r['wall_s']:>7.2f}")
        served = srv.served()
    done = sum(c.completed for c in served)
    print(f"conversations completed per the server's own record: {done}/{len(served)}")
    return 0 if done == len(served) else 1


if __name__ == "__main__":
    sys.exit(main())
