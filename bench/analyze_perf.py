"""Wall time and peak memory of `copeca-action analyze` on 1k, 10k and 100k records, and
side by side with `copeca analyze` on the same 100k-record copeca-format file.

    .venv/bin/python bench/analyze_perf.py [--copeca PATH-TO-copeca] [--sizes 1000,10000]

Each measurement is one child process (os.wait4 gives its peak RSS). The records are
written by another child first, so this parent stays small: a forked child's peak RSS counts
the parent's memory until exec. Records are simulated: 2 arms, 5 capabilities, tasks ×
repetitions sized to the count, 100 repetitions per task at 100k (so per-task lines get
intervals too).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ANALYZE = [sys.executable, "-m", "copeca_action.cli", "analyze"]


def rows_for(count: int, seed: int = 0) -> list[dict[str, object]]:
    import numpy as np

    from copeca_action.report._simulate import Population, make_rows

    reps = 10 if count <= 10_000 else 100
    tasks = max(1, count // (2 * reps))
    return make_rows(Population(cost_ratio=1.1), tasks, reps, np.random.default_rng(seed))


def as_copeca(row: dict[str, object]) -> dict[str, object]:
    """The same run as a copeca 0.1.0 result line (its field names)."""
    tokens = row["tokens"]
    assert isinstance(tokens, dict)
    return {"task": row["task_id"], "repo": "repo", "category": row["category"],
            "language": row["language"], "difficulty": "medium", "mode": row["arm"],
            "model": row["model"], "runner": row["runner"], "repetition": row["repetition"],
            "timestamp": "2026-11-21T00:00:00+00:00", "correct": row["correct"],
            "correctness_detail": {"required_strings_passed": row["correct"]},
            "num_turns": row["turns"], "num_tool_calls": row["tool_calls"],
            "tool_adopted": row["tool_adopted"], "total_cost_usd": row["cost_usd"],
            "cost_source": "vendor", "duration_ms": 10_000, "context_tokens": 6000,
            "output_tokens": tokens["output"], "input_tokens": tokens["input"],
            "cache_creation_tokens": tokens["cache_write"],
            "cache_read_tokens": tokens["cache_read"], "result_text": "answer text",
            "tool_sequence": ["Read", "Grep"], "error": None, "exit_code": 0,
            "adversarial_flags": {"timeout": False, "budget_exhausted": False,
                                  "error": False, "token_snowball": False,
                                  "talkative_failure": False, "tool_storm": False},
            "test_command_output": None,
            "metadata": {"copeca_version": "0.1.0", "task_version": 1},
            "vendor_cost_usd": row["cost_usd"]}


def measure(argv: list[str]) -> tuple[float, float, float]:
    """(wall seconds, CPU seconds, peak RSS MiB) of one child process. CPU time is printed
    too because this machine is shared: under load, wall time mostly measures the queue."""
    started = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - started
    code = os.waitstatus_to_exitcode(status)
    if code != 0:
        err = proc.stderr.read().decode() if proc.stderr else ""
        raise SystemExit(f"{argv[0]} failed ({code}): {err[-2000:]}")
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


def write(path: Path, rows: list[dict[str, object]]) -> Path:
    with path.open("w") as handle:
        for row in rows:
            handle.write(json.dumps(row) + "\n")
    return path


def generate(folder: Path, sizes: list[int]) -> None:
    for size in sizes:
        rows = rows_for(size)
        write(folder / f"ours-{size}.jsonl", rows)
        if size == max(sizes):
            write(folder / f"copeca-{size}.jsonl", [as_copeca(r) for r in rows])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="1000,10000,100000")
    parser.add_argument("--copeca", help="the copeca CLI (default: `copeca` on PATH)")
    parser.add_argument("--generate", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    if args.generate:
        generate(args.generate, sizes)
        return 0
    copeca = args.copeca or shutil.which("copeca")
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        subprocess.run([sys.executable, __file__, "--generate", tmp, "--sizes", args.sizes],
                       check=True)
        print(f"load average before: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
        print("| file | records | tool | wall s | CPU s | peak MiB |")
        print("|---|---:|---|---:|---:|---:|")
        for size in sizes:
            ours = base / f"ours-{size}.jsonl"
            records = sum(1 for _ in ours.open("rb"))
            wall, cpu, mem = measure([*ANALYZE, str(ours), "--format", "json"])
            print(f"| copeca-action format | {records:,} | copeca-action analyze | "
                  f"{wall:.2f} | {cpu:.2f} | {mem:.0f} |", flush=True)
            if size != max(sizes):
                continue
            theirs = base / f"copeca-{size}.jsonl"
            wall, cpu, mem = measure([*ANALYZE, str(theirs), "--format", "json"])
            print(f"| copeca format | {records:,} | copeca-action analyze | {wall:.2f} | "
                  f"{cpu:.2f} | {mem:.0f} |", flush=True)
            if not copeca:
                print("| copeca format | – | copeca analyze | not installed (pip install "
                      "copeca into a scratch venv, pass --copeca) | | |")
                continue
            for fmt in ("markdown", "json"):
                wall, cpu, mem = measure([copeca, "analyze", str(theirs), "--format", fmt])
                print(f"| copeca format | {records:,} | copeca analyze --format {fmt} | "
                      f"{wall:.2f} | {cpu:.2f} | {mem:.0f} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
