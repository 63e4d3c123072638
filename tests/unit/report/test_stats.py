"""The statistics kernel: cost per correct, the paired bootstrap, small-sample quantiles."""

from __future__ import annotations

import math

import numpy as np
import pytest

from copeca_action.report import cost_per_correct, delta, paired_bootstrap
from copeca_action.report._stats import t_quantile, tail_probability


def test_cost_per_correct_is_infinite_when_nothing_is_correct() -> None:
    assert cost_per_correct(3.0, 0) == math.inf
    assert cost_per_correct(0.0, 0) == math.inf
    assert cost_per_correct(3.0, 2) == 1.5
    assert list(cost_per_correct([2.0, 2.0], [0, 4])) == [math.inf, 0.5]


def test_delta_edge_cases() -> None:
    assert delta(2.0, 1, 1.0, 1) == pytest.approx(1.0)
    assert delta(2.0, 0, 1.0, 1) == math.inf  # tool never right
    assert delta(2.0, 1, 1.0, 0) == -1.0  # base never right
    assert math.isnan(float(delta(2.0, 0, 1.0, 0)))  # no ratio at all
    assert math.isnan(float(delta(0.0, 3, 0.0, 2)))  # $0 in both: 0/0 is no ratio of 1
    assert delta(0.0, 3, 1.0, 2) == -1.0 and delta(1.0, 3, 0.0, 2) == math.inf


@pytest.mark.parametrize(("p", "df", "expected"), [(0.025, 1, 12.706), (0.025, 2, 4.303),
                                                  (0.025, 10, 2.228), (0.05, 30, 1.697)])
def test_t_quantile_matches_tables(p: float, df: int, expected: float) -> None:
    assert t_quantile(p, df) == pytest.approx(expected, abs=1e-3)


def test_expanded_tails_shrink_to_the_nominal_level_with_many_clusters() -> None:
    assert tail_probability(0.05, 5, "expanded") < 0.005
    assert tail_probability(0.05, 5000, "expanded") == pytest.approx(0.025, abs=5e-4)
    assert tail_probability(0.05, 5, "percentile") == 0.025


def test_pairing_uses_the_same_tasks_for_both_arms() -> None:
    # Identical arms: each resample holds the same tasks for both, so every ratio is 1 and
    # the interval collapses to 0. Independent resampling of the arms would not.
    rng = np.random.default_rng(1)
    spend, correct = rng.lognormal(size=30), rng.integers(0, 4, size=30).astype(float)
    bs = paired_bootstrap(spend, correct, spend, correct, resamples=2000, seed=3)
    assert float(bs.estimate) == pytest.approx(0.0)
    assert float(bs.low) == pytest.approx(0.0, abs=1e-12)
    assert float(bs.high) == pytest.approx(0.0, abs=1e-12)


def test_interval_is_for_the_ratio_of_sums_statistic() -> None:
    st, ct = np.array([4.0, 1.0, 2.0]), np.array([1.0, 1.0, 2.0])
    sb, cb = np.array([1.0, 1.0, 1.0]), np.array([1.0, 1.0, 1.0])
    bs = paired_bootstrap(st, ct, sb, cb, resamples=500)
    assert float(bs.estimate) == pytest.approx((7 / 4) / (3 / 3) - 1)
    assert bs.low <= bs.estimate <= bs.high


def test_seeded_and_batched_runs_agree() -> None:
    rng = np.random.default_rng(5)
    data = [rng.lognormal(size=(4, 12)), rng.integers(1, 4, (4, 12)).astype(float),
            rng.lognormal(size=(4, 12)), rng.integers(1, 4, (4, 12)).astype(float)]
    batch = paired_bootstrap(*data, resamples=1000, seed=9)
    one = paired_bootstrap(*(a[2] for a in data), resamples=1000, seed=9)
    again = paired_bootstrap(*(a[2] for a in data), resamples=1000, seed=9)
    other = paired_bootstrap(*(a[2] for a in data), resamples=1000, seed=10)
    assert float(one.low) == float(batch.low[2]) == float(again.low)
    assert float(one.high) == float(batch.high[2])
    assert float(other.low) != float(one.low)


def test_zero_correct_in_the_tool_arm_gives_an_infinite_estimate_not_a_crash() -> None:
    bs = paired_bootstrap([1.0, 2.0, 3.0], [0, 0, 0], [1.0, 2.0, 3.0], [1, 1, 1],
                          resamples=200)
    assert float(bs.estimate) == math.inf and float(bs.high) == math.inf


def test_zero_correct_in_both_arms_has_no_interval() -> None:
    bs = paired_bootstrap([1.0, 2.0], [0, 0], [1.0, 2.0], [0, 0], resamples=200)
    assert math.isnan(float(bs.estimate)) and math.isnan(float(bs.low))


def test_one_cluster_gives_an_unbounded_interval() -> None:
    bs = paired_bootstrap([1.0], [1], [2.0], [1], resamples=200)
    assert float(bs.estimate) == pytest.approx(-0.5)
    assert float(bs.low) == -1.0 and float(bs.high) == math.inf


def test_large_task_counts_are_chunked_without_changing_the_answer_shape() -> None:
    n = 3000
    rng = np.random.default_rng(0)
    s, c = rng.lognormal(size=n), rng.integers(1, 3, n).astype(float)
    bs = paired_bootstrap(s * 1.5, c, s, c, resamples=2000)
    assert float(bs.low) == pytest.approx(0.5) and float(bs.high) == pytest.approx(0.5)


@pytest.mark.parametrize("shape", [(1,), (7,), (2000,), (3, 4, 201), (60, 50)])
@pytest.mark.parametrize("holes", ["none", "inf", "nan", "nan_per_row"])
@pytest.mark.parametrize(("q_low", "q_high"), [(0.025, 0.975), (0.0, 1.0), (0.3, 0.3)])
def test_order_stats_pick_what_a_full_sort_picks(shape: tuple[int, ...], holes: str,
                                                 q_low: float, q_high: float) -> None:
    """Partial sorts (rows grouped by their count of defined values) and the full sort
    (many counts) give the order statistics of sorting every row: ties, infinities, rows
    with fewer defined values or none included."""
    from copeca_action.report._stats import _order_stat, _order_stats

    rng = np.random.default_rng(len(shape) * 1000 + shape[-1])
    values = np.round(rng.standard_normal(shape), 1)  # many ties
    if holes == "inf":
        values.reshape(-1)[::5] = np.inf
        values.reshape(-1)[1::7] = -np.inf
    elif holes == "nan":
        values.reshape(-1)[::3] = np.nan
    elif holes == "nan_per_row":  # a different count in each row: more than 32 groups
        rows = values.reshape(-1, shape[-1])
        for i, row in enumerate(rows):
            row[rng.permutation(shape[-1])[:i % shape[-1]]] = np.nan
    ordered = np.sort(values, axis=-1)
    count = (~np.isnan(values)).sum(axis=-1)
    low, high, defined = _order_stats(values, q_low, q_high)
    np.testing.assert_array_equal(defined, count)
    np.testing.assert_array_equal(low, _order_stat(ordered, count, q_low, lower=True))
    np.testing.assert_array_equal(high, _order_stat(ordered, count, q_high, lower=False))


_SPLIT_CHECK = """
import numpy as np
from copeca_action.report import _stats

rng = np.random.default_rng(5)
shape = (3, 40, 60)  # 120 experiments of 60 tasks
spend_t, spend_b = rng.lognormal(size=shape), rng.lognormal(size=shape)
correct_t = rng.integers(0, 4, size=shape).astype(float)
correct_b = rng.integers(0, 4, size=shape).astype(float)
correct_t[0, 0] = 0.0  # one experiment whose tool arm is never right
runs = np.full(shape, 3.0)
for method in ("hybrid", "percentile", "studentized"):
    got = []
    # the 120 experiments one variable at a time (the one never right, re-bootstrapped
    # alone, as one product: a single row goes through another BLAS kernel), then all as
    # one matrix product
    for split_from in (10_000, 1 << 60):
        _stats._SPLIT_CELLS = split_from
        _stats._DRAWN.clear()
        got.append(_stats.paired_bootstrap(spend_t, correct_t, spend_b, correct_b,
                                           resamples=300, seed=9, method=method,
                                           runs_t=runs, runs_b=runs, task_means=True))
    for name in ("estimate", "low", "high", "defined"):
        np.testing.assert_array_equal(getattr(got[0], name), getattr(got[1], name))
    assert np.isfinite(got[0].low).sum() > 100, method
print("same")
"""


def test_a_large_batch_resampled_one_variable_at_a_time_gives_the_same_bounds() -> None:
    """A large batch (the power simulation over hundreds of tasks) multiplies one variable at
    a time (no (batch, 14, clusters) matrix held): bit for bit the bounds of one product,
    with BLAS on one thread as `analyze` runs it (BLAS's threads split the two products
    differently and may round a last bit differently, as they do between thread counts)."""
    import os
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if not k.endswith("_NUM_THREADS")}
    run = subprocess.run([sys.executable, "-c", _SPLIT_CHECK], capture_output=True,
                         text=True, timeout=120, env=env | {"OPENBLAS_NUM_THREADS": "1"})
    assert run.returncode == 0 and run.stdout.strip() == "same", run.stderr[-3000:]
