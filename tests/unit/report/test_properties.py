"""Any mix of records gives a report (never a crash) that survives a JSON round trip."""

from __future__ import annotations

import math

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from report_factory import record

from copeca_action.records import OUTCOMES
from copeca_action.report import Report, Settings, build_report

ARMS = ("baseline", "codesearch", "codesearch@base")

runs = st.lists(st.tuples(
    st.integers(0, 5),  # task
    st.sampled_from(ARMS),
    st.integers(0, 3),  # repetition
    st.sampled_from(OUTCOMES),
    st.booleans(),  # correct
    st.floats(0, 5, allow_nan=False),  # cost
    st.booleans(),  # control
    st.sampled_from([None, True, False]),  # adopted
), max_size=60)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(runs)
def test_any_records_give_a_consistent_report(rows: list[tuple]) -> None:  # type: ignore[type-arg]
    last: dict[tuple[int, str, int], str] = {}
    kept = []
    for row in rows:  # a run id repeats only after an infra error or budget stop (a retry)
        key = (row[0], row[1], row[2])
        if last.get(key, "infra_error") in ("infra_error", "budget_stop"):
            kept.append(row)
            last[key] = row[3]
    rows = kept
    recs = [record(task_id=f"t{t}", arm=arm, repetition=rep, outcome=outcome,
                   correct=correct and outcome != "infra_error", cost_usd=cost, control=control,
                   tool_adopted=adopted, category=("locate", "fix")[t % 2])
            for t, arm, rep, outcome, correct, cost, control, adopted in rows]
    report = build_report(recs, Settings(resamples=100, breakdown_resamples=100))
    assert Report.model_validate_json(report.model_dump_json()) == report
    for arm in report.arms:
        assert arm.runs + arm.infra_errors + arm.not_run == arm.records
        if arm.runs == 0:  # the harness failed every run: no cost per correct, not ∞
            assert arm.cpc_usd is None
        else:
            assert arm.cpc_usd == math.inf if arm.correct == 0 else math.isfinite(arm.cpc_usd)
    for c in report.comparisons:
        d = c.delta
        if d.estimate is not None and d.low is not None and d.high is not None:
            assert d.low <= d.estimate <= d.high or d.clusters < 2
