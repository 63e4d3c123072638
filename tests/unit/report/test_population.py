"""One population everywhere: the `overall` line carries the table's numbers, and a report
says when its runs were answered by the scripted model."""

from __future__ import annotations

import pytest
from report_factory import Make, record

from copeca_action.report import build_report


def _two_arm(endpoint: str | None, other: str | None = None) -> list:  # type: ignore[type-arg]
    out = []
    for i in range(6):
        for arm, cost, turns in (("baseline", 2.0, 10), ("tool", 1.0, 4)):
            out.append(record(task_id=f"t{i}", arm=arm, cost_usd=cost, turns=turns,
                              endpoint=other if (other and i == 0) else endpoint))
    out.append(record(task_id="c0", arm="baseline", control=True, cost_usd=5.0, turns=30,
                      endpoint=endpoint))
    out.append(record(task_id="c0", arm="tool", control=True, cost_usd=5.0, turns=30,
                      endpoint=endpoint))
    return out


def test_overall_line_has_spend_turns_and_tasks_of_the_non_control_population() -> None:
    c = build_report(_two_arm("real")).headline_comparison
    assert c is not None and c.overall is not None
    o = c.overall
    assert (o.spend_tool, o.spend_base) == (6.0, 12.0)  # the control task's $5 left out
    assert (o.mean_turns_tool, o.mean_turns_base) == (4.0, 10.0)
    assert (o.correct_tool, o.correct_base, o.tasks) == (6, 6, 6)
    assert o.cpc_tool == pytest.approx(o.spend_tool / o.correct_tool)
    assert c.control is not None and c.control.spend_tool == 5.0


@pytest.mark.parametrize(("endpoint", "other", "simulated", "words"), [
    ("real", None, False, ""),
    (None, None, False, ""),
    ("scripted", None, True, "In every run the scripted model answered"),
    ("dry_run", None, True, "dry run"),
    ("real", "scripted", True, "In part: in 2 of 14 runs"),
])
def test_scripted_or_dry_run_records_make_a_simulated_report(
        endpoint: str | None, other: str | None, simulated: bool, words: str) -> None:
    report = build_report(_two_arm(endpoint, other))
    assert report.simulated is simulated
    assert (words in report.simulation_note) if words else report.simulation_note == ""
    assert sum(report.endpoints.values()) == report.records


def test_simulated_factory_records_are_unknown_not_real(simulated: Make) -> None:
    report = build_report(simulated(tasks=6, reps=2))
    assert set(report.endpoints) == {"unknown"} and not report.simulated


def test_task_lines_carry_category_control_and_an_influence_on_the_headline() -> None:
    import math

    records = _two_arm("real")
    records += [record(task_id="t9", arm="tool", cost_usd=9.0, category="fix"),
                record(task_id="t9", arm="baseline", cost_usd=1.0, category="fix")]
    c = build_report(records).headline_comparison
    assert c is not None and c.overall is not None
    by = {ln.key: ln for ln in c.tasks}
    assert by["c0"].control is True and by["c0"].effect is None
    assert by["t9"].category == "fix" and by["t9"].control is False
    assert max(c.tasks, key=lambda ln: abs(ln.effect or 0)).key == "t9"
    effects = sum(ln.effect or 0 for ln in c.tasks)
    assert effects == pytest.approx(0, abs=1e-9)  # shares of shares sum to zero
    assert math.isfinite(by["t9"].effect or math.nan)
