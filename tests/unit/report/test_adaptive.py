"""decide(): the stopping rule the engine calls after each round."""

from __future__ import annotations

import numpy as np
import pytest
from report_factory import Make

from copeca_action.records import RunRecord
from copeca_action.report import decide, look_alpha, schedule
from copeca_action.report._spending import spent
from copeca_action.scenario import Adaptive, Scenario


def scenario(**adaptive: object) -> Scenario:
    return Scenario(name="s", tasks={"include": ["*"]}, modes=["baseline", "codesearch"],
                    models=["m"], model_runner_map={"m": "claude"}, resamples=2000,
                    adaptive=Adaptive(**adaptive))  # type: ignore[arg-type]


def test_schedule_and_alpha_shares_sum_to_alpha() -> None:
    a = Adaptive(min_repetitions=2, step=3, max_repetitions=10, alpha=0.05)
    assert schedule(a) == [2, 5, 8, 10]
    shares = [look_alpha(a, k) for k in range(1, 5)]
    assert all(s > 0 for s in shares)
    assert sum(shares) == pytest.approx(0.05)
    assert spent(a, 10) == pytest.approx(0.05)


def test_a_clear_regression_stops_at_the_first_look(simulated: Make) -> None:
    d = decide(simulated(ratio=3.0, tasks=40, reps=2), scenario(min_repetitions=2))
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


@pytest.mark.parametrize(("ratio", "seed"), [(1.0, 1), (1.6, 2), (0.6, 3), (1.25, 4)])
def test_the_report_publishes_the_decision_of_its_look(simulated: Make, ratio: float,
                                                       seed: int) -> None:
    """adaptive.json (decide) and the report (build_report with the scenario's settings, as
    conclude and analyze build it) can never disagree: same look, alpha, verdict, reasons."""
    from copeca_action.report import Settings, build_report

    sc = scenario(min_repetitions=2, step=1, max_repetitions=5)
    records: list[RunRecord] = simulated(ratio=ratio, tasks=12, reps=5, seed=seed)
    for reps in range(2, 6):
        upto = [r for r in records if r.repetition < reps]
        d = decide(upto, sc)
        report = build_report(upto, Settings.from_scenario(sc), scenario=sc.name)
        assert report.look is not None and report.look.look == d.look
        assert report.alpha == d.alpha_look == look_alpha(sc.adaptive, d.look)  # type: ignore[arg-type]
        assert report.verdict == d.verdict
        assert report.comparisons[0].delta.level == pytest.approx(1 - d.alpha_look)
        if d.stop:
            break


def test_the_power_of_an_adaptive_report_says_the_design_it_simulated(simulated: Make) -> None:
    """Stopped (or read) at look 1 of looks at 2..6: `power` simulates every look of the
    schedule, up to 6 repetitions, as plan --power does; it said `repetitions: 2` (the runs
    this report has), a design it did not simulate."""
    from copeca_action.report import Settings, build_report
    from copeca_action.report._power import Design, Pilot, power

    sc = scenario(min_repetitions=2, step=1, max_repetitions=6)
    records: list[RunRecord] = simulated(ratio=1.0, tasks=12, reps=2, seed=5)
    report = build_report(records, Settings.from_scenario(sc, power_experiments=200))
    assert report.look is not None and report.look.look == 1
    p = report.comparisons[0].power
    assert p is not None and p.tasks == 12 and p.repetitions == 6
    # the same numbers as the schedule's power from this report's base-arm runs
    base = sorted((r for r in records if r.arm == "baseline"), key=lambda r: r.task_id)
    tasks = sorted({r.task_id for r in base})
    pilot = Pilot(cost=[np.array([r.cost_usd for r in base if r.task_id == t]) for t in tasks],
                  correct=[np.array([float(r.correct) for r in base if r.task_id == t])
                           for t in tasks], source="")
    same = power(Design(12, 6), fail=sc.thresholds.fail, adaptive=sc.adaptive, pilot=pilot,
                 experiments=200, resamples=200, seed=sc.seed)
    assert (p.improvement, p.regression) == (same.improvement, same.regression)
