"""The verdict: a pure function of an interval, the control interval and the thresholds."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

from copeca_action._util.percent import percent_decimals, threshold_text
from copeca_action.report._model import Verdict
from copeca_action.scenario import Thresholds

NO_PAIR = "no task ran in both arms"
NOTHING_CORRECT = "nothing correct in either arm"
NO_SPEND = "no spend in either arm"
"""Why a delta has no estimate (`Interval.undefined`)."""


def undefined_reason(clusters: int, correct_t: float, correct_b: float) -> str:
    """Why cpc(tool)/cpc(base) has no value on `clusters` paired clusters: none paired,
    neither arm answered anything correctly (∞/∞), or else neither spent anything (0/0)."""
    if clusters == 0:
        return NO_PAIR
    return NOTHING_CORRECT if correct_t == 0 and correct_b == 0 else NO_SPEND


def judge(*, estimate: float | None, low: float | None, high: float | None,
          control_low: float | None, control_high: float | None, runs_tool: int,
          runs_base: int, adoption: float | None, thresholds: Thresholds,
          records_tool: int = 1, records_base: int = 1, paired_tasks: int | None = None,
          main_tasks: int | None = None, unpaired: tuple[int, int] = (0, 0),
          differences: Sequence[str] = (), undefined: str = "",
          cost_unknown: tuple[bool, bool] = (False, False)) -> tuple[Verdict, list[str]]:
    """First matching rule wins: skipped, invalid, inconclusive (too few runs or no
    estimate), regression, improvement, inconclusive. Returns the verdict and why.

    `main_tasks`: non-control tasks either arm ran; `paired_tasks`: those both arms ran
    (None: not checked); `unpaired`: tasks only the tool arm, only the base arm ran;
    `differences`: undeclared differences between the arms (served models, CLI versions);
    `undefined`: why `estimate` is None (`Interval.undefined`); `cost_unknown`: the tool and
    the base arm had runs left out for an unknown cost (the runs and tasks counted here are
    those of known cost, and the reasons say so: those runs did reach the agent)."""
    if records_tool == 0 or records_base == 0:
        return "skipped", ["an arm has no records: nothing to compare"]
    if runs_tool == 0 or runs_base == 0:
        arms = ("either arm" if runs_tool == runs_base == 0
                else "the tool arm" if runs_tool == 0 else "the base arm")
        empty = (runs_tool == 0 and cost_unknown[0], runs_base == 0 and cost_unknown[1])
        if any(empty):
            return "invalid", [f"no run of known cost in {arms}"]
        return "invalid", [f"no run reached the agent in {arms}"]
    known = " with runs of known cost" if any(cost_unknown) else ""
    if main_tasks == 0:
        return "invalid", [f"only control tasks{known} ran: there is no task where the tool "
                           "should matter, so nothing to judge"]
    if paired_tasks == 0:
        return "invalid", [f"no task{known} ran in both arms ({unpaired[0]} only in the tool "
                           f"arm, {unpaired[1]} only in the base arm): nothing to pair"]
    if differences:
        return "invalid", [f"{d}: the difference, not the tool, could explain the delta "
                           "(declare it in thresholds.compare_across to compare on purpose)"
                           for d in differences]
    if adoption is not None and adoption < thresholds.min_adoption:
        d = percent_decimals(adoption, 0, (thresholds.min_adoption,))
        return "invalid", [f"the tool was used in {adoption:.{d}%} of runs, below the minimum "
                           f"adoption {threshold_text(thresholds.min_adoption)}"]
    tol = thresholds.control_tolerance
    if control_low is not None and control_high is not None and (
            control_low > tol or control_high < -tol):
        lines: tuple[float, ...] = (-tol, 0.0, tol)
        return "invalid", [f"control delta interval [{pct_text(control_low, lines)}, "
                           f"{pct_text(control_high, lines)}] lies outside "
                           f"±{threshold_text(tol)}: the arms differ where the tool should not "
                           "matter"]
    if min(runs_tool, runs_base) < thresholds.min_runs:
        return "inconclusive", [f"{min(runs_tool, runs_base)} runs in an arm, below the "
                                f"minimum {thresholds.min_runs}"]
    if estimate is None or low is None or high is None or math.isnan(estimate):
        on = f" on the {paired_tasks} tasks both arms ran" if paired_tasks else ""
        if undefined == NO_SPEND:
            return "inconclusive", [f"neither arm spent anything{on} (every counted run cost "
                                    "$0): cost per correct is $0 in both arms, and 0/0 is no "
                                    "ratio; no delta to judge"]
        return "inconclusive", [f"neither arm answered anything correctly{on}: no cost per "
                                "correct ratio"]
    lines = (0.0, thresholds.fail)
    fail = threshold_text(thresholds.fail)
    shown_low, shown_high = pct_text(low, lines), pct_text(high, lines)
    if low > thresholds.fail:
        return "regression", [f"the interval's lower bound {shown_low} is above the fail "
                              f"threshold {fail}"]
    if high < 0:
        return "improvement", [f"the interval's upper bound {shown_high} is below zero"]
    return "inconclusive", [f"the interval [{shown_low}, {shown_high}] neither clears zero "
                            f"nor passes the fail threshold {fail}"]


def pct_text(value: float, lines: Iterable[float]) -> str:
    """Signed, with as many decimals as keep it on its side of each of `lines`."""
    if math.isinf(value):
        return "+∞" if value > 0 else "−∞"
    return f"{value:+.{percent_decimals(value, 1, lines)}%}"
