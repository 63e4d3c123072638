"""Reports from records: spend rules, edge cases, verdicts, comparisons, warnings."""

from __future__ import annotations

import dataclasses
import datetime as dt
import math
from collections.abc import Callable

import pytest
from report_factory import Make, record

from copeca_action.records import RunRecord
from copeca_action.report import RecordTable, Report, Settings, build_report, table_from_rows
from copeca_action.scenario import Thresholds

FAST = Settings(resamples=500, breakdown_resamples=200)


def two_arms(tool_correct: bool, base_correct: bool, tasks: int = 8, reps: int = 2,
             tool_cost: float = 1.0) -> list:
    out = []
    for i in range(tasks):
        for r in range(reps):
            out.append(record(task_id=f"t{i}", arm="codesearch", repetition=r,
                              correct=tool_correct, cost_usd=tool_cost))
            out.append(record(task_id=f"t{i}", arm="baseline", repetition=r,
                              correct=base_correct))
    return out


def test_spend_counts_failed_runs_and_excludes_infra_errors_and_budget_stops() -> None:
    recs = [record(task_id="a", arm="baseline", cost_usd=1.0, correct=True),
            record(task_id="a", arm="baseline", repetition=1, cost_usd=2.0, correct=False,
                   outcome="agent_error"),
            record(task_id="a", arm="baseline", repetition=2, cost_usd=4.0, correct=False,
                   outcome="timeout"),
            record(task_id="a", arm="baseline", repetition=3, cost_usd=8.0,
                   outcome="infra_error", correct=False),
            record(task_id="a", arm="baseline", repetition=4, cost_usd=0.0,
                   outcome="budget_stop", correct=False)]
    report = build_report(recs, FAST)
    arm = report.arms[0]
    assert (arm.runs, arm.spend_usd, arm.correct, arm.cpc_usd) == (3, 7.0, 1, 7.0)
    assert (arm.infra_errors, arm.not_run) == (1, 1)
    assert report.exclusions.infra_error_runs == ["a-baseline-3"]
    assert report.exclusions.not_run == ["a-baseline-4"]


def test_a_retry_supersedes_its_infra_error() -> None:
    first = record(task_id="a", outcome="infra_error", correct=False, attempt=1)
    retry = record(task_id="a", outcome="ok", attempt=2, cost_usd=3.0)
    report = build_report([first, retry], FAST)
    assert report.arms[0].runs == 1 and report.arms[0].spend_usd == 3.0
    assert report.exclusions.superseded_attempts == 1 and not report.exclusions.infra_error_runs


def test_zero_correct_in_the_tool_arm_is_infinite_and_survives_json() -> None:
    report = build_report(two_arms(False, True), FAST)
    c = report.comparisons[0]
    assert report.arms[1].cpc_usd == math.inf and c.delta.estimate == math.inf
    assert c.verdict == "regression"  # nothing right in 16 runs vs all right: a clear loss
    assert c.delta.low is not None and 0 < c.delta.low < math.inf
    assert any("answered nothing correctly" in w for w in report.warnings)
    text = report.model_dump_json()
    assert '"Infinity"' in text
    assert Report.model_validate_json(text) == report


def test_zero_correct_in_both_arms_is_inconclusive_not_a_crash() -> None:
    report = build_report(two_arms(False, False), FAST)
    c = report.comparisons[0]
    assert c.delta.estimate is None and c.delta.low is None
    assert report.verdict == "inconclusive"
    assert "neither arm answered anything correctly" in report.verdict_reasons[0]
    assert c.delta.undefined == "nothing correct in either arm"


def test_no_spend_in_either_arm_is_no_ratio_not_a_delta_of_zero() -> None:
    """Every run cost $0 (a model priced at 0): 0/0 was taken as a ratio of 1 and the report
    said "+0.0%" with an interval of [-100%, +∞]."""
    records = [r.model_copy(update={"cost_usd": 0.0}) for r in two_arms(True, True)]
    records = [r.model_copy(update={"correct": r.repetition == 0}) if r.task_id == "t0" else r
               for r in records]
    report = build_report(records, FAST)
    c = report.comparisons[0]
    assert (c.delta.estimate, c.delta.low, c.delta.high) == (None, None, None)
    assert c.delta.undefined == "no spend in either arm"
    assert report.verdict == "inconclusive"
    assert "neither arm spent anything on the 8 tasks both arms ran" in report.verdict_reasons[0]
    task = next(ln for ln in c.tasks if ln.key == "t1")
    assert task.delta is None or task.delta.estimate is None
    assert c.overall is not None and (c.overall.cpc_tool, c.overall.cpc_base) == (0.0, 0.0)
    assert not any("answered nothing correctly" in w for w in report.warnings)
    assert Report.model_validate_json(report.model_dump_json()) == report


def test_one_arm_at_no_spend_says_so_and_is_not_called_nothing_correct() -> None:
    """The base arm at $0: the delta is +∞ (any cost against $0), and the warnings said "the
    tool arm answered nothing correctly", which it had."""
    records = [r.model_copy(update={"cost_usd": 0.0}) if r.arm == "baseline" else r
               for r in two_arms(True, True)]
    report = build_report(records, FAST)
    c = report.comparisons[0]
    assert c.delta.estimate == math.inf and c.delta.undefined == ""
    assert not any("answered nothing correctly" in w for w in report.warnings)
    assert any("the base arm spent nothing on the 8 tasks both arms ran" in w
               and "+∞" in w for w in report.warnings)


def test_one_task_gives_an_unbounded_interval_and_no_verdict(simulated: Make) -> None:
    report = build_report(simulated(ratio=3.0, tasks=1, reps=10), FAST)
    c = report.comparisons[0]
    assert c.delta.clusters == 1 and c.delta.low == -1.0 and c.delta.high == math.inf
    assert report.verdict == "inconclusive"
    assert any("only 1 tasks" in w for w in report.warnings)
    assert c.tasks[0].delta is not None  # 10 repetitions: the task line has an interval


def test_all_infra_errors_is_invalid_and_every_run_is_listed() -> None:
    recs = [record(task_id=f"t{i}", arm=arm, outcome="infra_error", correct=False)
            for i in range(3) for arm in ("codesearch", "baseline")]
    report = build_report(recs, FAST)
    assert report.verdict == "invalid"
    assert len(report.exclusions.infra_error_runs) == 6
    assert all(a.runs == 0 and a.spend_usd == 0 for a in report.arms)


def test_an_arm_whose_every_run_is_an_infra_error_has_no_cost_per_correct() -> None:
    """The harness failed, the agent answered nothing: no cost per correct (null), never the
    ∞ of an agent that answered everything wrong; a task one arm did not run likewise."""
    recs = [record(task_id=f"t{i}", arm="codesearch", repetition=r, outcome="infra_error",
                   correct=False, cost_usd=0.5)
            for i in range(4) for r in range(2)]
    recs += [record(task_id=f"t{i}", arm="baseline", repetition=r, correct=r == 0)
             for i in range(5) for r in range(2)]
    report = build_report(recs, FAST)
    arms = {a.arm: a for a in report.arms}
    assert arms["codesearch"].runs == 0 and arms["codesearch"].cpc_usd is None
    assert arms["baseline"].cpc_usd == 2.0
    c = report.comparisons[0]
    assert c.overall is not None and c.overall.cpc_tool is None and c.overall.cpc_base == 2.0
    assert all(ln.cpc_tool is None for ln in c.tasks)
    assert report.verdict == "invalid"
    assert '"Infinity"' not in report.model_dump_json()


def test_a_task_one_arm_did_not_run_has_no_cost_per_correct_there() -> None:
    recs = [*two_arms(True, True), record(task_id="extra", arm="baseline", correct=False)]
    line = next(ln for ln in build_report(recs, FAST).comparisons[0].tasks
                if ln.key == "extra")
    assert (line.cpc_tool, line.cpc_base) == (None, math.inf)


def test_no_records_is_skipped() -> None:
    report = build_report([], FAST)
    assert report.verdict == "skipped" and report.headline is None


def test_no_control_tasks_warns(simulated: Make) -> None:
    report = build_report(simulated(tasks=10), FAST)
    assert report.comparisons[0].control_delta is None
    assert any("no control tasks" in w for w in report.warnings)


def test_single_repetition_warns_and_task_lines_say_too_few(simulated: Make) -> None:
    report = build_report(simulated(tasks=12, reps=1), FAST)
    assert any("single repetition" in w for w in report.warnings)
    assert all(ln.delta is None and "too few" in ln.note for ln in report.comparisons[0].tasks)


def test_clear_regression_and_improvement(simulated: Make) -> None:
    assert build_report(simulated(ratio=2.5, tasks=30, reps=4), FAST).verdict == "regression"
    assert build_report(simulated(ratio=0.4, tasks=30, reps=4), FAST).verdict == "improvement"


def test_low_adoption_is_invalid(simulated: Make) -> None:
    report = build_report(simulated(ratio=2.5, tasks=20, adoption=0.2), FAST)
    assert report.verdict == "invalid" and "adoption" in report.verdict_reasons[0]
    adopted = report.comparisons[0].adopted
    assert adopted is not None and adopted.adoption_rate < 0.5


def test_a_tool_that_failed_is_named_in_the_low_adoption_reason_and_the_warnings() -> None:
    recs = two_arms(True, True, tasks=8)
    for i, rec in enumerate(r for r in recs if r.arm == "codesearch"):
        failed = i % 4 != 0  # 12 of 16 runs: the tool broke; 4: used
        recs[recs.index(rec)] = rec.model_copy(update={
            "tool_adopted": not failed, "flags": ["tool_failed"] if failed else []})
    report = build_report(recs, FAST)
    assert report.verdict == "invalid"
    assert report.verdict_reasons == [
        "the tool was used in 25% of runs, below the minimum adoption 50%",
        "in 12 of the 12 run(s) without the tool, the tool under test failed (flag "
        "tool_failed): it broke, the agent did not pass it by"]
    assert any(w.startswith("arm codesearch: the tool under test failed in 12 run(s)")
               for w in report.warnings)
    plain = build_report(two_arms(True, True, tasks=8), FAST)
    assert not any("tool_failed" in w for w in plain.warnings)


def test_control_drift_is_invalid() -> None:
    recs = two_arms(True, True, tasks=12, tool_cost=1.0)
    for i in range(12):  # control tasks where the tool arm costs 3× more
        for r in range(2):
            recs.append(record(task_id=f"c{i}", arm="codesearch", repetition=r, control=True,
                               cost_usd=3.0 + 0.1 * i))
            recs.append(record(task_id=f"c{i}", arm="baseline", repetition=r, control=True))
    report = build_report(recs, FAST)
    assert report.verdict == "invalid" and "control" in report.verdict_reasons[0]


def test_too_few_runs_is_inconclusive() -> None:
    recs = two_arms(True, True, tasks=2, reps=1, tool_cost=5.0)
    report = build_report(recs, Settings(resamples=300, thresholds=Thresholds(min_runs=6)))
    assert report.verdict == "inconclusive" and "minimum" in report.verdict_reasons[0]


def test_three_arms_compare_head_with_base_first(simulated: Make) -> None:
    head = simulated(ratio=1.0, tasks=10, seed=1)
    base = [r.model_copy(update={"arm": "codesearch@base", "run_id": r.run_id + "b"})
            for r in simulated(ratio=1.0, tasks=10, seed=1) if r.arm == "codesearch"]
    report = build_report(head + base, FAST)
    kinds = [(c.kind, c.tool, c.base) for c in report.comparisons]
    assert kinds == [("head_vs_base", "codesearch", "codesearch@base"),
                     ("tool_vs_baseline", "codesearch", "baseline")]
    assert report.headline == 0
    assert report.comparisons[0].delta.estimate == pytest.approx(0.0)  # same runs


def test_breakdowns_say_too_few_where_n_is_small(simulated: Make) -> None:
    c = build_report(simulated(tasks=10, reps=5), FAST).comparisons[0]
    assert {ln.key for ln in c.capabilities} == {"locate", "trace", "fix", "debug", "reason"}
    assert all(ln.delta is None and "too few tasks (2)" in ln.note for ln in c.capabilities)
    assert c.languages[0].delta is not None
    assert all(ln.delta is not None and ln.delta.unit == "repetition" for ln in c.tasks)


def test_version_and_pricing_warnings() -> None:
    recs = [r.model_copy(update={"cli_version": "2.0" if r.arm == "codesearch" else "1.0"})
            for r in two_arms(True, True)]
    settings = Settings(resamples=300, pricing_updated={"claude": dt.date(2026, 1, 1)},
                        today=dt.date(2026, 11, 21))
    report = build_report(recs, settings)
    assert report.verdict == "invalid" and "CLI versions differ" in report.verdict_reasons[0]
    assert any("prices last checked 2026-01-01" in w for w in report.warnings)
    declared = dataclasses.replace(
        settings, thresholds=Thresholds(compare_across=["cli_version"]))
    report = build_report(recs, declared)
    assert report.verdict != "invalid"
    assert any("CLI versions differ" in w and "declared" in w for w in report.warnings)


def test_a_cost_basis_that_splits_by_arm_is_an_arm_difference() -> None:
    """Every tool run priced by the CLI's own figure, every base run from tokens × the price
    table: the report only warned "cost basis differs between runs", though the difference
    lines up with the arms and could explain the delta, as a model or a CLI version could."""
    recs = [r.model_copy(update={"cost_source": "vendor" if r.arm == "codesearch"
                                 else "computed"}) for r in two_arms(True, True)]
    report = build_report(recs, FAST)
    assert report.verdict == "invalid"
    assert report.verdict_reasons[0].startswith(
        "the arms' costs share no basis (codesearch: the CLI's own figure (vendor); baseline: "
        "tokens × the runners' prices (computed)): the difference, not the tool, could "
        "explain the delta")
    declared = dataclasses.replace(FAST, thresholds=Thresholds(compare_across=["cost_source"]))
    report = build_report(recs, declared)
    assert report.verdict != "invalid"
    assert any("share no basis" in w and "declared" in w for w in report.warnings)
    # a few runs that fell back to the other basis in one arm: a basis in common, a warning
    mixed = [r.model_copy(update={"cost_source": "computed" if r.arm == "codesearch"
                                  and r.task_id == "t0" else "vendor"}) for r in recs]
    report = build_report(mixed, FAST)
    assert report.verdict != "invalid"
    assert any(w.startswith("cost basis differs between runs") for w in report.warnings)
    # runs that spent nothing (source none) are no basis of their own
    free = [r.model_copy(update={"cost_source": "none" if r.arm == "codesearch"
                                 and r.task_id == "t0" else "vendor"}) for r in recs]
    assert build_report(free, FAST).verdict != "invalid"


def test_staleness_is_judged_at_the_run_date_with_the_dates_the_records_carry() -> None:
    """A custom runner's price date travels in its records; a report read long after the
    run does not call fresh prices stale, and a run made with old prices says so."""
    def recs(updated: dt.date, started: dt.datetime) -> list[RunRecord]:
        return [r.model_copy(update={"runner": "my-proxy", "pricing_updated": updated,
                                     "started_at": started})
                for r in two_arms(True, True)]

    fresh = recs(dt.date(2026, 3, 1), dt.datetime(2026, 3, 20, tzinfo=dt.UTC))
    report = build_report(fresh, Settings(resamples=300))
    assert not any("prices last checked" in w for w in report.warnings), report.warnings
    old = recs(dt.date(2026, 1, 1), dt.datetime(2026, 3, 20, tzinfo=dt.UTC))
    report = build_report(old, Settings(resamples=300))
    assert any("runner my-proxy: prices last checked 2026-01-01, more than 60 days before the "
               "run (2026-03-20)" in w for w in report.warnings), report.warnings
    rows = [r.model_dump(mode="json") for r in old]  # as read back from results.jsonl
    assert build_report(table_from_rows(rows), Settings(resamples=300)).warnings == \
        report.warnings
    # a date after the run (a typo: 2062) would silence the warning for decades
    typo = recs(dt.date(2062, 3, 1), dt.datetime(2026, 3, 20, tzinfo=dt.UTC))
    report = build_report(typo, Settings(resamples=300))
    assert any("runner my-proxy: prices last checked 2062-03-01, after the run (2026-03-20)"
               in w for w in report.warnings), report.warnings
    # the bundled table's own date after an old run is no typo: the prices were checked since
    later = Settings(resamples=300, pricing_updated={"claude": dt.date(2026, 11, 23)},
                     today=dt.date(2026, 3, 20))
    assert not any("after the run" in w for w in build_report(two_arms(True, True),
                                                               later).warnings)


def test_reports_are_reproducible_and_carry_their_settings(simulated: Make) -> None:
    recs = simulated(ratio=1.3, tasks=15)
    a, b = build_report(recs, FAST), build_report(recs, FAST)
    assert a == b
    assert (a.seed, a.resamples, a.interval_method, a.alpha) == (0, 500, "hybrid", 0.05)
    assert a.thresholds == Thresholds()


def test_tests_modified_runs_are_counted_per_arm_and_warned() -> None:
    recs = two_arms(True, True, tasks=3, reps=1)
    recs[0] = recs[0].model_copy(update={"flags": ["tests_modified"]})
    report = build_report(recs, FAST)
    tool = next(a for a in report.arms if a.arm == "codesearch")
    base = next(a for a in report.arms if a.arm == "baseline")
    assert tool.flags.get("tests_modified") == 1 and not base.flags.get("tests_modified")
    assert any("codesearch: 1 run(s) changed test or test-runner files" in w
               for w in report.warnings)


def test_dates_are_read_once_per_distinct_value_with_the_same_result() -> None:
    from copeca_action.report._table import _as_date, _pricing_dates, _run_date

    values = ["2026-11-21T00:00:00.1+00:00", "2026-11-22T09:00:00Z", "", None, "garbage",
              dt.datetime(2026, 11, 23, 1, 2), dt.date(2026, 1, 5), "2026-02-30", "2026-01-04x"]
    days = [d for d in map(_as_date, values) if d is not None]
    assert _run_date(values) == max(days) == dt.date(2026, 11, 23)
    pairs = list(zip(["a", "b", None, "a", "", "b", "a", "b", "a"], values, strict=True))
    oldest: dict[str, dt.date] = {}
    for runner, value in pairs:  # per record, as before
        day = _as_date(value)
        if day is not None:
            oldest[str(runner or "")] = min(day, oldest.get(str(runner or ""), day))
    runners, dates = [r for r, _ in pairs], [v for _, v in pairs]
    assert _pricing_dates(runners, dates) == tuple(sorted(oldest.items()))
    assert _pricing_dates(runners, dates) == (("a", dt.date(2026, 1, 4)),
                                              ("b", dt.date(2026, 11, 22)))
    assert _pricing_dates(runners, [None] * len(runners)) == ()
    assert _run_date([["unhashable"], "2026-03-01"]) == dt.date(2026, 3, 1)


def test_task_lines_are_the_general_line_of_each_task() -> None:
    """The per-task lines are computed in Python numbers (`_task_line`); each must equal
    `_line` over that one task's sums: tasks one arm did not run, a control task, an arm
    with nothing right, a task with no spend and tasks with too few repetitions."""
    import numpy as np

    from copeca_action.report._build import _effect, _line, _Sums, _task_lines

    recs = []
    for task, arms, control, correct, cost, reps in (
            ("both", ("codesearch", "baseline"), False, (True, False), (1.5, 0.7), 6),
            ("tool-only", ("codesearch",), False, (True,), (2.0,), 6),
            ("base-only", ("baseline",), False, (False,), (0.3,), 2),
            ("control", ("codesearch", "baseline"), True, (True, True), (1.0, 1.25), 5),
            ("never-right", ("codesearch", "baseline"), False, (False, True), (0.9, 1.1), 5),
            ("free", ("codesearch", "baseline"), False, (True, True), (0.0, 0.0), 3),
            ("few", ("codesearch", "baseline"), False, (True, False), (0.2, 0.4), 2)):
        for arm, right, usd in zip(arms, correct, cost, strict=True):
            for r in range(reps):
                flip = r % 2 == 1 and task != "never-right"
                recs.append(record(task_id=task, arm=arm, repetition=r, control=control,
                                   correct=right != flip,
                                   cost_usd=usd * (1 + r / 7), category=f"cat-{task}"))
    t = table_from_rows([r.model_dump(mode="json") for r in recs])
    tool = t.reached & (t.arm.codes == t.arm.code("codesearch"))
    base = t.reached & (t.arm.codes == t.arm.code("baseline"))
    lines = {line.key: line for line in _task_lines(t, tool, base, FAST)}
    assert sorted(lines) == sorted(t.task.names)
    n = len(t.task.names)
    sums = [_Sums(*(np.bincount(t.task.codes[rows], weights=w[rows], minlength=n)
                    for w in (t.cost, t.correct.astype(np.float64))),
                  np.bincount(t.task.codes[rows], minlength=n)) for rows in (tool, base)]
    main = [~t.control & rows for rows in (tool, base)]
    totals = [(float(t.cost[m].sum()), float(t.correct[m].sum())) for m in main]
    for code, name in enumerate(t.task.names):
        one = [_Sums(a.spend[code:code + 1], a.correct[code:code + 1], a.runs[code:code + 1])
               for a in sums]
        got = lines[name]
        expected = _line(name, one[0], one[1], got.delta, got.note)
        assert got.model_dump(exclude={"category", "control", "effect"}) == expected.model_dump(
            exclude={"category", "control", "effect"}), name
        assert got.category == f"cat-{name}" and got.control == (name == "control")
        scalar = [(float(a.spend[0]), float(a.correct[0]), int(a.runs[0])) for a in one]
        assert got.effect == (None if name == "control" else _effect(*scalar, totals))
    assert lines["tool-only"].runs_base == 0 and lines["tool-only"].note == "only one arm ran"
    assert lines["tool-only"].tasks == 0 and lines["both"].tasks == 1
    assert lines["never-right"].cpc_tool == math.inf and lines["free"].cpc_tool == 0.0
    assert lines["few"].note.startswith("too few repetitions (2)")
    assert lines["both"].effect is not None and lines["base-only"].effect is None


def test_sparse_repetition_numbers_give_the_same_task_lines(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A repetition numbered 10^9 once made the per-task lines allocate a (tasks × 10^9)
    matrix (45 GiB, a MemoryError): sparse numbers are taken in order within each task, in
    batches of tasks, and each task's line is the one its runs numbered 0, 1, 2… give."""
    from copeca_action.report import _build

    def table(number: Callable[[int], int]) -> RecordTable:
        recs = [record(task_id=f"t{i}", arm=arm, repetition=number(r),
                       correct=(i + r) % 3 > 0, cost_usd=1.0 + i / 10 + r / 100)
                for i in range(7) for arm in ("codesearch", "baseline")
                for r in range(6 if i % 2 else 3)]
        return table_from_rows([r.model_dump(mode="json") for r in recs])

    def lines(t: RecordTable) -> list[dict[str, object]]:
        tool = t.reached & (t.arm.codes == t.arm.code("codesearch"))
        base = t.reached & (t.arm.codes == t.arm.code("baseline"))
        return [line.model_dump() for line in _build._task_lines(t, tool, base, FAST)]

    dense = lines(table(lambda r: r))
    assert sum(line["delta"] is not None for line in dense) == 3  # the 6-repetition tasks
    sparse = table(lambda r: 10**9 + 7 * r)
    assert len(_build._task_cells(sparse)) == 1 and _build._task_cells(sparse)[0][3] == 6
    assert lines(sparse) == dense
    monkeypatch.setattr(_build, "_TASK_CELLS", 8)  # a task or two per batch
    assert len(_build._task_cells(sparse)) > 3
    assert lines(sparse) == dense


def test_a_breakdown_line_on_the_headline_population_shows_the_headline_interval() -> None:
    """One language, one model, one category: those lines hold exactly the headline's runs,
    and were bootstrapped again with the breakdowns' fewer resamples. 8 tasks × 1 repetition
    read [−98.4%, +2995.3%] in the headline and [−83.1%, +198.3%] on the python line of the
    same runs (400 / 200 resamples; at 10,000 / 2,000: +134.8% against +108.8%)."""
    recs = []
    for i in range(8):
        recs.append(record(task_id=f"t{i}", arm="baseline", cost_usd=1.0 + 0.1 * i,
                           correct=i % 3 != 0))
        recs.append(record(task_id=f"t{i}", arm="codesearch", cost_usd=0.8 + 0.1 * i,
                           correct=i % 4 != 0))
    recs.append(record(task_id="t8", arm="baseline", category="fix", language="go", model="m2"))
    recs.append(record(task_id="t8", arm="codesearch", category="fix", language="go",
                       model="m2"))
    c = build_report(recs[:-2], Settings(resamples=400, breakdown_resamples=200)).comparisons[0]
    lines = [*c.capabilities, *c.languages, *c.models]
    assert [ln.key for ln in lines] == ["locate", "python", "m"]
    assert all(ln.delta == c.delta for ln in lines), [ln.delta for ln in lines]
    assert c.delta.resamples == 400
    # a line on part of the headline's runs is its own bootstrap, at the breakdowns' count
    c = build_report(recs, Settings(resamples=400, breakdown_resamples=200)).comparisons[0]
    part = next(ln for ln in c.languages if ln.key == "python")
    assert part.delta is not None and part.delta.resamples == 200
    assert part.delta != c.delta


def test_reasons_name_which_arms_have_no_run_and_runs_of_unknown_cost_as_such() -> None:
    """Both arms all infra errors read "no run reached the agent in the tool arm", as if the
    base arm's runs had; and a tool arm whose every non-control run had no price read as one
    that never ran those tasks: "no task ran in both arms (0 only in the tool arm, 8 only in
    the base arm)", "8 task(s) ran in only one arm", each task "only one arm ran"."""
    recs = [record(task_id=f"t{i}", arm=arm, outcome="infra_error", correct=False)
            for i in range(3) for arm in ("codesearch", "baseline")]
    assert build_report(recs, FAST).verdict_reasons == [
        "no run reached the agent in either arm"]
    recs = [record(task_id=f"t{i}", arm=arm, repetition=r, correct=r > 0,
                   cost_usd=None if arm == "codesearch" and i < 8 else 1.0,
                   cost_unknown_reason="no price for model m" if arm == "codesearch" else None,
                   control=i >= 8)
            for i in range(9) for r in range(3) for arm in ("codesearch", "baseline")]
    report = build_report(recs, FAST)
    assert report.verdict == "invalid"
    assert report.verdict_reasons[1] == (
        "no task with runs of known cost ran in both arms (0 only in the tool arm, 8 only in "
        "the base arm): nothing to pair")
    assert ("codesearch vs baseline: 8 task(s) with runs of known cost ran in only one arm and "
            "are left out of the comparison") in report.warnings
    notes = {ln.note for ln in report.comparisons[0].tasks if not ln.control}
    assert notes == {"only one arm ran with runs of known cost"}
    only = [r for r in recs if r.arm == "baseline" or r.control]  # nothing of unknown cost
    assert "no task ran in both arms" in build_report(only, FAST).verdict_reasons[0]
    # an arm whose runs were infra errors or of unknown cost: some reached the agent
    unpriced = [r if r.arm == "baseline" else r.model_copy(update={"cost_usd": None})
                if r.repetition else r.model_copy(update={"outcome": "infra_error"})
                for r in recs]
    assert build_report(unpriced, FAST).verdict_reasons[-1] == (
        "no run of known cost in the tool arm")
