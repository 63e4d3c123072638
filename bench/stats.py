"""Proof by simulation: interval coverage (deltas and each arm), false verdicts, adaptive vs
fixed sampling.

    .venv/bin/python bench/stats.py            # full: ≥2,000 experiments per setting
    .venv/bin/python bench/stats.py --quick    # a smoke version (the test runs a smaller one)

Populations have a known true delta (copeca_action/report/_simulate.py): lognormal run costs,
failed runs 1.5× dearer, task heterogeneity in accuracy (logit sd 1) and cost (log sd 0.8).
Bootstrap resamples are fewer than the report's 10,000 (2,000 / 1,000) to keep the run to a
few minutes; the quantiles used (≥1.25%) are stable at that count.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # a shared machine: one core for BLAS
os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np

from copeca_action.report._simulate import Population, arm_coverage, coverage, sequential
from copeca_action.report._spending import RHO
from copeca_action.scenario import Adaptive

ACCURACIES = (0.2, 0.5, 0.8, 0.95)
TASKS = (3, 5, 10, 20, 60)
REPS = (1, 3, 10)
LOW, HIGH = 0.935, 0.965


def coverage_grid(experiments: int, resamples: int, rng: np.random.Generator) -> list[dict]:
    rows = []
    print(f"## Coverage of the 95% interval for delta ({experiments} experiments per setting, "
          f"{resamples} resamples; true delta from cost ratio 1.2 and a +0.2 logit accuracy "
          "shift)")
    print("| accuracy | tasks | reps | true delta | coverage | no ratio | median log width | ok |")
    print("|---:|---:|---:|---:|---:|---:|---:|---|")
    for acc in ACCURACIES:
        for tasks in TASKS:
            for reps in REPS:
                pop = Population(accuracy=acc, cost_ratio=1.2, logit_shift=0.2)
                r = coverage(pop, tasks, reps, experiments, resamples, rng)
                ok = LOW <= r["coverage"] <= HIGH
                flag = "yes" if ok else ("over" if r["coverage"] > HIGH else "UNDER")
                print(f"| {acc} | {tasks} | {reps} | {pop.true_delta():+.3f} | "
                      f"{r['coverage']:.3f} | {r['undefined']:.3f} | "
                      f"{r['median_log_width']:.2f} | {flag} |", flush=True)
                rows.append({"accuracy": acc, "tasks": tasks, "reps": reps, **r, "ok": ok})
    return rows


def arm_table(experiments: int, resamples: int, rng: np.random.Generator) -> list[dict]:
    print(f"\n## Coverage of one arm's 95% intervals ({experiments} experiments per setting, "
          f"{resamples} resamples): cost per correct (cluster bootstrap, as the report), "
          "accuracy (Wilson on the design-effect sample size, as the report; and the cluster "
          "bootstrap for comparison)")
    print("| accuracy | tasks | reps | true cpc | cpc | accuracy: Wilson-deff | accuracy: "
          "bootstrap | nothing correct | median log width (finite) |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    rows = []
    for acc in (0.2, 0.5, 0.9):
        for tasks in (3, 10, 30):
            for reps in (1, 3):
                r = arm_coverage(Population(accuracy=acc), tasks, reps, experiments,
                                 resamples, rng)
                print(f"| {acc} | {tasks} | {reps} | {r['true_cpc']:.2f} | {r['cpc']:.3f} | "
                      f"{r['accuracy']:.3f} | {r['accuracy_bootstrap']:.3f} | "
                      f"{r['zero']:.3f} | {_width(r['median_log_width'])} |", flush=True)
                rows.append({"accuracy": acc, "tasks": tasks, "reps": reps, **r})
    return rows


def _width(value: float) -> str:
    return "none finite" if np.isnan(value) else f"{value:.2f}"


def sequential_table(experiments: int, resamples: int, rng: np.random.Generator) -> list[dict]:
    adaptive = Adaptive(min_repetitions=2, step=1, max_repetitions=10, alpha=0.05)
    print(f"\n## Adaptive (looks at 2..10 repetitions, alpha spending t^{RHO}) vs fixed "
          f"(10 repetitions), {experiments} experiments, fail threshold +10%")
    print("| true delta | tasks | accuracy | regression: adaptive / fixed | improvement: "
          "adaptive / fixed | mean runs: adaptive / fixed | runs saved |")
    print("|---:|---:|---:|---|---|---|---:|")
    rows = []
    for ratio in (1.0, 1.10, 0.5, 2.0, 0.67, 1.5):
        for tasks in (10, 30):
            acc = 0.6
            pop = Population(accuracy=acc, cost_ratio=ratio)
            r = sequential(pop, tasks, adaptive, experiments, resamples, rng)
            saved = 1 - r["adaptive_runs"] / r["fixed_runs"]
            print(f"| {pop.true_delta():+.2f} | {tasks} | {acc} | "
                  f"{r['adaptive_regression']:.3f} / {r['fixed_regression']:.3f} | "
                  f"{r['adaptive_improvement']:.3f} / {r['fixed_improvement']:.3f} | "
                  f"{r['adaptive_runs']:.0f} / {r['fixed_runs']:.0f} | {saved:.0%} |",
                  flush=True)
            rows.append({"true_delta": pop.true_delta(), "tasks": tasks, **r, "saved": saved})
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--seed", type=int, default=20261121)
    parser.add_argument("--json", help="also write the figures here")
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    started = time.perf_counter()
    n_cov, n_seq = (300, 300) if args.quick else (2000, 2000)
    cov = coverage_grid(n_cov, 1000 if args.quick else 2000, rng)
    seq = sequential_table(n_seq, 1000, rng)
    arms = arm_table(n_cov, 1000 if args.quick else 2000, rng)
    missed = [r for r in cov if not r["ok"]]
    print(f"\n{len(cov) - len(missed)}/{len(cov)} coverage settings within "
          f"[{LOW:.1%}, {HIGH:.1%}]; {time.perf_counter() - started:.0f} s")
    if args.json:
        with open(args.json, "w") as handle:
            json.dump({"coverage": cov, "sequential": seq, "arms": arms}, handle, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
