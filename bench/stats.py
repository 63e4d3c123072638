"""Proof by simulation (#16): interval coverage, one-sided false verdicts under the null with
and without adaptive stopping, unequal run counts, zero-correct arms, the control gate, power
curves per design, each arm's intervals.

    nice .venv/bin/python bench/stats.py                 # full: ≥2,000 experiments per setting
    nice .venv/bin/python bench/stats.py --quick         # a smoke version
    nice .venv/bin/python bench/stats.py --json out.json # also write every figure

Populations (copeca_action/report/_simulate.py) have a known true delta: per task, accuracy
logit-normal (sd 1) around the stated accuracy and a cost scale (lognormal sd 0.8, or skewed:
lognormal sd 1.5, or heavy-tailed: Pareto shape 2); per run lognormal cost noise (sd 0.5),
failed runs 1.5× dearer; the tool's cost effect varies between tasks (log sd `effect_sd`).
Bootstrap resamples are 1,000 (the report uses 10,000); the quantiles used (≥ 1.25%) are
stable at that count. The statistic is the report's: per-task means, hybrid interval.
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

from copeca_action.report._power import Design, power, rates
from copeca_action.report._simulate import (
    Population,
    arm_coverage,
    coverage,
    draw,
    sequential,
)
from copeca_action.report._spending import RHO
from copeca_action.report._stats import paired_bootstrap
from copeca_action.scenario import Adaptive

LOW, HIGH = 0.935, 0.965
ONE_SIDED = 0.025
RESAMPLES = 1000


def _row(*cells: object) -> None:
    print("| " + " | ".join(str(c) for c in cells) + " |", flush=True)


def coverage_grid(experiments: int, rng: np.random.Generator) -> list[dict]:
    print(f"## Coverage of the 95% interval for delta ({experiments} experiments per setting; "
          "cost ratio 1.2, +0.2 logit accuracy shift, per-task effect sd 0.3)")
    _row("population", "accuracy", "tasks", "reps", "true delta", "coverage", "above / below",
         "one arm 0 correct", "unbounded", "ok")
    _row(*["---"] * 10)
    rows = []
    populations = {"lognormal 0.8": {}, "skewed (lognormal 1.5)": {"task_cost_sd": 1.5},
                   "heavy (Pareto 2)": {"task_cost": "pareto", "pareto_shape": 2.0}}
    for name, extra in populations.items():
        grid = ([(a, n, r) for a in (0.05, 0.2, 0.5, 0.95) for n in (7, 15, 30, 100)
                 for r in (1, 3, 10)] if name == "lognormal 0.8"
                else [(a, n, 3) for a in (0.2, 0.5) for n in (7, 15, 30, 100)])
        for acc, tasks, reps in grid:
            pop = Population(accuracy=acc, cost_ratio=1.2, logit_shift=0.2, effect_sd=0.3,
                             **extra)  # type: ignore[arg-type]
            r = coverage(pop, tasks, reps, experiments, RESAMPLES, rng)
            finite = r["unbounded"] < 0.5
            ok = (LOW <= r["coverage"] <= HIGH) if finite else r["coverage"] >= LOW
            flag = "yes" if ok else ("over" if r["coverage"] > HIGH else "UNDER")
            _row(name, acc, tasks, reps, f"{pop.true_delta():+.3f}", f"{r['coverage']:.3f}",
                 f"{r['above']:.3f} / {r['below']:.3f}", f"{r['zero_arm']:.3f}",
                 f"{r['unbounded']:.2f}", flag)
            rows.append({"population": name, "accuracy": acc, "tasks": tasks, "reps": reps,
                         **r, "ok": ok})
    return rows


def unequal_counts(experiments: int, rng: np.random.Generator) -> list[dict]:
    print(f"\n## Unequal run counts (no true difference; the tool arm loses each run after the "
          f"first with probability `drop` on the dearer half of tasks), {experiments} "
          "experiments")
    _row("estimand", "drop", "tasks", "reps", "median log bias", "coverage",
         "false improvement", "false dearer")
    _row(*["---"] * 8)
    rows = []
    for drop in (0.3, 0.6):
        for tasks in (7, 30):
            for means in (False, True):
                pop = Population(accuracy=0.5, drop=drop)
                r = coverage(pop, tasks, 3, experiments, RESAMPLES, rng, task_means=means)
                _row("per-task means" if means else "ratio of sums (before)", drop, tasks, 3,
                     f"{r['bias']:+.3f}", f"{r['coverage']:.3f}", f"{r['below']:.3f}",
                     f"{r['above']:.3f}")
                rows.append({"drop": drop, "tasks": tasks, "task_means": means, **r})
    return rows


def null_errors(experiments: int, rng: np.random.Generator) -> list[dict]:
    print(f"\n## One-sided false verdicts under the null ({experiments} experiments; per-task "
          "effect sd 0.3 around no change; a false regression here is the interval above 0, "
          "stricter than the +10% fail threshold). Adaptive: looks at 2..10 repetitions, "
          f"alpha spending t^{RHO:g}, the published verdict is the stopping look's")
    _row("tasks", "accuracy", "fixed (10 reps): improvement / regression",
         "adaptive: improvement / regression", "ok (≤ 2.5% each)")
    _row(*["---"] * 5)
    adaptive = Adaptive(min_repetitions=2, step=1, max_repetitions=10, alpha=0.05)
    rows = []
    for tasks in (7, 15, 30, 100):
        for acc in (0.2, 0.6, 0.9):
            pop = Population(accuracy=acc, effect_sd=0.3)
            r = sequential(pop, tasks, adaptive, experiments, RESAMPLES, rng, fail=0.0)
            worst = max(r["fixed_improvement"], r["fixed_regression"],
                        r["adaptive_improvement"], r["adaptive_regression"])
            _row(tasks, acc, f"{r['fixed_improvement']:.3f} / {r['fixed_regression']:.3f}",
                 f"{r['adaptive_improvement']:.3f} / {r['adaptive_regression']:.3f}",
                 "yes" if worst <= ONE_SIDED else "NO")
            rows.append({"tasks": tasks, "accuracy": acc, **r, "ok": worst <= ONE_SIDED})
    return rows


def control_gate(experiments: int, rng: np.random.Generator) -> list[dict]:
    print(f"\n## The control gate ({experiments} experiments; 2 repetitions; `invalid` when "
          "the control interval lies outside ±15%; the report gates only from 5 control "
          "tasks)")
    _row("control tasks", "P(invalid): no drift", "1.3× drift", "2× drift",
         "control interval unbounded (no drift)", "gate in the report")
    _row(*["---"] * 6)
    rows = []
    for k in (3, 5, 8, 12, 20):
        out = {}
        for ratio in (1.0, 1.3, 2.0):
            invalid = unbounded = 0
            for start in range(0, experiments, 500):
                e = min(500, experiments - start)
                d = draw(Population(accuracy=0.6, cost_ratio=ratio), e, k, 2, rng)
                rt, rb = d.runs()
                bs = paired_bootstrap(*d.sums(), resamples=RESAMPLES, seed=rng, runs_t=rt,
                                      runs_b=rb, task_means=True)
                invalid += int(((bs.low > 0.15) | (bs.high < -0.15)).sum())
                unbounded += int((~np.isfinite(bs.high) | (bs.low <= -1)).sum())
            out[ratio] = invalid / experiments
            if ratio == 1.0:
                out["unbounded"] = unbounded / experiments
        _row(k, f"{out[1.0]:.3f}", f"{out[1.3]:.3f}", f"{out[2.0]:.3f}",
             f"{out['unbounded']:.3f}", "yes" if k >= 5 else "no (warns: need 5)")
        rows.append({"control_tasks": k, "no_drift": out[1.0], "drift_1_3": out[1.3],
                     "drift_2": out[2.0], "unbounded": out["unbounded"]})
    return rows


def power_table(experiments: int) -> list[dict]:
    print(f"\n## Power per design ({experiments} experiments; documented default population: "
          "accuracy 0.6, task cost sd 0.8, per-task effect sd 0.2; alpha 0.05; fail +10%): "
          "the share called an improvement / a regression at a true delta, and the minimum "
          "detectable effects at 80% power (`plan --power`)")
    ratios = [0.5, 0.8, 0.9, 1.0, 1.2, 1.5, 2.0]
    _row("tasks", "reps", *[f"{c - 1:+.0%}" for c in ratios], "MDE improvement",
         "MDE regression")
    _row(*["---"] * (4 + len(ratios)))
    rows = []
    for tasks in (7, 15, 30, 60, 100):
        for reps in (1, 3):
            design = Design(tasks, reps)
            curve = rates(design, ratios, experiments=experiments, resamples=RESAMPLES,
                          seed=tasks * 10 + reps)
            mde = power(design, experiments=experiments, resamples=RESAMPLES,
                        seed=tasks * 10 + reps)
            cells = [f"{curve[c][0]:.2f}" if c < 1 else f"{curve[c][1]:.2f}" if c > 1
                     else f"{curve[c][0]:.3f}/{curve[c][1]:.3f}" for c in ratios]
            _row(tasks, reps, *cells, f"{mde.improvement:+.0%}", f"{mde.regression:+.0%}")
            rows.append({"tasks": tasks, "reps": reps, "mde_improvement": mde.improvement,
                         "mde_regression": mde.regression,
                         "curve": {str(c): curve[c] for c in ratios}})
    return rows


def sequential_table(experiments: int, rng: np.random.Generator) -> list[dict]:
    adaptive = Adaptive(min_repetitions=2, step=1, max_repetitions=10, alpha=0.05)
    print(f"\n## Adaptive (looks at 2..10 repetitions) vs fixed (10 repetitions), per-task "
          f"effect sd 0.3, accuracy 0.6, {experiments} experiments, fail threshold +10%")
    _row("true delta", "tasks", "regression: adaptive / fixed",
         "improvement: adaptive / fixed", "mean runs: adaptive / fixed", "runs saved")
    _row(*["---"] * 6)
    rows = []
    for ratio in (0.8, 1.25, 0.5, 2.0):
        for tasks in (10, 30):
            pop = Population(accuracy=0.6, cost_ratio=ratio, effect_sd=0.3)
            r = sequential(pop, tasks, adaptive, experiments, RESAMPLES, rng)
            saved = 1 - r["adaptive_runs"] / r["fixed_runs"]
            _row(f"{pop.true_delta():+.2f}", tasks,
                 f"{r['adaptive_regression']:.3f} / {r['fixed_regression']:.3f}",
                 f"{r['adaptive_improvement']:.3f} / {r['fixed_improvement']:.3f}",
                 f"{r['adaptive_runs']:.0f} / {r['fixed_runs']:.0f}", f"{saved:.0%}")
            rows.append({"true_delta": pop.true_delta(), "tasks": tasks, **r, "saved": saved})
    return rows


def arm_table(experiments: int, rng: np.random.Generator) -> list[dict]:
    print(f"\n## Coverage of one arm's 95% intervals ({experiments} experiments per setting)")
    _row("accuracy", "tasks", "reps", "cpc", "accuracy: Wilson-deff", "nothing correct")
    _row(*["---"] * 6)
    rows = []
    for acc in (0.2, 0.5, 0.9):
        for tasks in (7, 30):
            r = arm_coverage(Population(accuracy=acc), tasks, 3, experiments, RESAMPLES, rng)
            _row(acc, tasks, 3, f"{r['cpc']:.3f}", f"{r['accuracy']:.3f}", f"{r['zero']:.3f}")
            rows.append({"accuracy": acc, "tasks": tasks, "reps": 3, **r})
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--seed", type=int, default=20261123)
    parser.add_argument("--json", help="also write the figures here")
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    started = time.perf_counter()
    n = 300 if args.quick else 2000
    figures = {"coverage": coverage_grid(n, rng), "unequal": unequal_counts(n, rng),
               "null": null_errors(n, rng), "control": control_gate(n, rng),
               "power": power_table(n), "sequential": sequential_table(n, rng),
               "arms": arm_table(n, rng)}
    cov = figures["coverage"]
    missed = [r for r in cov if not r["ok"]]
    null_ok = sum(r["ok"] for r in figures["null"])
    print(f"\n{len(cov) - len(missed)}/{len(cov)} coverage settings within "
          f"[{LOW:.1%}, {HIGH:.1%}] (or ≥ {LOW:.1%} where the interval is mostly unbounded); "
          f"{null_ok}/{len(figures['null'])} null settings ≤ {ONE_SIDED:.1%} each way; "
          f"{time.perf_counter() - started:.0f} s")
    if args.json:
        with open(args.json, "w") as handle:
            json.dump(figures, handle, indent=1, default=float)
    return 0


if __name__ == "__main__":
    sys.exit(main())
