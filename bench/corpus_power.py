"""How many tasks decide a −20% change? Power of the report's paired cluster bootstrap by
simulation, to size corpus/scenarios/standard.yaml (issue #22) until `copeca-action plan
--power` (issue #16) measures it from a pilot.

    .venv/bin/python bench/corpus_power.py            # 1,000 experiments per setting
    .venv/bin/python bench/corpus_power.py --quick    # 200

Population as bench/stats.py (copeca_action/report/_simulate.py: logit-normal task accuracy,
lognormal task and run costs, failed runs 1.5× dearer), plus **task-to-task variation of the
tool's effect**: each task's cost ratio is the mean ratio times a lognormal factor (log sd
`effect_sd`), which no number of repetitions averages away. Power is the share of experiments
whose 95% interval for delta lies below zero (verdict `improvement`); the minimum detectable
effect (MDE) is the smallest true −delta on a grid with power ≥ 80%. The figures are
assumptions, not measurements: re-measure them with `plan --power` from a real pilot.
"""

from __future__ import annotations

import argparse
import math
import os
import sys

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np

from copeca_action.report._stats import paired_bootstrap

ACCURACY = 0.6
TASK_ACC_SD, TASK_COST_SD, RUN_COST_SD, WRONG = 1.0, 0.8, 0.5, 1.5


def power(tasks: int, reps: int, ratio: float, effect_sd: float, experiments: int,
          resamples: int, rng: np.random.Generator) -> float:
    base_logit = math.log(ACCURACY / (1 - ACCURACY))
    shape = (experiments, tasks, reps)
    logit = base_logit + TASK_ACC_SD * rng.standard_normal((experiments, tasks, 1))
    scale = TASK_COST_SD * rng.standard_normal((experiments, tasks, 1))
    per_task = ratio * np.exp(effect_sd * rng.standard_normal((experiments, tasks, 1))
                              - effect_sd ** 2 / 2)

    def arm(r: np.ndarray | float) -> tuple[np.ndarray, np.ndarray]:
        p = 1 / (1 + np.exp(-logit))
        correct = (rng.random(shape) < p).astype(np.float64)
        noise = RUN_COST_SD * rng.standard_normal(shape) - RUN_COST_SD ** 2 / 2
        cost = r * np.exp(scale + noise) * np.where(correct > 0, 1.0, WRONG)
        return cost.sum(-1), correct.sum(-1)

    st, ct = arm(per_task)
    sb, cb = arm(1.0)
    runs = np.full((experiments, tasks), float(reps))
    bs = paired_bootstrap(st, ct, sb, cb, resamples=resamples, seed=rng, runs_t=runs,
                          runs_b=runs)
    return float(np.mean(bs.high < 0))


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--seed", type=int, default=22)
    args = ap.parse_args()
    experiments, resamples = (200, 500) if args.quick else (1000, 1000)
    rng = np.random.default_rng(args.seed)
    print(f"## Power to call a true −20% change an improvement ({experiments} experiments, "
          f"{resamples} resamples, base accuracy {ACCURACY}, 3 repetitions)")
    print("| non-control tasks | effect sd 0 | effect sd 0.3 | effect sd 0.5 |")
    print("|---:|---:|---:|---:|")
    for tasks in (30, 60, 90, 135, 160):
        cells = [power(tasks, 3, 0.8, sd, experiments, resamples, rng) for sd in (0, 0.3, 0.5)]
        print(f"| {tasks} | " + " | ".join(f"{c:.2f}" for c in cells) + " |", flush=True)
    print("\n## Minimum detectable effect (power ≥ 0.80, 3 repetitions)")
    print("| non-control tasks | effect sd | MDE |")
    print("|---:|---:|---:|")
    for tasks in (135,):
        for sd in (0.0, 0.3, 0.5):
            mde = "> 40%"
            for cut in (0.10, 0.15, 0.20, 0.25, 0.30, 0.40):
                if power(tasks, 3, 1 - cut, sd, experiments, resamples, rng) >= 0.8:
                    mde = f"{cut:.0%}"
                    break
            print(f"| {tasks} | {sd} | {mde} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
