"""Per-arm intervals: cost per correct (cluster bootstrap) and accuracy (Wilson, deff)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from report_factory import make_simulated, record

from copeca_action.report import (
    Report,
    Settings,
    accuracy_interval,
    arm_bootstrap,
    build_report,
    paired_bootstrap,
)
from copeca_action.report._simulate import Population, draw


def _constructed(tasks: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each task: 4 runs, half right, spend $1 per run with task-level noise around it, so
    the true cost per correct is $2 and the true accuracy 50 %."""
    rng = np.random.default_rng(seed)
    runs = np.full(tasks, 4.0)
    correct = rng.binomial(4, 0.5, tasks).astype(np.float64)
    spend = runs * rng.uniform(0.8, 1.2, tasks)
    return spend, correct, runs


def test_interval_holds_the_true_value_in_a_constructed_case() -> None:
    spend, correct, runs = _constructed(40)
    arm = arm_bootstrap(spend, correct, runs, resamples=4000, seed=3)
    assert arm.cpc == pytest.approx(spend.sum() / correct.sum())
    assert arm.cpc_low < 2.0 < arm.cpc_high
    assert arm.cpc_low < arm.cpc < arm.cpc_high
    assert arm.accuracy_low < 0.5 < arm.accuracy_high


def test_interval_widens_with_fewer_tasks() -> None:
    spend, correct, runs = _constructed(60, seed=1)
    widths = []
    for n in (60, 20, 6):
        a = arm_bootstrap(spend[:n], correct[:n], runs[:n], resamples=4000, seed=0)
        widths.append((math.log(a.cpc_high / a.cpc_low), a.accuracy_high - a.accuracy_low))
    assert widths[0][0] < widths[1][0] < widths[2][0]
    assert widths[0][1] < widths[1][1] < widths[2][1]


def test_interval_is_deterministic_with_the_seed_and_shares_the_delta_resamples() -> None:
    spend, correct, runs = _constructed(15)
    a, b = (arm_bootstrap(spend, correct, runs, resamples=2000, seed=7) for _ in range(2))
    assert (a.cpc_low, a.cpc_high) == (b.cpc_low, b.cpc_high)
    c = arm_bootstrap(spend, correct, runs, resamples=2000, seed=8)
    assert (a.cpc_low, a.cpc_high) != (c.cpc_low, c.cpc_high)
    # Against a constant pseudo-arm the paired bootstrap *is* the arm's interval: same draws.
    ones = np.ones(15)
    paired = paired_bootstrap(spend, correct, ones, ones, resamples=2000, seed=7,
                              runs_t=runs, runs_b=ones, hybrid_below=10**9)
    assert paired.low + 1 == pytest.approx(a.cpc_low)
    assert paired.high + 1 == pytest.approx(a.cpc_high)


def test_zero_correct_gives_a_lower_bound_and_infinity() -> None:
    spend, _, runs = _constructed(8)
    arm = arm_bootstrap(spend, np.zeros(8), runs, resamples=1000, seed=0)
    assert arm.cpc == math.inf and arm.cpc_high == math.inf
    assert 0 < arm.cpc_low < math.inf
    # The finite bound is the bootstrap's lower bound (at alpha/2) with the accuracy set to
    # its exact upper bound (at alpha/4): below spend over that bound, which alone would
    # ignore the spend's own uncertainty.
    total = runs.sum()
    upper = total * (1 - 0.0125 ** (1 / total))
    assert arm.cpc_low < spend.sum() / upper
    imputed = arm_bootstrap(spend, runs * upper / total, runs, alpha=0.025, resamples=1000,
                            seed=0)
    assert arm.cpc_low == pytest.approx(float(imputed.cpc_low), rel=0.2)
    assert arm.accuracy == 0 and arm.accuracy_low == 0 and 0 < arm.accuracy_high < 0.2


def test_accuracy_interval_widens_when_answers_cluster_by_task() -> None:
    runs = np.full(10, 10.0)
    spread = np.array([5.0] * 10)  # every task at 50 %: no clustering
    clustered = np.array([10.0, 0.0] * 5)  # tasks all right or all wrong: same 50 %
    p1, lo1, hi1, d1 = accuracy_interval(spread, runs)
    p2, lo2, hi2, d2 = accuracy_interval(clustered, runs)
    assert p1 == p2 == 0.5 and d1 == 1.0 and d2 > 5
    assert hi2 - lo2 > 2 * (hi1 - lo1)


def test_all_correct_keeps_a_lower_bound_below_one() -> None:
    p, low, high, _ = accuracy_interval(np.full(5, 3.0), np.full(5, 3.0))
    assert p == 1 and high == 1 and 0.5 < low < 1


def test_one_task_has_no_interval() -> None:
    p, low, high, _ = accuracy_interval([2.0], [4.0])
    assert p == 0.5 and (low, high) == (0.0, 1.0)


def test_report_carries_arm_intervals_and_round_trips() -> None:
    records = make_simulated(ratio=1.3, tasks=12, reps=2, control_tasks=2)
    report = build_report(records, Settings(resamples=2000))
    for arm in report.arms:
        assert arm.interval is not None and arm.interval.cpc_low is not None
        assert arm.interval.cpc_high is not None
        assert arm.interval.cpc_low <= arm.cpc_usd <= arm.interval.cpc_high
        assert arm.accuracy is not None
        assert arm.interval.accuracy_low <= arm.accuracy <= arm.interval.accuracy_high
        assert arm.interval.clusters == 14 and arm.interval.resamples == 2000
    overall = report.comparisons[0].overall
    assert overall is not None and overall.interval_tool and overall.interval_base
    assert overall.interval_tool.clusters == 12  # the headline's tasks: control left out
    assert report.comparisons[0].capabilities[0].interval_tool is None
    again = Report.model_validate_json(report.model_dump_json())
    assert again == report


def test_report_with_a_zero_correct_arm_says_infinity_not_nan() -> None:
    records = [record(task_id=f"t{i}", arm=arm, repetition=r, cost_usd=1.0,
                      correct=arm == "baseline" and (i + r) % 2 == 0)
               for i in range(6) for r in range(2) for arm in ("baseline", "tool")]
    report = build_report(records, Settings(resamples=1000))
    tool = next(a for a in report.arms if a.arm == "tool")
    assert tool.interval is not None and tool.cpc_usd == math.inf
    assert tool.interval.cpc_high == math.inf
    assert tool.interval.cpc_low is not None and math.isfinite(tool.interval.cpc_low)
    text = report.model_dump_json()
    assert "NaN" not in text and "Infinity" in text


def test_simulated_coverage_is_near_nominal() -> None:
    """A reduced version of bench/stats.py's per-arm table (the bench runs the full one)."""
    pop = Population(accuracy=0.5)
    rng = np.random.default_rng(11)
    d = draw(pop, 300, 20, 3, rng)
    spend, correct = d.spend_b.sum(-1), d.correct_b.sum(-1)
    arm = arm_bootstrap(spend, correct, np.full(spend.shape, 3.0), resamples=500, seed=rng)
    cpc = ((arm.cpc_low <= pop.true_cpc()) & (pop.true_cpc() <= arm.cpc_high)).mean()
    acc = ((arm.accuracy_low <= pop.true_accuracy())
           & (pop.true_accuracy() <= arm.accuracy_high)).mean()
    assert 0.89 <= cpc <= 0.995 and 0.9 <= acc <= 1.0
