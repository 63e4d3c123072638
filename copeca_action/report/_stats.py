"""Pure statistics on numpy arrays: cost per correct and its paired cluster bootstrap.

No I/O, no pydantic. Every function accepts a leading batch axis, so the simulation in
bench/stats.py runs thousands of experiments through exactly the code the report uses.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from statistics import NormalDist
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from copeca_action.report._methods import INTERVAL_METHODS as INTERVAL_METHODS
from copeca_action.report._methods import IntervalMethod as IntervalMethod

FloatArray = NDArray[np.float64]
DEFAULT_METHOD: IntervalMethod = "hybrid"
"""Chosen by bench/stats.py (see docs/methodology.md): the union of the expanded percentile
interval and the studentized (bootstrap-t) interval, at every task count, made at least as wide
on each side of the estimate as on the other (log scale). Without that last step the
interval missed on the cheap side in 2.8–4.1% of null experiments with per-task effects
(a false improvement above the one-sided 2.5%), also below 12 tasks (3.1–3.4% with 7)."""

HYBRID_BELOW = 1_000_000_000
"""Below this many clusters the studentized bounds are joined with the expanded ones: at
every count. Up to #16 it was 12; on skewed (lognormal sd 1.5) and Pareto task costs with
per-task effects the expanded interval alone held 92.5–95.1% from 20 to 100 tasks, the union
93.1–95.6% (a BCa interval was tried and did worse, 89–95%); see docs/methodology.md."""

SMALL_SAMPLE_BELOW = 12
"""Below this many tasks the report warns that the interval is wide (few tasks)."""

ARM_HYBRID_BELOW = HYBRID_BELOW
"""One arm's cost per correct: also the union at every task count (bench/stats.py: the
expanded interval alone at 89–93% from 30 tasks up)."""

_CHUNK_CELLS = 1_000_000
"""Cells of the resample matrix (and of the resampled sums) built at once: bounds memory for
large task counts and large batches (`analyze` of 100k records peaks at 228 MiB; 242 MiB at
2M cells, at the same speed). The draws do not depend on it; the matrix products' summation
order does, in the last bit of a bound, as it does between CPUs' BLAS kernels."""


def cost_per_correct(spend: ArrayLike, correct: ArrayLike) -> FloatArray:
    """spend / correct; +inf when nothing is correct (never a division error)."""
    s = np.asarray(spend, dtype=np.float64)
    c = np.asarray(correct, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.where(c > 0, s / np.where(c > 0, c, 1.0), np.inf)
    return np.asarray(out, dtype=np.float64)


def ratio_of_cpc(spend_t: ArrayLike, correct_t: ArrayLike, spend_b: ArrayLike,
                 correct_b: ArrayLike) -> FloatArray:
    """cpc(tool) / cpc(base): inf when only the tool never succeeds, 0 when only the base
    never succeeds, nan (no ratio exists) when neither does, and when neither arm spent
    anything: 0/0 is no ratio of 1 (it printed a delta of "+0.0%" for two arms at $0)."""
    a = cost_per_correct(spend_t, correct_t)
    b = cost_per_correct(spend_b, correct_b)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):  # past 1e308: inf
        return np.asarray(a / b, dtype=np.float64)  # 0/0 and inf/inf: nan


def delta(spend_t: ArrayLike, correct_t: ArrayLike, spend_b: ArrayLike,
          correct_b: ArrayLike) -> FloatArray:
    """cpc(tool) / cpc(base) − 1 (the headline statistic)."""
    return ratio_of_cpc(spend_t, correct_t, spend_b, correct_b) - 1.0


# ---------------------------------------------------------------- distributions


def t_two_sided_cdf(t: float, df: int) -> float:
    """P(|T| < t) for Student's t with integer df (Abramowitz & Stegun 26.7.3-4)."""
    if t <= 0:
        return 0.0
    theta = math.atan(t / math.sqrt(df))
    s, c2 = math.sin(theta), math.cos(theta) ** 2
    if df % 2 == 1:
        total, term = 0.0, 1.0
        if df > 1:
            total = 1.0
            for k in range(1, (df - 3) // 2 + 1):
                term *= c2 * (2 * k) / (2 * k + 1)
                total += term
            return (2 / math.pi) * (theta + s * math.cos(theta) * total)
        return 2 * theta / math.pi
    total, term = 1.0, 1.0
    for k in range(1, (df - 2) // 2 + 1):
        term *= c2 * (2 * k - 1) / (2 * k)
        total += term
    return s * total


@functools.lru_cache(maxsize=256)
def t_quantile(p: float, df: int) -> float:
    """Upper quantile: the t with P(T > t) = p (0 < p < 0.5), by bisection."""
    target = 1 - 2 * p
    lo, hi = 0.0, 1.0
    while t_two_sided_cdf(hi, df) < target:
        hi *= 2
    for _ in range(100):
        mid = (lo + hi) / 2
        if t_two_sided_cdf(mid, df) < target:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2


def tail_probability(alpha: float, n_clusters: int, method: IntervalMethod) -> float:
    """The bootstrap quantile level used for each tail of a two-sided 1−alpha interval.

    `expanded` (Hesterberg's expanded percentile interval) widens the percentile interval
    for small samples: the bootstrap spreads clusters with divisor n instead of n−1 and
    uses normal instead of t tails; both matter with 3–10 tasks."""
    if method in ("percentile", "studentized") or n_clusters < 2:
        return alpha / 2
    widen = math.sqrt(n_clusters / (n_clusters - 1)) * t_quantile(alpha / 2, n_clusters - 1)
    return NormalDist().cdf(-widen)


# ---------------------------------------------------------------- bootstrap


def resample_counts(n_clusters: int, resamples: int, rng: np.random.Generator) -> FloatArray:
    """(resamples, n) matrix: how often each cluster is drawn in each resample.

    The draws are one `integers` call; they are counted a few rows at a time into the
    result, so the only full-size temporaries are the draws and the result (counting them
    all at once held two more 64-bit copies: 30 MB of a 100k-record analyze's peak)."""
    idx = rng.integers(0, n_clusters, size=(resamples, n_clusters), dtype=np.int32)
    out = np.empty((resamples, n_clusters))
    rows = max(1, _COUNT_CELLS // max(1, n_clusters))
    for start in range(0, resamples, rows):
        block = idx[start:start + rows]
        offsets = np.arange(len(block), dtype=np.intp)[:, None] * n_clusters
        counts = np.bincount((block + offsets).ravel(), minlength=block.size)
        out[start:start + len(block)] = counts.reshape(block.shape)
    return out


_COUNT_CELLS = 1 << 17
"""Draws counted at once by `resample_counts` (1 MB of 64-bit indexes)."""


def _resamples(n: int, resamples: int, step: int,
               rng: np.random.Generator) -> Iterator[FloatArray]:
    """The resample count matrices of one bootstrap, `step` resamples at a time: those
    `resample_counts` draws from `rng`, which is left where those draws leave it.

    One report draws the same matrices several times (its delta, each arm's interval and
    the adopted line use the same seed on the same tasks): a draw from a generator in a state
    seen before is taken from `_DRAWN` with the state it left, so the numbers are the ones
    drawing again would give."""
    key = (n, resamples, step, repr(rng.bit_generator.state))
    found = _DRAWN.pop(key, None)
    if found is not None:
        _DRAWN[key] = found  # most recently used
        counts, after = found
        rng.bit_generator.state = after
        for chunk in counts:
            yield chunk.astype(np.float64)
        return
    keep = n <= np.iinfo(np.uint16).max and resamples * n <= _KEEP_CELLS
    kept: list[NDArray[np.uint16]] = []
    for start in range(0, resamples, step):
        weights = resample_counts(n, min(step, resamples - start), rng)
        if keep:
            kept.append(weights.astype(np.uint16))
        yield weights
    if keep:
        _DRAWN[key] = (kept, rng.bit_generator.state)
        while sum(r * m for m, r, _, _ in _DRAWN) > _KEEP_CELLS:
            del _DRAWN[next(iter(_DRAWN))]  # least recently used


_KEEP_CELLS = 16_000_000
"""Resample counts kept for reuse (as uint16: 32 MB at most)."""
_DRAWN: dict[tuple[int, int, int, str],
             tuple[list[NDArray[np.uint16]], Mapping[str, Any]]] = {}


@dataclass(frozen=True)
class Bootstrap:
    """Point estimates and interval bounds of delta; arrays share the batch shape."""

    estimate: FloatArray
    low: FloatArray
    high: FloatArray
    defined: FloatArray
    """Share of resamples where the ratio exists (not both arms at zero correct)."""
    tail: float
    """Quantile level used for each tail."""
    n_clusters: int
    resamples: int
    method: IntervalMethod


def paired_bootstrap(spend_t: ArrayLike, correct_t: ArrayLike, spend_b: ArrayLike,
                     correct_b: ArrayLike, *, alpha: float = 0.05, resamples: int = 10_000,
                     seed: int | np.random.Generator = 0,
                     method: IntervalMethod = DEFAULT_METHOD,
                     runs_t: ArrayLike | None = None,
                     runs_b: ArrayLike | None = None,
                     hybrid_below: int = HYBRID_BELOW,
                     task_means: bool = False) -> Bootstrap:
    """Paired cluster bootstrap of delta = cpc(tool)/cpc(base) − 1.

    Inputs are per-cluster sums (spend and correct count of each arm in each task), shape
    (..., n). Each resample draws n clusters with replacement and uses **the same draws for
    both arms**; the statistic is recomputed exactly as the headline, so the interval is for
    that statistic. Bounds are order statistics (no interpolation), so a resample in which one
    arm has no correct answer (log ratio ±inf) just sorts to an end.

    `task_means` (needs `runs_t`, `runs_b`, every cluster with runs in both arms): each
    cluster's sums are divided by its run count first, so the statistic is
    Σ mean spend / Σ accuracy per arm: every task weighs the same in both arms whatever its
    run counts (a ratio of raw sums is biased when the arms lost different runs of a task).
    With equal run counts everywhere it equals the ratio of sums.

    When an arm has no correct answer at all, every resample agrees and the bootstrap alone
    would claim certainty. Given the run counts, the finite side of the interval is then the
    bootstrap bound (at alpha/2) of data in which that arm's accuracy is replaced by its exact
    one-sided upper confidence bound 1 − (alpha/4)^(1/runs) ("nothing right in 6 runs" is
    consistent with 52% accuracy at alpha 0.05): the resampling carries the other arm's and
    the spend's uncertainty, the exact bound this arm's; the two risks add to at most
    alpha/2.

    `hybrid_below`: under `hybrid`, the cluster count below which the studentized bounds are
    joined in. The resample draws depend only on the seed and the cluster count, never on the
    method, so intervals computed with the same seed on the same clusters share resamples.
    """
    arrays = [np.asarray(a, dtype=np.float64) for a in (spend_t, correct_t, spend_b, correct_b)]
    x = np.stack(np.broadcast_arrays(*arrays), axis=-2)  # (..., 4, n)
    batch_shape, n = x.shape[:-2], x.shape[-1]
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    rt = rb = None
    if runs_t is not None and runs_b is not None:
        rt = np.broadcast_to(np.asarray(runs_t, dtype=np.float64), (*x.shape[:-2], n))
        rb = np.broadcast_to(np.asarray(runs_b, dtype=np.float64), (*x.shape[:-2], n))
        if task_means:
            with np.errstate(divide="ignore", invalid="ignore"):  # x is our own: in place
                for k, runs in enumerate((rt, rt, rb, rb)):
                    np.divide(x[..., k, :], runs, out=x[..., k, :])
    elif task_means:
        raise ValueError("task_means needs runs_t and runs_b")
    estimate = delta(*(x[..., k, :].sum(axis=-1) for k in range(4)))
    tail = tail_probability(alpha, n, method)
    if n == 0:
        nan = np.full(batch_shape, np.nan)
        return Bootstrap(nan, nan, nan, np.zeros(batch_shape), tail, 0, resamples, method)
    low, high, defined = _log_bounds(x, estimate, alpha, resamples, rng, method, hybrid_below)
    if rt is not None and rb is not None:
        low, high = _zero_correct_bounds(x, rt, rb, alpha, low, high, resamples, rng, method,
                                         hybrid_below, task_means)
    if n < 2:  # one cluster says nothing about the spread between clusters
        low, high = np.full(batch_shape, -np.inf), np.full(batch_shape, np.inf)
    undefined = np.isnan(estimate)
    with np.errstate(over="ignore"):
        low = np.where(undefined, np.nan, np.exp(low) - 1)
        high = np.where(undefined, np.nan, np.exp(high) - 1)
    return Bootstrap(estimate, np.asarray(low), np.asarray(high), np.asarray(defined), tail, n,
                     resamples, method)


def _log_bounds(x: FloatArray, estimate: FloatArray, alpha: float, resamples: int,
                rng: np.random.Generator, method: IntervalMethod, hybrid_below: int
                ) -> tuple[FloatArray, FloatArray, FloatArray]:
    """Bounds of the log ratio (low, high) and the share of resamples with a ratio."""
    batch_shape, n = x.shape[:-2], x.shape[-1]
    tail = tail_probability(alpha, n, method)
    student = method == "studentized" or (method == "hybrid" and n < hybrid_below)
    percentile = method != "studentized"
    # Resampled variables: the 4 sums and, for studentizing, their 10 cross products.
    pairs = [(k, m) for k in range(4) for m in range(k, 4)] if student else []
    resampled = _Resampled(x, pairs)
    with np.errstate(divide="ignore", invalid="ignore"):
        theta_hat = np.log1p(estimate)
    se_hat = _linear_se(resampled.totals[..., None], pairs, n)[..., 0] if student else None
    step = max(1, _CHUNK_CELLS // (n + resampled.batch * resampled.variables))
    plain: list[FloatArray] = []
    studentized: list[FloatArray] = []
    for weights in _resamples(n, resamples, step, rng):
        sums = resampled.sums(weights)  # (..., vars, b)
        ratio = ratio_of_cpc(sums[..., 0, :], sums[..., 1, :], sums[..., 2, :], sums[..., 3, :])
        with np.errstate(divide="ignore", invalid="ignore"):
            log_ratio = np.log(ratio)
            plain.append(log_ratio)
            if student:
                diff = log_ratio - theta_hat[..., None]
                # no spread at all (identical tasks): t = 0, not 0/0
                same = np.abs(diff) <= 1e-12 * (1 + np.abs(theta_hat[..., None]))
                t = np.where(same, 0.0, diff / _linear_se(sums, pairs, n))
                studentized.append(np.where(np.isinf(log_ratio), log_ratio, t))
    low = np.full(batch_shape, np.inf)
    high = np.full(batch_shape, -np.inf)
    defined = np.zeros(batch_shape)
    if percentile:
        low, high, count = _order_stats(_joined(plain), tail, 1 - tail)
        defined = count / resamples
    if student and se_hat is not None:
        t_tail = alpha / 2
        t_low, t_high, count = _order_stats(_joined(studentized), t_tail, 1 - t_tail)
        with np.errstate(invalid="ignore"):
            s_low = theta_hat - t_high * se_hat
            s_high = theta_hat - t_low * se_hat
        s_low = np.where(np.isnan(s_low), -np.inf, s_low)  # e.g. inf − inf: unbounded
        s_high = np.where(np.isnan(s_high), np.inf, s_high)
        if percentile:  # an infinite estimate has no standard error: percentile bounds only
            finite = np.isfinite(theta_hat)
            s_low, s_high = np.where(finite, s_low, low), np.where(finite, s_high, high)
        low, high = np.minimum(low, s_low), np.maximum(high, s_high)
        if not percentile:
            defined = count / resamples
    if method == "hybrid":  # at least as wide on each side of the estimate as on the other
        both = np.isfinite(low) & np.isfinite(high) & np.isfinite(theta_hat)
        with np.errstate(invalid="ignore"):
            low, high = (np.where(both, np.minimum(low, 2 * theta_hat - high), low),
                         np.where(both, np.maximum(high, 2 * theta_hat - low), high))
    return np.asarray(low), np.asarray(high), np.asarray(defined)


@dataclass(frozen=True)
class ArmBootstrap:
    """One arm's cost per correct and accuracy with interval bounds (batch-shaped arrays)."""

    cpc: FloatArray
    cpc_low: FloatArray
    cpc_high: FloatArray
    """+inf when nothing was correct: the data bound the cost per correct only from below."""
    accuracy: FloatArray
    accuracy_low: FloatArray
    accuracy_high: FloatArray
    design_effect: FloatArray
    """Variance of the accuracy over the binomial variance (≥ 1): how much clustering by
    task inflates the accuracy interval."""
    n_clusters: int
    resamples: int
    method: IntervalMethod


def arm_bootstrap(spend: ArrayLike, correct: ArrayLike, runs: ArrayLike, *,
                  alpha: float = 0.05, resamples: int = 10_000,
                  seed: int | np.random.Generator = 0,
                  method: IntervalMethod = DEFAULT_METHOD,
                  task_means: bool = False) -> ArmBootstrap:
    """Cluster bootstrap of one arm's cpc = ΣS/ΣC, and its accuracy ΣC/ΣR with a Wilson
    interval on the design-effect sample size (`accuracy_interval`).

    cpc is the paired statistic against a pseudo-arm costing 1 and right once in every
    cluster (its cpc is exactly 1 in every resample and its terms vanish from the
    studentizing standard error), so the arm's interval is computed by `paired_bootstrap`
    itself: same method, same small-sample rule, same zero-correct bound, and, with the
    same seed and clusters, the very resamples its comparison's delta uses. `task_means`:
    cpc of per-task means (Σ mean spend / Σ accuracy), as a comparison's delta."""
    s = np.asarray(spend, dtype=np.float64)
    c = np.asarray(correct, dtype=np.float64)
    r = np.asarray(runs, dtype=np.float64)
    s, c, r = np.broadcast_arrays(s, c, r)
    ones = np.ones(s.shape[-1:])
    bs = paired_bootstrap(s, c, ones, ones, alpha=alpha, resamples=resamples, seed=seed,
                          method=method, runs_t=r, runs_b=ones, hybrid_below=ARM_HYBRID_BELOW,
                          task_means=task_means)
    acc, low, high, deff = accuracy_interval(c, r, alpha=alpha)
    return ArmBootstrap(bs.estimate + 1, bs.low + 1, bs.high + 1, acc, low, high, deff,
                        bs.n_clusters, resamples, method)


def accuracy_interval(correct: ArrayLike, runs: ArrayLike, *, alpha: float = 0.05
                      ) -> tuple[FloatArray, FloatArray, FloatArray, FloatArray]:
    """Accuracy ΣC/ΣR with a Wilson interval for clustered runs: estimate, low, high, design
    effect.

    The Wilson score interval uses the effective sample size ΣR/deff, where deff (≥ 1) is
    the cluster-robust variance of the ratio over the binomial one, and Student's t with
    n−1 degrees of freedom in place of z (n tasks). Unlike a bootstrap it stays honest at
    0 % and 100 % (where every resample agrees) and with a handful of tasks. One task (or
    none) gives [0, 1]: the spread between tasks is unknown."""
    c = np.asarray(correct, dtype=np.float64)
    r = np.asarray(runs, dtype=np.float64)
    c, r = np.broadcast_arrays(c, r)
    n = c.shape[-1]
    total_c, total_r = c.sum(axis=-1), r.sum(axis=-1)
    with np.errstate(divide="ignore", invalid="ignore"):
        p = np.where(total_r > 0, total_c / total_r, np.nan)
        resid = c - p[..., None] * r
        v_cluster = (resid ** 2).sum(axis=-1) * n / max(n - 1, 1) / total_r ** 2
        v_binomial = p * (1 - p) / total_r
        deff = np.where(v_binomial > 0, np.maximum(v_cluster / v_binomial, 1.0), 1.0)
        n_eff = total_r / deff
        z = t_quantile(alpha / 2, n - 1) if n >= 2 else math.inf
        z2 = z * z
        centre = (p + z2 / (2 * n_eff)) / (1 + z2 / n_eff)
        half = z / (1 + z2 / n_eff) * np.sqrt(p * (1 - p) / n_eff + z2 / (4 * n_eff ** 2))
    low = np.where(p == 0, 0.0, np.clip(centre - half, 0.0, 1.0))  # no rounding residue
    high = np.where(p == 1, 1.0, np.clip(centre + half, 0.0, 1.0))
    if n < 2:
        low, high = np.zeros_like(p), np.ones_like(p)
    nan = np.isnan(p)
    return (np.asarray(p, dtype=np.float64),
            np.asarray(np.where(nan, np.nan, low), dtype=np.float64),
            np.asarray(np.where(nan, np.nan, high), dtype=np.float64),
            np.asarray(np.where(nan, np.nan, deff), dtype=np.float64))


def _zero_correct_bounds(x: FloatArray, runs_t: FloatArray, runs_b: FloatArray, alpha: float,
                         low: FloatArray, high: FloatArray, resamples: int,
                         rng: np.random.Generator, method: IntervalMethod, hybrid_below: int,
                         task_means: bool) -> tuple[FloatArray, FloatArray]:
    """Log-scale finite bound where exactly one arm has no correct answer: bootstrap (at
    alpha/2) the data with that arm's accuracy set to its exact one-sided upper bound at
    alpha/4, so the other arm's uncertainty and the spend's count too (using the other arm's
    point estimate alone gave 13–29% false regressions at 3–10% accuracy)."""
    tot = x.sum(axis=-1)  # (..., 4)
    nt, nb = runs_t.sum(axis=-1), runs_b.sum(axis=-1)
    low, high = low.copy(), high.copy()
    for arm, (runs, total, other) in enumerate(((runs_t, nt, tot[..., 3]),
                                               (runs_b, nb, tot[..., 1]))):
        zero = (tot[..., 1 + 2 * arm] == 0) & (other > 0) & (total > 0)
        if not zero.any():
            continue
        with np.errstate(divide="ignore", invalid="ignore"):
            upper = 1 - (alpha / 4) ** (1 / np.maximum(total, 1))  # accuracy, (...)
        imputed = x[zero].copy()  # (k, 4, n)
        per_task = np.ones_like(runs[zero]) if task_means else runs[zero]
        imputed[:, 1 + 2 * arm, :] = upper[zero][:, None] * per_task
        est = delta(*(imputed[:, k, :].sum(axis=-1) for k in range(4)))
        b_low, b_high, _ = _log_bounds(imputed, est, alpha / 2, resamples, rng, method,
                                       hybrid_below)
        if arm == 0:  # tool never right: cpc_t ≥ spend / upper; ratio bounded below
            low[zero] = b_low
        else:  # base never right: the ratio is bounded above
            high[zero] = b_high
    return low, high


def _linear_se(sums: FloatArray, pairs: list[tuple[int, int]], n: int) -> FloatArray:
    """Linearisation (delta-method) standard error of the log ratio from resampled sums:
    Var = n/(n−1) · Σ_i (Σ_k g_k x_ki)², g = (1/S_t, −1/C_t, −1/S_b, 1/C_b)."""
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        g = [1 / sums[..., 0, :], -1 / sums[..., 1, :], -1 / sums[..., 2, :], 1 / sums[..., 3, :]]
        var = np.zeros_like(g[0])
        term = np.empty_like(var)
        for j, (k, m) in enumerate(pairs):  # var += (1 or 2)·g_k·g_m·x_km, in place
            if k == m:
                np.multiply(g[k], g[m], out=term)
            else:
                np.multiply(g[k], 2, out=term)
                term *= g[m]
            term *= sums[..., 4 + j, :]
            var += term
        var *= n
        var /= max(n - 1, 1)
        return np.asarray(np.sqrt(np.maximum(var, 0.0, out=var), out=var), dtype=np.float64)


class _Resampled:
    """The resampled sums of the 4 variables and, for studentizing, of their 10 cross
    products (`pairs`), per resample: the per-cluster values times the resample counts.

    A small matrix (the headline, 500 per-task lines of 10 repetitions) is multiplied as one
    (batch × variables, clusters) matrix; a large one (the power simulation's experiments
    over hundreds of tasks) one variable at a time, each cross
    product made once more per block of resamples, so the (batch, 14, clusters) matrix is
    never held (400 experiments × 500 tasks: 22 MB). Each sum is the same dot product
    either way (the products split only the rows): bit for bit with BLAS on one thread, as
    `analyze` runs it; BLAS's threads split the two products differently and may round a
    last bit differently, as they do between thread counts."""

    def __init__(self, x: FloatArray, pairs: list[tuple[int, int]]) -> None:
        self.batch_shape, self.n = x.shape[:-2], x.shape[-1]
        self.batch = int(np.prod(self.batch_shape)) if self.batch_shape else 1
        self.pairs = pairs
        self.variables = 4 + len(pairs)
        self._split = self.batch > 1 and self.batch * self.variables * self.n >= _SPLIT_CELLS
        rows = x.reshape(self.batch, 4, self.n)
        if self._split:
            self._x = [rows[:, k, :] for k in range(4)]  # views: BLAS reads them strided
            products = [self._product(j) for j in range(len(pairs))]
            self.totals = np.stack([a.sum(axis=-1) for a in self._x + products], axis=-1)
            del products
        else:
            cols = np.empty((self.batch, self.variables, self.n))
            cols[:, :4, :] = rows
            for j, (k, m) in enumerate(pairs):
                np.multiply(rows[:, k, :], rows[:, m, :], out=cols[:, 4 + j, :])
            self._flat = cols.reshape(-1, self.n)
            self.totals = cols.sum(axis=-1)
        self.totals = self.totals.reshape(*self.batch_shape, self.variables)

    def _product(self, j: int, out: FloatArray | None = None) -> FloatArray:
        k, m = self.pairs[j]
        return np.multiply(self._x[k], self._x[m], out=out)

    def sums(self, weights: FloatArray) -> FloatArray:
        """(..., variables, resamples) for these resample counts (resamples, clusters)."""
        if not self._split:
            return (self._flat @ weights.T).reshape(*self.batch_shape, self.variables, -1)
        out = np.empty((self.batch, self.variables, len(weights)))
        w = weights.T
        for v in range(4):
            np.matmul(self._x[v], w, out=out[:, v, :])
        scratch = np.empty((self.batch, self.n))
        for j in range(len(self.pairs)):
            np.matmul(self._product(j, scratch), w, out=out[:, 4 + j, :])
        return out.reshape(*self.batch_shape, self.variables, -1)


_SPLIT_CELLS = 1 << 20
"""From this many values in the (batch, variables, clusters) matrix (8 MB) `_Resampled`
multiplies one variable at a time (never a batch of one: a single row goes through another
BLAS kernel, which may round differently; its matrix is small anyway). Below it one product
is faster (500 per-task lines of 10 repetitions: 18 ms against 27 ms for 2,000
resamples)."""


def _joined(chunks: list[FloatArray]) -> FloatArray:
    """The chunks joined along the last axis; the list is emptied, so each chunk is freed
    as soon as the joined array holds it (per-task lines: 8 MB less at the peak)."""
    joined = np.concatenate(chunks, axis=-1)
    chunks.clear()
    return joined


def _order_stats(values: FloatArray, q_low: float, q_high: float
                 ) -> tuple[FloatArray, FloatArray, NDArray[np.int64]]:
    """Along the last axis: the q_low-quantile rounded down and the q_high-quantile rounded
    up among the values that are not NaN (`_order_stat`), and how many those are.
    `values` is reordered in place (its rows keep their values).

    Rows with the same count of such values have the same two positions: each group is
    partially sorted around just them (NaN goes last, as in a full sort), which finds the
    very values a full sort puts there. Many different counts: one full sort."""
    count = np.asarray((~np.isnan(values)).sum(axis=-1), dtype=np.int64)
    counts, group = np.unique(count, return_inverse=True)
    if values.shape[-1] == 0 or len(counts) > _PARTIAL_GROUPS:
        values.sort(axis=-1)  # nan sorts last
        return (_order_stat(values, count, q_low, lower=True),
                _order_stat(values, count, q_high, lower=False), count)
    rows = values.reshape(-1, values.shape[-1])
    group = group.reshape(-1)
    low = np.full(len(rows), np.nan)
    high = np.full(len(rows), np.nan)
    for g, defined in enumerate(counts.tolist()):
        if defined == 0:
            continue  # no value at all: NaN
        lo, hi = (int(np.clip(f(q * (defined - 1)), 0, defined - 1))
                  for f, q in ((math.floor, q_low), (math.ceil, q_high)))
        if len(counts) == 1:  # every row: partitioned in place, no copy
            rows.partition(sorted({lo, hi}), axis=-1)
            low, high = rows[:, lo].copy(), rows[:, hi].copy()
            break
        members = np.flatnonzero(group == g)
        part = np.partition(rows[members], sorted({lo, hi}), axis=-1)
        low[members], high[members] = part[:, lo], part[:, hi]
    return low.reshape(count.shape), high.reshape(count.shape), count


_PARTIAL_GROUPS = 32
"""Up to this many distinct counts of defined resamples, bounds come from partial sorts."""


def _order_stat(sorted_values: FloatArray, defined: NDArray[np.int64], q: float,
                lower: bool) -> FloatArray:
    """The q-quantile among the first `defined` sorted values, rounded outwards (no
    interpolation, so ±inf never meets arithmetic)."""
    pos = q * (defined - 1)
    index = np.floor(pos) if lower else np.ceil(pos)
    index = np.clip(index, 0, np.maximum(defined - 1, 0)).astype(np.int64)
    picked = np.take_along_axis(sorted_values, index[..., None], axis=-1)[..., 0]
    return np.asarray(np.where(defined > 0, picked, np.nan), dtype=np.float64)
