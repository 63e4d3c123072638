"""Power before spend: what a design can detect, by the simulator that checks the intervals.

For a planned design (tasks × repetitions × arms, the scenario's alpha or adaptive schedule,
its fail threshold), `power` draws experiments from a population with **no** effect (the
tool arm drawn like the base arm), runs each through the report's own `paired_bootstrap`,
and reads the minimum detectable effects at 80% power exactly: scaling the tool arm's costs
by c moves every bound of the log ratio by log c (common random numbers), so the share of
experiments called an improvement at a true delta c − 1 is the share whose upper bound is
below 1/c − 1. No search, no interpolation.

The population is a pilot's (the base arm's tasks and runs, resampled: a previous bundle's
or results file's records) or documented defaults (`DEFAULT_POPULATION`). Effects are cost
changes at equal accuracy with per-task heterogeneity (`effect_sd`); an effect through
accuracy moves cost per correct similarly.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from copeca_action._util.blas import on_one_blas_thread
from copeca_action.records._kinds import NOT_REACHED
from copeca_action.report._simulate import Population, draw
from copeca_action.report._spend import MAX_RUN_COST_USD
from copeca_action.report._spending import look_alpha, schedule
from copeca_action.report._stats import FloatArray, paired_bootstrap
from copeca_action.scenario import Adaptive

POWER = 0.8
DEFAULT_POPULATION = Population(accuracy=0.6, task_accuracy_sd=1.0, task_cost_sd=0.8,
                                run_cost_sd=0.5, effect_sd=0.2)
"""No pilot: base accuracy 60% per task (logit sd 1 between tasks), task cost scale lognormal
(sd 0.8), run-to-run cost noise lognormal (sd 0.5), failed runs 1.5× dearer, the tool's
effect varying between tasks (log sd 0.2). bench/stats.py uses the same family."""
DEFAULT_COST_PER_RUN = 0.25
"""USD per run assumed without a pilot (a Claude Code comprehension task on a mid-size model,
order of magnitude only): the spend estimate says when it rests on this."""


@dataclass(frozen=True)
class Pilot:
    """Runs of the base arm of an earlier experiment: per task, its runs' cost and grade."""

    cost: list[FloatArray]
    correct: list[FloatArray]
    source: str

    @property
    def cost_per_run(self) -> float:
        return float(np.concatenate(self.cost).mean())


@dataclass(frozen=True)
class Design:
    tasks: int
    """Non-control tasks (the clusters of the delta)."""
    repetitions: int
    """Repetitions per task and arm (the maximum under adaptive sampling)."""
    arms: int = 2
    control_tasks: int = 0
    models: int = 1
    """A task's runs across models form one cluster: each repetition adds this many runs per
    task and arm."""


@dataclass(frozen=True)
class PowerResult:
    design: Design
    improvement: float
    """Smallest true reduction of cost per correct (a negative delta) called an improvement
    in 80% of experiments; −1 when no reduction is detectable with 80% power."""
    regression: float
    """Smallest true increase called a regression in 80% of experiments (> the fail
    threshold); inf when none is."""
    expected_runs: float
    """Runs per experiment (all arms, control tasks included; the maximum under adaptive
    sampling)."""
    expected_spend_usd: float
    cost_per_run_usd: float
    cost_source: str
    """"pilot: …" or "assumed default …"."""
    experiments: int
    alpha: float
    """What each comparison is judged at: `alpha_family / comparisons` (under adaptive
    sampling each look's share is split the same way)."""
    adaptive: bool
    comparisons: int = 1
    """Comparisons that share the alpha (several tool arms: Bonferroni, as the report splits
    it; docs/methodology.md, "Several tools")."""
    alpha_family: float | None = None
    """The alpha before the split (None: no split)."""


def _upper_lower(pop: Population | None, pilot: Pilot | None, design: Design,
                 alpha: float, adaptive: Adaptive | None, experiments: int, resamples: int,
                 rng: np.random.Generator, comparisons: int = 1
                 ) -> tuple[FloatArray, FloatArray]:
    """Per experiment under no effect: the smallest 1+high and the largest 1+low over the
    looks (one look without adaptive sampling), each look judged at its alpha split between
    `comparisons`."""
    looks = [r * design.models for r in (schedule(adaptive) if adaptive is not None
                                           and adaptive.enabled else [design.repetitions])]
    looked = _look_sums(pop, pilot, design.tasks, looks, experiments, rng)
    best_high = np.full(experiments, np.inf)
    best_low = np.full(experiments, -np.inf)
    for k, (reps, sums) in enumerate(zip(looks, looked, strict=True), 1):
        a = (look_alpha(adaptive, k) if adaptive is not None and adaptive.enabled
             else alpha) / comparisons
        runs = np.full(sums[0].shape, float(reps))
        bs = paired_bootstrap(*sums, alpha=a, resamples=resamples, seed=rng, runs_t=runs,
                              runs_b=runs, task_means=True)
        high = np.where(np.isnan(bs.high), np.inf, bs.high + 1)
        low = np.where(np.isnan(bs.low), -np.inf, bs.low + 1)
        best_high = np.minimum(best_high, high)
        best_low = np.maximum(best_low, low)
    return best_high, best_low


def _look_sums(pop: Population | None, pilot: Pilot | None, tasks: int, looks: list[int],
               experiments: int, rng: np.random.Generator) -> list[list[FloatArray]]:
    """For each look (its repetitions so far), the per-task sums (spend_t, correct_t,
    spend_b, correct_b) of every experiment, each (experiments, tasks)."""
    if pilot is not None:
        return _pilot_sums(pilot, (pop or DEFAULT_POPULATION).effect_sd, tasks, looks,
                           experiments, rng)
    d = draw(pop or DEFAULT_POPULATION, experiments, tasks, looks[-1], rng)
    return [[x[..., :reps].sum(axis=-1) for x in (d.spend_t, d.correct_t, d.spend_b,
                                                   d.correct_b)] for reps in looks]


def _pilot_sums(pilot: Pilot, effect_sd: float, tasks: int, looks: list[int],
                experiments: int, rng: np.random.Generator) -> list[list[FloatArray]]:
    """Experiments drawn from a pilot: each task of each experiment is a pilot task drawn
    with replacement, its runs that task's runs resampled with replacement; the tool arm's
    costs scaled by a per-task effect.

    Only the sums the looks read are kept, never the (experiments, tasks, repetitions)
    runs (160 MB per arm and variable at 400 × 500 × 100). The draws and their order are
    those of drawing the full arrays: one `integers` call per arm and pilot task, for that
    task's cells in row-major order; each sum adds the same values in the same order."""
    n_pilot = len(pilot.cost)
    picked = rng.integers(0, n_pilot, size=(experiments, tasks))
    effect = np.exp(effect_sd * rng.standard_normal((experiments, tasks, 1)) - effect_sd ** 2 / 2)
    flat = picked.ravel()
    order = np.argsort(flat, kind="stable")  # each pilot task's cells, in row-major order
    bounds = np.searchsorted(flat[order], np.arange(n_pilot + 1))
    scale = effect.reshape(-1)
    reps = looks[-1]
    out = np.empty((len(looks), 4, flat.size))
    # right or wrong as bytes: the counts are the sums of the 0.0/1.0 values exactly, with
    # an eighth of the memory to gather (any other value keeps the floats)
    every = np.concatenate(pilot.correct) if pilot.correct else np.zeros(0)
    binary = bool(((every == 0) | (every == 1)).all())
    right = [c.astype(np.uint8) for c in pilot.correct] if binary else pilot.correct
    for arm in range(2):
        for i in range(n_pilot):
            cells = order[bounds[i]:bounds[i + 1]]
            if not cells.size:
                continue
            j = rng.integers(0, len(pilot.cost[i]), size=(cells.size, reps))
            # take(j) is cost[j] without fancy indexing's overhead; scaled in place: the
            # same products, one (cells, reps) array fewer
            spend = pilot.cost[i].take(j)
            if arm == 0:
                spend *= scale[cells][:, None]
            correct = right[i].take(j)
            for k, r in enumerate(looks):
                out[k, 2 * arm, cells] = spend[:, :r].sum(axis=-1)
                out[k, 2 * arm + 1, cells] = correct[:, :r].sum(axis=-1)
    shaped = out.reshape(len(looks), 4, experiments, tasks)
    return [[shaped[k, v] for v in range(4)] for k in range(len(looks))]


@on_one_blas_thread
def power(design: Design, *, fail: float = 0.10, alpha: float = 0.05,
          adaptive: Adaptive | None = None, pilot: Pilot | None = None,
          population: Population | None = None, experiments: int = 1000,
          resamples: int = 1000, seed: int = 0, comparisons: int = 1) -> PowerResult:
    """Minimum detectable effects at 80% power and expected spend of `design`, for one of
    `comparisons` tool comparisons that share the alpha (the report splits it between them:
    each is judged at alpha / comparisons, every adaptive look's share too)."""
    if comparisons < 1:
        raise ValueError(f"comparisons: {comparisons}: expected at least 1")
    rng = np.random.default_rng(seed)
    high, low = _upper_lower(population, pilot, design, alpha, adaptive, experiments,
                             resamples, rng, comparisons)
    # improvement at true ratio c iff c·high < 1, i.e. c < 1/high: power(c) ≥ 80% for
    # c ≤ the 20% quantile of 1/high; regression iff c·low > 1+fail.
    with np.errstate(divide="ignore", invalid="ignore"):
        c_improve = float(np.quantile(1 / high, 1 - POWER, method="lower"))
        c_regress = float(np.quantile((1 + fail) / np.where(low > 0, low, 0.0), POWER,
                                      method="higher"))
    reps = (schedule(adaptive)[-1] if adaptive is not None and adaptive.enabled
            else design.repetitions)
    runs = float(design.arms * (design.tasks + design.control_tasks) * reps * design.models)
    if pilot is not None:
        cost, source = pilot.cost_per_run, f"pilot: {pilot.source}"
    else:
        cost, source = DEFAULT_COST_PER_RUN, "assumed default (no pilot given)"
    return PowerResult(design=design, improvement=c_improve - 1 if c_improve > 0 else -1.0,
                       regression=c_regress - 1 if math.isfinite(c_regress) else math.inf,
                       expected_runs=runs, expected_spend_usd=runs * cost,
                       cost_per_run_usd=cost, cost_source=source, experiments=experiments,
                       alpha=alpha / comparisons if comparisons > 1 else alpha,
                       adaptive=adaptive is not None and adaptive.enabled,
                       comparisons=comparisons,
                       alpha_family=alpha if comparisons > 1 else None)


def pilot_from_rows(rows: list[dict[str, object]], source: str) -> Pilot:
    """The base arm's runs per non-control task (`baseline`, else any arm named `…@base`,
    else every arm), runs that reached the agent with a known cost. Raises ValueError when
    fewer than 2 tasks remain (a pilot must show the spread between tasks)."""
    reached = [r for r in rows if r.get("outcome") not in NOT_REACHED
               and isinstance(r.get("cost_usd"), int | float) and not r.get("control")]
    arms = {str(r.get("arm")) for r in reached}
    base = ("baseline" if "baseline" in arms
            else next((a for a in sorted(arms) if a.endswith("@base")), None))
    chosen = [r for r in reached if base is None or r.get("arm") == base]
    by_task: dict[str, list[dict[str, object]]] = {}
    for r in chosen:
        by_task.setdefault(str(r.get("task_id")), []).append(r)
    if len(by_task) < 2:
        raise ValueError(f"{source}: the pilot needs runs of at least 2 non-control tasks with "
                         f"a known cost (found {len(by_task)})")
    largest = max(float(r["cost_usd"]) for r in chosen)  # type: ignore[arg-type]
    if largest > MAX_RUN_COST_USD:
        raise ValueError(f"{source}: a pilot run costs ${largest:.3g}; above "
                         f"${MAX_RUN_COST_USD:,.0f} a run is no price, and the simulated "
                         "spend would add up past the largest number a float holds")
    return Pilot(cost=[np.array([float(r["cost_usd"]) for r in runs])  # type: ignore[arg-type]
                       for runs in by_task.values()],
                 correct=[np.array([1.0 if r.get("correct") and r.get("outcome") != "agent_error"
                                    else 0.0 for r in runs]) for runs in by_task.values()],
                 source=f"{source} ({len(by_task)} tasks, {len(chosen)} runs of arm "
                        f"{base or 'any'})")


@on_one_blas_thread
def rates(design: Design, ratios: list[float], *, fail: float = 0.10, alpha: float = 0.05,
          adaptive: Adaptive | None = None, population: Population | None = None,
          experiments: int = 2000, resamples: int = 1000, seed: int = 0
          ) -> dict[float, tuple[float, float]]:
    """Power curve: for each true cost ratio c (delta c − 1), the share of experiments called
    an improvement and the share called a regression (common random numbers)."""
    rng = np.random.default_rng(seed)
    high, low = _upper_lower(population, None, design, alpha, adaptive, experiments,
                             resamples, rng)
    return {c: (float(np.mean(c * high < 1)), float(np.mean(c * low > 1 + fail)))
            for c in ratios}
