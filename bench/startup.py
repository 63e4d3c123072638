"""Start-up, `--help` and `validate` of `copeca-action` beside `copeca` (the anchor), each a new
process, interleaved, median wall and CPU time of --repeat runs, with the ratio.

    .venv/bin/python bench/startup.py [--copeca /work/anchor/bin/copeca] [--repeat 9]

- start-up: importing the CLI's entry module (what every command pays before it works):
  `python -c "import copeca_action.cli"` beside `python -c "import copeca.cli"`, each with
  its own interpreter;
- `--help`: the top-level help;
- validate: each tool's bundled task corpus (the task counts differ and are printed);
- analyze of one record (copeca's format, markdown) is in bench/analyze_perf.py.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

OURS = [sys.executable, "-m", "copeca_action.cli"]


def measure(argv: list[str]) -> tuple[float, float]:
    """(wall seconds, CPU seconds) of one child process; it must succeed."""
    started = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - started
    if os.waitstatus_to_exitcode(status) != 0:
        err = proc.stderr.read().decode() if proc.stderr else ""
        raise SystemExit(f"{' '.join(argv)} failed: {err[-2000:]}")
    return wall, usage.ru_utime + usage.ru_stime


def anchor_paths(copeca: Path) -> tuple[Path, Path]:
    """The anchor's interpreter and its bundled data folder (tasks, repos.yaml)."""
    python = copeca.parent / "python"
    out = subprocess.run([str(python), "-c", "import copeca, os; "
                          "print(os.path.dirname(copeca.__file__))"],
                         capture_output=True, text=True, check=True).stdout.strip()
    return python, Path(out) / "data"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--copeca", type=Path, default=Path(shutil.which("copeca") or
                                                            "/work/anchor/bin/copeca"))
    parser.add_argument("--repeat", type=int, default=9)
    args = parser.parse_args()
    if not args.copeca.exists():
        print(f"anchor not found at {args.copeca}: install copeca into a venv, pass --copeca")
        return 2
    python, data = anchor_paths(args.copeca)
    ours_tasks = sum(1 for _ in (Path(__file__).resolve().parent.parent / "corpus" / "tasks")
                     .rglob("*.yaml"))
    their_tasks = sum(1 for _ in (data / "tasks").rglob("*.yaml"))
    items = [
        ("start-up (import the CLI module)", [sys.executable, "-c", "import copeca_action.cli"],
         [str(python), "-c", "import copeca.cli"]),
        ("`--help`", [*OURS, "--help"], [str(args.copeca), "--help"]),
        (f"`validate` (bundled corpus: {ours_tasks} vs {their_tasks} tasks)",
         [*OURS, "validate", "-q"],
         [str(args.copeca), "validate", str(data / "tasks"), "--repos",
          str(data / "repos.yaml")]),
    ]
    print(f"load average before: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores; "
          f"median of {args.repeat} interleaved runs; ratio = copeca / copeca-action "
          "(> 1: we are faster)")
    print("| item | copeca-action wall s (CPU s) | copeca wall s (CPU s) | ratio wall (CPU) |")
    print("|---|---:|---:|---:|")
    for label, ours, theirs in items:
        a: list[tuple[float, float]] = []
        b: list[tuple[float, float]] = []
        measure(ours), measure(theirs)  # warm the page cache
        for _ in range(args.repeat):
            a.append(measure(ours))
            b.append(measure(theirs))
        wa, ca = (statistics.median(x) for x in zip(*a, strict=True))
        wb, cb = (statistics.median(x) for x in zip(*b, strict=True))
        print(f"| {label} | {wa:.3f} ({ca:.3f}) | {wb:.3f} ({cb:.3f}) | {wb / wa:.2f}× "
              f"({cb / ca:.2f}×) |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
