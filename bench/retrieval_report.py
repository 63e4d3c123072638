"""What the Report's retrieval section costs: build_report with and without retrieval data on
the same simulated records (2 arms; every run carries all three trajectories and four scores),
and reading a results.jsonl whose records carry it.

    .venv/bin/python bench/retrieval_report.py [--sizes 1000,10000] [--resamples 10000]

Prints CPU and wall seconds (the machine may be shared: wall can exceed CPU).
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from copeca_action.records import RunRecord, read_rows, write_records
from copeca_action.report import Settings, build_report, table_from_rows
from copeca_action.report._simulate import Population, make_rows


def with_retrieval(row: dict[str, Any], rng: np.random.Generator) -> dict[str, Any]:
    steps = int(rng.integers(1, 30))
    curve = np.minimum(1.0, np.cumsum(rng.uniform(0, 0.15, steps))).tolist()
    traj = {"auc": float(np.mean(curve)), "redundancy": float(rng.uniform(0, 0.5)),
            "coverage_by_step": curve}
    gold = int(rng.integers(1, 400))
    inter = int(rng.integers(0, gold + 1))
    pred = inter + int(rng.integers(0, 800))
    cov, prec = inter / gold, inter / pred if pred else 1.0
    score = {"intersection": inter, "gold": gold, "pred": pred, "coverage": cov,
             "precision": prec, "f1": 2 * cov * prec / (cov + prec) if cov + prec else 0.0}
    return {**row, "retrieval": {
        "steps": steps, "file": score, "symbol": score, "span": score, "editloc": score,
        "trajectory_file": traj, "trajectory_symbol": traj, "trajectory_span": traj}}


def timed(fn: Any) -> tuple[Any, float, float]:
    wall, cpu = time.perf_counter(), time.process_time()
    out = fn()
    return out, time.process_time() - cpu, time.perf_counter() - wall


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="1000,10000")
    parser.add_argument("--resamples", type=int, default=10_000)
    args = parser.parse_args()
    settings = Settings(resamples=args.resamples)
    for size in (int(s) for s in args.sizes.split(",")):
        reps = 10
        rng = np.random.default_rng(0)
        rows = make_rows(Population(), max(1, size // (2 * reps)), reps, rng)
        plain = [RunRecord(**r) for r in rows]
        scored = [RunRecord(**with_retrieval(r, rng)) for r in rows]
        _, cpu0, wall0 = timed(lambda p=plain: build_report(p, settings))
        report, cpu1, wall1 = timed(lambda s=scored: build_report(s, settings))
        assert report.retrieval is not None
        tasks = report.retrieval.comparisons[0].lines[0].tasks
        print(f"{len(rows)} records, {tasks} tasks, {args.resamples} resamples")
        print(f"  build_report without retrieval: {cpu0:6.2f} s CPU {wall0:6.2f} s wall")
        print(f"  build_report with retrieval:    {cpu1:6.2f} s CPU {wall1:6.2f} s wall "
              f"(section: +{cpu1 - cpu0:.2f} s CPU)")
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "results.jsonl"
            write_records(path, scored)
            _, cpu2, wall2 = timed(lambda p=path: table_from_rows(read_rows(p)[0]))
            print(f"  read {path.stat().st_size / 1e6:.1f} MB results + table: "
                  f"{cpu2:6.2f} s CPU {wall2:6.2f} s wall")


if __name__ == "__main__":
    main()
