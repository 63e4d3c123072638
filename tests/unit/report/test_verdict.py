"""The verdict's reasons print its bounds on their side of zero and the fail threshold."""

from __future__ import annotations

from copeca_action.report._verdict import judge
from copeca_action.scenario import Thresholds


def _reason(estimate: float, low: float, high: float, **thresholds: float) -> tuple[str, str]:
    verdict, reasons = judge(estimate=estimate, low=low, high=high, control_low=None,
                             control_high=None, runs_tool=20, runs_base=20, adoption=None,
                             thresholds=Thresholds(**thresholds))
    return verdict, reasons[0]


def test_an_upper_bound_just_below_zero_is_not_printed_as_zero() -> None:
    assert _reason(-0.02, -0.04, -0.0004) == (
        "improvement", "the interval's upper bound -0.04% is below zero")


def test_a_lower_bound_just_above_the_fail_threshold_is_printed_above_it() -> None:
    assert _reason(0.2, 0.1004, 0.3) == (
        "regression", "the interval's lower bound +10.04% is above the fail threshold 10%")
    verdict, reason = _reason(0.2, 0.126, 0.3, fail=0.125, alert=0.05)
    assert verdict == "regression" and reason.endswith("above the fail threshold 12.5%")


def test_an_interval_that_crosses_zero_by_a_hair_shows_it() -> None:
    assert _reason(0.0, -0.0004, 0.00004) == (
        "inconclusive", "the interval [-0.04%, +0.004%] neither clears zero nor passes the "
        "fail threshold 10%")


def test_adoption_just_below_the_minimum_is_not_printed_at_it() -> None:
    verdict, reasons = judge(estimate=0.0, low=-0.1, high=0.1, control_low=None,
                             control_high=None, runs_tool=20, runs_base=20, adoption=0.4999,
                             thresholds=Thresholds())
    assert verdict == "invalid"
    assert reasons == ["the tool was used in 49.99% of runs, below the minimum adoption 50%"]
