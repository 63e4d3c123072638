"""decide(): the stopping rule the engine calls after each round."""

from __future__ import annotations

import pytest
from report_factory import Make

from copeca_action.records import RunRecord
from copeca_action.report import decide, look_alpha, schedule
from copeca_action.report._adaptive import spent
from copeca_action.scenario import Adaptive, Scenario


def scenario(**adaptive: object) -> Scenario:
    return Scenario(name="s", tasks={"include": ["*"]}, modes=["baseline", "codesearch"],
                    models=["m"], model_runner_map={"m": "claude"}, resamples=500,
                    adaptive=Adaptive(**adaptive))  # type: ignore[arg-type]


def test_schedule_and_alpha_shares_sum_to_alpha() -> None:
    a = Adaptive(min_repetitions=2, step=3, max_repetitions=10, alpha=0.05)
    assert schedule(a) == [2, 5, 8, 10]
    shares = [look_alpha(a, k) for k in range(1, 5)]
    assert all(s > 0 for s in shares)
    assert sum(shares) == pytest.approx(0.05)
    assert spent(a, 10) == pytest.approx(0.05)


def test_a_clear_regression_stops_at_the_first_look(simulated: Make) -> None:
    d = decide(simulated(ratio=3.0, tasks=25, reps=2), scenario(min_repetitions=2))
    assert d.stop and d.verdict == "regression" and d.look == 1
    assert d.alpha_look < 0.05 and d.next_repetitions is None


def test_an_undecided_round_asks_for_more(simulated: Make) -> None:
    d = decide(simulated(ratio=1.0, tasks=10, reps=2), scenario(min_repetitions=2, step=2))
    assert not d.stop and d.verdict == "inconclusive" and d.next_repetitions == 4


def test_the_last_look_stops_whatever_the_verdict(simulated: Make) -> None:
    recs: list[RunRecord] = simulated(ratio=1.0, tasks=10, reps=4)
    d = decide(recs, scenario(min_repetitions=2, max_repetitions=4))
    assert d.stop and d.reason == "maximum repetitions reached"
    assert d.alpha_spent == pytest.approx(0.05)
