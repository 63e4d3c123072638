"""Wall time, CPU time and peak memory of `copeca-action analyze` beside `copeca analyze`
(the anchor) on the same copeca-format files of 1, 10k and 100k records (copeca's real line
size, ~2.9 KB), md and json, with the ratio; then on copeca-action's own format.

    .venv/bin/python bench/analyze_perf.py [--copeca PATH-TO-copeca] [--sizes 1,10000]

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
import threading
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


ANSWER = ("The request is routed by `APIRouter.add_api_route`, which builds an `APIRoute` "
          "whose `get_route_handler` wraps the endpoint; the dependency tree is solved in "
          "`solve_dependencies` before the body is validated. ") * 7
"""About the length of a real final answer (copeca keeps up to 5,000 characters)."""


def as_copeca(row: dict[str, object]) -> dict[str, object]:
    """The same run as a copeca result line, in its layout at fc9c5b9 (June 2026 on: with
    `control`, `cli_version`, the tool version fields and a real answer's length): about
    2.9 KB a line, as copeca writes them."""
    tokens = row["tokens"]
    assert isinstance(tokens, dict)
    return {"task": row["task_id"], "repo": "repo", "category": row["category"],
            "control": row.get("control", False),
            "language": row["language"], "difficulty": "medium", "mode": row["arm"],
            "mode_append_system_prompt": None,
            "model": row["model"], "runner": row["runner"], "repetition": row["repetition"],
            "timestamp": "2026-11-21T00:00:00.123456+00:00", "correct": row["correct"],
            "correctness_detail": {"required_strings_passed": row["correct"],
                                   "all_of_passed": row["correct"],
                                   "forbidden_strings_passed": True,
                                   "test_command_passed": None},
            "num_turns": row["turns"], "num_tool_calls": row["tool_calls"],
            "tool_adopted": row["tool_adopted"], "tool_version": "1.4.2",
            "tool_path": "/usr/local/bin/code-search-mcp",
            "tool_under_test": ["mcp__code_search__"],
            "cli_version": "2.1.197 (Claude Code)",
            "total_cost_usd": row["cost_usd"],
            "cost_source": "vendor", "duration_ms": 10_000, "context_tokens": 6000,
            "output_tokens": tokens["output"], "input_tokens": tokens["input"],
            "cache_creation_tokens": tokens["cache_write"],
            "cache_read_tokens": tokens["cache_read"], "result_text": ANSWER,
            "tool_sequence": ["Read", "Grep", "mcp__code_search__search", "Read", "Glob",
                              "Read", "Bash", "Read"],
            "error": None, "exit_code": 0,
            "adversarial_flags": {"timeout": False, "budget_exhausted": False,
                                  "error": False, "token_snowball": False,
                                  "talkative_failure": False, "tool_storm": False},
            "test_command_output": None,
            "metadata": {"copeca_version": "0.1.0", "task_version": 1},
            "vendor_cost_usd": row["cost_usd"], "computed_cost_usd": row["cost_usd"]}


def measure(argv: list[str]) -> tuple[float, float, float, float, float]:
    """(wall seconds, CPU seconds, peak RSS MiB, peak tree PSS MiB, peak tree RSS MiB) of
    a command, from two runs. CPU time is printed too because this machine is shared: under
    load, wall time mostly measures the queue. The peak RSS is the process's own (or its
    largest descendant's). The tree peaks add up the process and its descendants at once
    (copeca-action forks a reading helper and a power child), sampled every 5 ms in a second
    run (reading smaps takes CPU the timed run must not lose): PSS counts a page that a fork
    shares once in all (each sharer's part of it), the memory the tree really holds; the
    RSS sum counts it once per process: an upper bound."""
    wall, cpu, peak, _ = _run(argv, sample=False)
    _, _, _, tree = _run(argv, sample=True)
    return wall, cpu, peak, tree[0] / 1024, max(peak, tree[1] / 1024)


def _run(argv: list[str], *, sample: bool) -> tuple[float, float, float, list[int]]:
    started = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    tree = [0, 0]
    done = threading.Event()
    sampler = threading.Thread(target=sample_tree, args=(proc.pid, tree, done))
    if sample:
        sampler.start()
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - started
    done.set()
    if sample:
        sampler.join()
    code = os.waitstatus_to_exitcode(status)
    if code != 0:
        err = proc.stderr.read().decode() if proc.stderr else ""
        raise SystemExit(f"{argv[0]} failed ({code}): {err[-2000:]}")
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, tree


def sample_tree(pid: int, peak: list[int], done: threading.Event) -> None:
    """The largest sums of Pss and of VmRSS (KiB) over `pid` and its descendants, until
    `done`."""
    while not done.wait(0.005):
        pss = rss = 0
        todo = [pid]
        while todo:
            here = todo.pop()
            try:
                status = Path(f"/proc/{here}/status").read_text()
                rollup = Path(f"/proc/{here}/smaps_rollup").read_text()
                kids = Path(f"/proc/{here}/task/{here}/children").read_text().split()
            except OSError:
                continue
            rss += _kib(status, "VmRSS:")
            pss += _kib(rollup, "Pss:")
            todo += [int(k) for k in kids]
        peak[0] = max(peak[0], pss)
        peak[1] = max(peak[1], rss)


def _kib(text: str, key: str) -> int:
    return next((int(line.split()[1]) for line in text.splitlines() if line.startswith(key)),
                0)


def write(path: Path, rows: list[dict[str, object]]) -> Path:
    with path.open("w") as handle:
        for row in rows:
            handle.write(json.dumps(row) + "\n")
    return path


def generate(folder: Path, sizes: list[int]) -> None:
    for size in sizes:
        rows = rows_for(size)[:size]
        write(folder / f"ours-{size}.jsonl", rows)
        write(folder / f"copeca-{size}.jsonl", [as_copeca(r) for r in rows])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="1,10000,100000")
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
        print("Same copeca-format file for both tools, measured one after the other; the "
              "ratio is copeca's time over ours (> 1: we are faster).")
        print("| records | bytes/line | format | copeca-action wall s (CPU s, MiB, tree PSS MiB, "
              "tree RSS-sum MiB) "
              "| copeca wall s (CPU s, MiB) | ratio wall (CPU) |")
        print("|---:|---:|---|---:|---:|---:|")
        for size in sizes:
            theirs = base / f"copeca-{size}.jsonl"
            per_line = theirs.stat().st_size / max(1, size)
            for ours_fmt, their_fmt in (("md", "markdown"), ("json", "json")):
                w1, c1, m1, t1, r1 = measure([*ANALYZE, str(theirs), "--format", ours_fmt])
                anchor = "not installed (pip install copeca into a scratch venv, --copeca)"
                ratio = "–"
                if copeca:
                    w2, c2, m2, _, _ = measure([copeca, "analyze", str(theirs), "--format",
                                          their_fmt])
                    anchor = f"{w2:.2f} ({c2:.2f}, {m2:.0f})"
                    ratio = f"{w2 / w1:.1f}× ({c2 / c1:.1f}×)"
                print(f"| {size:,} | {per_line:,.0f} | {ours_fmt} | {w1:.2f} ({c1:.2f}, "
                      f"{m1:.0f}, {t1:.0f}, {r1:.0f}) | {anchor} | {ratio} |", flush=True)
        print()
        print("copeca-action's own format (no anchor reads it):")
        print("| records | format | wall s | CPU s | peak MiB | tree PSS MiB | tree RSS-sum MiB |")
        print("|---:|---|---:|---:|---:|---:|---:|")
        for size in sizes:
            ours = base / f"ours-{size}.jsonl"
            for fmt in ("md", "json"):
                wall, cpu, mem, pss, rss = measure([*ANALYZE, str(ours), "--format", fmt])
                print(f"| {size:,} | {fmt} | {wall:.2f} | {cpu:.2f} | {mem:.0f} | {pss:.0f} "
                      f"| {rss:.0f} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
