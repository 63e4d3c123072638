"""Scrubbing throughput, by kind of content, with the secrets a job registers (a model key, a
GitHub token, the signing key's PEM, DER and raw bytes).

    .venv/bin/python bench/scrub.py [--size-mb 4] [--repeat 3]

Each kind is about --size-mb of bytes scrubbed by `Scrubber.scrub_stream` in 1 MiB pieces,
as `scrub_file` reads them; the best of --repeat runs is printed in MB/s. The kinds:

- transcript: JSON lines as Claude Code writes them (tool calls, tool output with code, paths,
  git hashes, numbers), one secret planted;
- hex: JSON lines of hex noise (what the bundle bench scrubs);
- dump: `od -An -tx1`-style hex with separators over lines (every byte a candidate), one
  secret planted in it;
- numbers: JSON arrays and CSV of small numbers and dates (look like spaced hex, hold none);
- decimal: `od -td1`-style lines (an offset, 16 signed bytes in decimal; every line a run to
  decode), one secret planted in it.
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import random
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from copeca_action._util.scrub import Scrubber

MB = 1_000_000
KEY = "sk-ant-api03-" + "Zq8xW2vN5mT1" * 7
TOKEN = "ghs_" + "b7Yc2Lm9Qx4R" * 3
PEM = ("-----BEGIN PRIVATE KEY-----\n" + base64.b64encode(os.urandom(48)).decode()
       + "\n-----END PRIVATE KEY-----\n")


def _fill(size: int, line: Callable[[random.Random, int], str], plant: str) -> bytes:
    rng = random.Random(7)
    lines: list[str] = []
    total = n = 0
    while total < size:
        text = line(rng, n)
        lines.append(text)
        total += len(text) + 1
        n += 1
    lines[len(lines) // 2] = plant
    return ("\n".join(lines) + "\n").encode()


_CODE = ('def generate_unique_id(route: "APIRoute") -> str:\n    operation_id = f"{route.name}'
         '{route.path_format}"\n    operation_id = re.sub(r"\\W", "_", operation_id)\n')


def transcript(size: int) -> bytes:
    def line(rng: random.Random, n: int) -> str:
        if n % 3 == 0:
            return json.dumps({"type": "assistant", "message": {"content": [{
                "type": "tool_use", "id": f"toolu_{rng.getrandbits(64):016x}", "name": "Bash",
                "input": {"command": f"grep -rn operation_id fastapi/ | head -{n % 50}"}}]}})
        return json.dumps({"type": "user", "message": {"content": [{
            "type": "tool_result", "content": (f"fastapi/routing.py:{rng.randint(1, 4000)}: "
                                               + _CODE * 4 + f"commit {rng.getrandbits(160):040x}"
                                               f" 2024-11-{n % 28 + 1:02d} 13:{n % 60:02d}")}]}})
    return _fill(size, line, json.dumps({"type": "user", "leak": f"key {KEY} here"}))


def hex_noise(size: int) -> bytes:
    def line(rng: random.Random, _: int) -> str:
        return json.dumps({"type": "user", "tool_result": rng.randbytes(1500).hex()})
    return _fill(size, line, json.dumps({"type": "user", "leak": TOKEN}))


def dump(size: int) -> bytes:
    def line(rng: random.Random, _: int) -> str:
        return " " + " ".join(f"{b:02x}" for b in rng.randbytes(16))
    secret = (b"xGITHUB_TOKEN=" + TOKEN.encode() + b"\n").hex()
    planted = "\n".join(" " + " ".join(secret[i:i + 2] for i in range(j, min(j + 32,
                                                                           len(secret)), 2))
                        for j in range(0, len(secret), 32))
    return _fill(size, line, planted)


def numbers(size: int) -> bytes:
    def line(rng: random.Random, n: int) -> str:
        if n % 2:
            return json.dumps({"values": [rng.randint(0, 99) for _ in range(24)]})
        return ", ".join(f"2024-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d} "
                         f"{rng.randint(10, 99)}.{rng.randint(10, 99)}" for _ in range(6))
    return _fill(size, line, "none")


def decimal(size: int) -> bytes:
    def row(offset: int, data: bytes) -> str:
        return f"{offset:07o}" + "".join(f"{b - 256 if b > 127 else b:5d}" for b in data)

    def line(rng: random.Random, n: int) -> str:
        return row(16 * n, rng.randbytes(16))
    secret = b"xGITHUB_TOKEN=" + TOKEN.encode() + b"\n"
    planted = "\n".join(row(16 * j, secret[16 * j:16 * j + 16])
                         for j in range(-(-len(secret) // 16)))
    return _fill(size, line, planted)


def scrub_mb_s(data: bytes, scrubber: Scrubber, repeat: int) -> tuple[float, int]:
    best = float("inf")
    before = sum(scrubber.counts.values())
    for _ in range(repeat):
        pieces = (data[i:i + (1 << 20)] for i in range(0, len(data), 1 << 20))
        start = time.perf_counter()
        out = b"".join(scrubber.scrub_stream(pieces))
        best = min(best, time.perf_counter() - start)
    redactions = (sum(scrubber.counts.values()) - before) // repeat
    assert KEY.encode() not in out and TOKEN.encode() not in out
    return len(data) / MB / best, redactions


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--size-mb", type=float, default=4)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    size = int(args.size_mb * MB)
    scrubber = Scrubber({"ANTHROPIC_API_KEY": KEY, "GITHUB_TOKEN": TOKEN,
                         "secret:signing_key": PEM, "secret:signing_key_raw": os.urandom(32),
                         "secret:signing_key_der": os.urandom(48)})
    for name, make in (("transcript", transcript), ("hex", hex_noise), ("dump", dump),
                       ("numbers", numbers), ("decimal", decimal)):
        data = make(size)
        mb_s, redactions = scrub_mb_s(data, scrubber, args.repeat)
        print(f"{name:11} {len(data) / MB:5.1f} MB  {mb_s:7.1f} MB/s  {redactions} redaction(s)")


if __name__ == "__main__":
    main()
