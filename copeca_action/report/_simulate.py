"""A population simulator with a known true delta, for bench/stats.py, `plan --power` and
the reduced tests.

Each experiment draws tasks (heterogeneous accuracy and cost), then runs per arm: a run is
correct with its task's accuracy and costs a lognormal amount (failed runs cost more).
The tool arm multiplies costs by `cost_ratio` and shifts accuracy by `logit_shift`, each task
by its own amount when `effect_sd`/`shift_sd` are set (the tool helps some tasks more than
others). Task cost scales are lognormal or Pareto (heavy-tailed); runs can be lost unequally
between the arms (`drop`), as infra errors or budget stops lose them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from copeca_action.report._spending import look_alpha, schedule
from copeca_action.report._stats import (
    DEFAULT_METHOD,
    HYBRID_BELOW,
    FloatArray,
    IntervalMethod,
    arm_bootstrap,
    paired_bootstrap,
)
from copeca_action.scenario import Adaptive


@dataclass(frozen=True)
class Population:
    accuracy: float = 0.6
    """Median per-task accuracy of the base arm."""
    cost_ratio: float = 1.0
    """Tool cost per run / base cost per run, same task."""
    logit_shift: float = 0.0
    """Tool accuracy shift on the logit scale."""
    task_accuracy_sd: float = 1.0
    """Task heterogeneity of accuracy (logit sd)."""
    task_cost_sd: float = 0.8
    """Task heterogeneity of cost (log sd)."""
    run_cost_sd: float = 0.5
    """Run-to-run cost noise (log sd), lognormal."""
    wrong_cost_factor: float = 1.5
    """A failed run costs this much more than a correct one."""
    effect_sd: float = 0.0
    """Per-task heterogeneity of the tool's cost effect: each task's cost ratio is
    cost_ratio · lognormal(sd) with mean 1 (so the population ratio stays cost_ratio)."""
    shift_sd: float = 0.0
    """Per-task heterogeneity of the tool's accuracy shift (logit sd around logit_shift)."""
    task_cost: str = "lognormal"
    """Task cost scale: "lognormal" (log sd task_cost_sd) or "pareto" (heavy tail, shape
    `pareto_shape`; task_cost_sd is then ignored)."""
    pareto_shape: float = 2.0
    drop: float = 0.0
    """Unequal run counts: on the dearer half of tasks, each tool-arm run after the first is
    lost with this probability (set-up failures of the tool on big repositories)."""

    def true_delta(self) -> float:
        """cpc(tool)/cpc(base) − 1 over the infinite task population (numerical mean of the
        logit-normal accuracy; costs and effects are independent of accuracy, so their
        means cancel). The estimand is per task (Σ mean spend / Σ accuracy), so losing runs
        does not change it."""
        z = np.linspace(-8, 8, 20001)
        w = np.exp(-z * z / 2)
        w /= w.sum()
        centre = math.log(self.accuracy / (1 - self.accuracy))
        logit = centre + self.task_accuracy_sd * z
        p_b = float((w / (1 + np.exp(-logit))).sum())
        sd_t = math.hypot(self.task_accuracy_sd, self.shift_sd)
        p_t = float((w / (1 + np.exp(-(centre + sd_t * z + self.logit_shift)))).sum())
        f = self.wrong_cost_factor

        def cpc(p: float) -> float:
            return (p + f * (1 - p)) / p

        return self.cost_ratio * cpc(p_t) / cpc(p_b) - 1

    def true_accuracy(self, tool: bool = False) -> float:
        """Population accuracy of one arm: the mean of its logit-normal task accuracy."""
        z = np.linspace(-8, 8, 20001)
        w = np.exp(-z * z / 2)
        w /= w.sum()
        sd = math.hypot(self.task_accuracy_sd, self.shift_sd) if tool else self.task_accuracy_sd
        logit = (math.log(self.accuracy / (1 - self.accuracy)) + sd * z
                 + (self.logit_shift if tool else 0.0))
        return float((w / (1 + np.exp(-logit))).sum())

    def true_cpc(self, tool: bool = False) -> float:
        """Population cost per correct of one arm: E[cost of a run] / E[accuracy] (task cost
        scale and accuracy are independent; run noise has mean 1)."""
        p = self.true_accuracy(tool)
        mean = (self.pareto_shape / (self.pareto_shape - 1) if self.task_cost == "pareto"
                else math.exp(self.task_cost_sd ** 2 / 2))
        scale = mean * (self.cost_ratio if tool else 1.0)
        return scale * (p + self.wrong_cost_factor * (1 - p)) / p


@dataclass(frozen=True)
class Draw:
    """Per-run arrays, shape (experiments, tasks, repetitions), for both arms. `kept_*` is 1
    for a run that reached the agent, 0 for one lost (its spend and correct are 0)."""

    spend_t: FloatArray
    correct_t: FloatArray
    spend_b: FloatArray
    correct_b: FloatArray
    kept_t: FloatArray
    kept_b: FloatArray

    def sums(self, reps: int | None = None) -> tuple[FloatArray, ...]:
        """Per-task sums over the first `reps` repetitions: (experiments, tasks) each."""
        r = slice(None, reps)
        return tuple(a[..., r].sum(axis=-1) for a in
                     (self.spend_t, self.correct_t, self.spend_b, self.correct_b))

    def runs(self, reps: int | None = None) -> tuple[FloatArray, FloatArray]:
        """Runs kept per task and arm over the first `reps` repetitions (≥ 1 each)."""
        r = slice(None, reps)
        return self.kept_t[..., r].sum(axis=-1), self.kept_b[..., r].sum(axis=-1)

    def scaled(self, ratio: float) -> Draw:
        """The same draw with the tool arm's costs multiplied by `ratio` (common random
        numbers: every interval bound moves by exactly that factor)."""
        return Draw(self.spend_t * ratio, self.correct_t, self.spend_b, self.correct_b,
                    self.kept_t, self.kept_b)


def draw(pop: Population, experiments: int, tasks: int, reps: int,
         rng: np.random.Generator) -> Draw:
    base_logit = math.log(pop.accuracy / (1 - pop.accuracy))
    logit = base_logit + pop.task_accuracy_sd * rng.standard_normal((experiments, tasks, 1))
    if pop.task_cost == "pareto":
        scale = -np.log1p(-rng.random((experiments, tasks, 1))) / pop.pareto_shape
    else:
        scale = pop.task_cost_sd * rng.standard_normal((experiments, tasks, 1))
    effect = (pop.effect_sd * rng.standard_normal((experiments, tasks, 1))
              - pop.effect_sd ** 2 / 2)
    shift = pop.logit_shift + pop.shift_sd * rng.standard_normal((experiments, tasks, 1))
    shape = (experiments, tasks, reps)

    def arm(shift: FloatArray | float, log_ratio: FloatArray | float
            ) -> tuple[FloatArray, FloatArray]:
        p = 1 / (1 + np.exp(-(logit + shift)))
        correct = (rng.random(shape) < p).astype(np.float64)
        noise = pop.run_cost_sd * rng.standard_normal(shape) - pop.run_cost_sd ** 2 / 2
        cost = np.exp(scale + noise + log_ratio) * np.where(correct > 0, 1.0,
                                                            pop.wrong_cost_factor)
        return cost, correct

    spend_t, correct_t = arm(shift, math.log(pop.cost_ratio) + effect)
    spend_b, correct_b = arm(0.0, 0.0)
    kept_b = np.ones(shape)
    kept_t = np.ones(shape)
    if pop.drop > 0:
        dear = scale > np.median(scale, axis=1, keepdims=True)
        lost = dear & (rng.random(shape) < pop.drop)
        lost[..., 0] = False  # every task keeps a run in both arms (stays paired)
        kept_t = np.where(lost, 0.0, 1.0)
        spend_t, correct_t = spend_t * kept_t, correct_t * kept_t
    return Draw(spend_t, correct_t, spend_b, correct_b, kept_t, kept_b)


CATEGORIES = ("locate", "trace", "fix", "debug", "reason")


def make_rows(pop: Population, tasks: int, reps: int, rng: np.random.Generator, *,
              tool: str = "codesearch", base: str = "baseline", control_tasks: int = 0,
              adoption: float | None = 0.9, scenario: str = "sim") -> list[dict[str, object]]:
    """RunRecord-shaped dicts (tests, bench/analyze_perf.py): one experiment of `tasks`
    tasks plus `control_tasks` control tasks on which the arms are drawn identically."""
    d = draw(pop, 1, tasks + control_tasks, reps, rng)
    ctl = draw(Population(**{**pop.__dict__, "cost_ratio": 1.0, "logit_shift": 0.0}), 1,
               tasks + control_tasks, reps, rng)
    rows: list[dict[str, object]] = []
    for i in range(tasks + control_tasks):
        control = i >= tasks
        src = ctl if control else d
        for r in range(reps):
            for arm, spend, correct in ((tool, src.spend_t, src.correct_t),
                                        (base, src.spend_b, src.correct_b)):
                used = None if arm == base or adoption is None else bool(rng.random() < adoption)
                cost = float(spend[0, i, r])
                rows.append({
                    "run_id": f"t{i:04d}-{arm}-{r}", "scenario": scenario,
                    "task_id": f"repo/task-{i:04d}", "task_hash": "0" * 16, "arm": arm,
                    "model": "m", "runner": "claude", "cli_version": "1.0.0",
                    "repetition": r, "control": control,
                    "category": CATEGORIES[i % len(CATEGORIES)], "language": "python",
                    "outcome": "ok", "correct": bool(correct[0, i, r]),
                    "tokens": {"input": 1000, "output": 200, "cache_write": 0,
                               "cache_read": 5000},
                    "cost_usd": cost, "cost_source": "vendor", "vendor_cost_usd": cost,
                    "duration_s": 10.0, "turns": 4, "tool_calls": 3, "tool_adopted": used,
                    "flags": []})
    return rows


# ---------------------------------------------------------------- experiments


def coverage(pop: Population, tasks: int, reps: int, experiments: int, resamples: int,
             rng: np.random.Generator, method: IntervalMethod = DEFAULT_METHOD,
             batch: int = 250, task_means: bool = True,
             hybrid_below: int = HYBRID_BELOW) -> dict[str, float]:
    """Share of experiments whose 95% interval holds the true delta, the one-sided misses
    (`above`: the whole interval above the truth, a false "dearer"; `below`: a false
    "cheaper"), the median estimate minus the truth on the log scale (`bias`), and how many
    had no ratio at all (neither arm correct: no interval exists, excluded from the
    shares). `task_means=False` uses the ratio of raw sums (the estimand before #16).
    `zero_arm`: share of experiments where exactly one arm has no correct answer;
    `zero_arm_miss`: among those, the share whose interval misses the truth."""
    truth = pop.true_delta()
    hits = defined = above = below = zero = zero_above = 0
    widths: list[FloatArray] = []
    estimates: list[FloatArray] = []
    for start in range(0, experiments, batch):
        d = draw(pop, min(batch, experiments - start), tasks, reps, rng)
        rt, rb = d.runs()
        sums = d.sums()
        bs = paired_bootstrap(*sums, resamples=resamples, seed=rng, method=method,
                              runs_t=rt, runs_b=rb, task_means=task_means,
                              hybrid_below=hybrid_below)
        ok = ~np.isnan(bs.estimate)
        defined += int(ok.sum())
        hits += int(((bs.low <= truth) & (truth <= bs.high))[ok].sum())
        above += int((bs.low > truth)[ok].sum())
        below += int((bs.high < truth)[ok].sum())
        one_zero = ok & ((sums[1].sum(axis=-1) == 0) | (sums[3].sum(axis=-1) == 0))
        zero += int(one_zero.sum())
        zero_above += int(((bs.low > truth) | (bs.high < truth))[one_zero].sum())
        estimates.append(bs.estimate[ok])
        with np.errstate(invalid="ignore", divide="ignore"):
            width = np.log1p(bs.high[ok]) - np.log1p(bs.low[ok])
            widths.append(width[~np.isnan(width)])
    w = np.concatenate(widths)
    est = np.concatenate(estimates)
    finite = w[np.isfinite(w)]
    with np.errstate(divide="ignore", invalid="ignore"):
        bias = float(np.median(np.log1p(est)) - math.log1p(truth)) if est.size else math.nan
    return {"coverage": hits / defined if defined else float("nan"),
            "above": above / defined if defined else float("nan"),
            "below": below / defined if defined else float("nan"),
            "undefined": 1 - defined / experiments,
            "unbounded": float(np.mean(~np.isfinite(w))) if w.size else float("nan"),
            "zero_arm": zero / experiments,
            "zero_arm_miss": zero_above / zero if zero else float("nan"),
            "bias": bias,
            "median_log_width": float(np.median(finite)) if finite.size else float("nan")}


def sequential(pop: Population, tasks: int, adaptive: Adaptive, experiments: int,
               resamples: int, rng: np.random.Generator, fail: float = 0.10,
               batch: int = 250) -> dict[str, float]:
    """Adaptive (looks with alpha spending) vs fixed (all repetitions, alpha) on the same
    draws: the share of regression and improvement verdicts and the mean runs per experiment.
    Uses the same schedule, alpha shares and verdict rule as decide()."""
    looks = schedule(adaptive)
    max_reps = adaptive.max_repetitions
    out = {"adaptive_regression": 0.0, "adaptive_improvement": 0.0, "adaptive_runs": 0.0,
           "fixed_regression": 0.0, "fixed_improvement": 0.0, "fixed_runs": 0.0}
    for start in range(0, experiments, batch):
        e = min(batch, experiments - start)
        d = draw(pop, e, tasks, max_reps, rng)
        verdict = np.zeros(e, dtype=np.int8)  # 0 undecided, 1 regression, -1 improvement
        runs = np.full(e, 2.0 * tasks * max_reps)
        for k, reps in enumerate(looks, 1):
            active = verdict == 0
            if not active.any():
                break
            sums = [a[active] for a in d.sums(reps)]
            rt, rb = (a[active] for a in d.runs(reps))
            bs = paired_bootstrap(*sums, alpha=look_alpha(adaptive, k), resamples=resamples,
                                  seed=rng, runs_t=rt, runs_b=rb, task_means=True)
            decided = np.where(bs.low > fail, 1, np.where(bs.high < 0, -1, 0)).astype(np.int8)
            idx = np.flatnonzero(active)
            verdict[idx] = decided
            runs[idx[decided != 0]] = 2.0 * tasks * reps
        rt, rb = d.runs()
        fixed = paired_bootstrap(*d.sums(), alpha=adaptive.alpha, resamples=resamples, seed=rng,
                                 runs_t=rt, runs_b=rb, task_means=True)
        out["adaptive_regression"] += float((verdict == 1).sum())
        out["adaptive_improvement"] += float((verdict == -1).sum())
        out["adaptive_runs"] += float(runs.sum())
        out["fixed_regression"] += float((fixed.low > fail).sum())
        out["fixed_improvement"] += float((fixed.high < 0).sum())
        out["fixed_runs"] += 2.0 * tasks * max_reps * e
    return {k: v / experiments for k, v in out.items()}


def arm_coverage(pop: Population, tasks: int, reps: int, experiments: int, resamples: int,
                 rng: np.random.Generator, batch: int = 250) -> dict[str, float]:
    """Coverage of one arm's (the base arm's) 95% intervals: cost per correct (cluster
    bootstrap), accuracy (Wilson on the design-effect sample size, as the report) and, for
    comparison, accuracy by the same cluster bootstrap as cpc. `zero` is the share of
    experiments with no correct answer (cpc ∞: its interval is [bound, ∞))."""
    true_cpc, true_acc = pop.true_cpc(), pop.true_accuracy()
    hits = {"cpc": 0, "accuracy": 0, "accuracy_bootstrap": 0}
    zero = 0
    widths: list[FloatArray] = []
    for start in range(0, experiments, batch):
        d = draw(pop, min(batch, experiments - start), tasks, reps, rng)
        spend, correct = d.spend_b.sum(axis=-1), d.correct_b.sum(axis=-1)
        runs = np.full(spend.shape, float(reps))
        arm = arm_bootstrap(spend, correct, runs, resamples=resamples, seed=rng)
        hits["cpc"] += int(((arm.cpc_low <= true_cpc) & (true_cpc <= arm.cpc_high)).sum())
        hits["accuracy"] += int(((arm.accuracy_low <= true_acc)
                                 & (true_acc <= arm.accuracy_high)).sum())
        inverse = arm_bootstrap(runs, correct, runs, resamples=resamples, seed=rng)
        with np.errstate(divide="ignore"):
            boot_low, boot_high = 1 / inverse.cpc_high, 1 / inverse.cpc_low
        hits["accuracy_bootstrap"] += int(((boot_low <= true_acc) & (true_acc <= boot_high))
                                          .sum())
        zero += int((correct.sum(axis=-1) == 0).sum())
        with np.errstate(invalid="ignore", divide="ignore"):
            w = np.log(arm.cpc_high) - np.log(arm.cpc_low)
        widths.append(w[np.isfinite(w)])
    w = np.concatenate(widths)
    return {**{k: v / experiments for k, v in hits.items()}, "zero": zero / experiments,
            "true_cpc": true_cpc, "true_accuracy": true_acc,
            "median_log_width": float(np.median(w)) if w.size else float("nan")}
