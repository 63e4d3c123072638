"""Run one real CLI inside a fresh network namespace (`unshare -rn`), with the scripted server
inside it too, and report every attempt to reach anything else.

The namespace has only loopback. Every IPv4 address is routed to it (`ip route add local
default dev lo`), and traps listen on TCP 80/443 and UDP 53, so a DNS query or an HTTPS
connection to any host is recorded instead of silently failing. Prints one JSON object.
Usage: unshare -rn python netns_probe.py CLI WORKDIR
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import threading
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from copeca_action.scripted import ScriptedServer
from tests.integration.cli.harness import SCRIPTS, run_cli

HITS: list[str] = []


def _dns_name(packet: bytes) -> str:
    labels, i = [], 12
    while i < len(packet) and packet[i]:
        n = packet[i]
        labels.append(packet[i + 1:i + 1 + n].decode("ascii", "replace"))
        i += n + 1
    return ".".join(labels)


def _tcp_trap(port: int) -> None:
    srv = socket.socket()
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    srv.bind(("0.0.0.0", port))
    srv.listen(16)

    def serve() -> None:
        while True:
            conn, _ = srv.accept()
            HITS.append(f"tcp {conn.getsockname()[0]}:{port}")
            conn.close()

    threading.Thread(target=serve, daemon=True).start()


def _udp_trap() -> None:
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.bind(("0.0.0.0", 53))

    def serve() -> None:
        while True:
            data, _ = sock.recvfrom(4096)
            HITS.append(f"dns {_dns_name(data)}")

    threading.Thread(target=serve, daemon=True).start()


def main() -> None:
    cli, workdir = sys.argv[1], Path(sys.argv[2])
    subprocess.run(["ip", "link", "set", "lo", "up"], check=True)
    subprocess.run(["ip", "route", "add", "local", "default", "dev", "lo", "table", "local"],
                   check=True)
    for port in (80, 443):
        _tcp_trap(port)
    _udp_trap()
    # The traps work: an outside address reaches them.
    socket.create_connection(("203.0.113.7", 443), timeout=2).close()
    probe = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    probe.sendto(b"\0" * 12 + b"\x07example\x03com\0", ("192.0.2.53", 53))
    for _ in range(500):  # up to 10 s on a loaded machine
        if len(HITS) >= 2:
            break
        threading.Event().wait(0.02)
    self_test = sorted(HITS)
    HITS.clear()
    with ScriptedServer(SCRIPTS, seed=5) as server:
        run = run_cli(server, cli, "CLI-READ What does greeting.txt say?", workdir)
        paths = sorted({str(r.get("path")) for r in server.requests()})
    threading.Event().wait(0.5)  # a late connection attempt still lands in HITS
    served = run.served
    print(json.dumps({
        "self_test": self_test, "hits": HITS, "paths": paths,
        "exit_code": run.result.exit_code, "answer": run.transcript.answer,
        "tokens_match": served is not None and run.transcript.tokens == served.tokens,
        "problems": run.transcript.problems}))


if __name__ == "__main__":
    main()
