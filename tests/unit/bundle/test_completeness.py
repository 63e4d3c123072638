"""Completeness comes from what the records say they ran, not from their names."""

from __future__ import annotations

from pathlib import Path

import pytest
from bundle_support import Build, contents_for, record_for, run_files
from hypothesis import given, settings
from hypothesis import strategies as st

from copeca_action.bundle import check_completeness, verify_bundle
from copeca_action.errors import VerificationError
from copeca_action.plan import RunPlan, Shard, build_plan, shard_plan
from copeca_action.scenario import Scenario, Task


def incomplete(path: Path, demo=None) -> str:  # type: ignore[no-untyped-def]
    with pytest.raises(VerificationError) as info:
        if demo:
            verify_bundle(path, None, demo[0], demo[1])
        else:
            verify_bundle(path)
    assert info.value.kind == "incomplete" and info.value.exit_code == 14
    return str(info.value)


def test_a_missing_run_is_named(build: Build, plan: RunPlan, demo) -> None:  # type: ignore[no-untyped-def]
    records = [record_for(plan, i) for i in range(len(plan.runs)) if i != 4]
    path = build(contents=contents_for(plan, demo[2], records=records))
    message = incomplete(path)
    run = plan.runs[4]
    assert "1 missing run(s)" in message and run.run_id in message and run.task_id in message


def test_a_re_signed_renamed_duplicate_is_named(build: Build, plan: RunPlan, demo) -> None:  # type: ignore[no-untyped-def]
    """A producer with the key fills a failed run with a copy of a good one."""
    records = [record_for(plan, i) for i in range(len(plan.runs))]
    good, failed = plan.runs[0], plan.runs[1]
    records[1] = records[0].model_copy(update={"run_id": failed.run_id})
    files = {r.run_id: run_files(r) for r in records}
    message = incomplete(build(contents=contents_for(plan, demo[2], records=records,
                                                     files=files)))
    assert f"runs/{failed.run_id}: its record is run {good.run_id}" in message
    assert "renamed duplicate" in message
    assert f"missing run(s):\n  {failed.run_id}" in message
    assert f"duplicated run(s):\n  {good.run_id}" in message


def test_a_duplicated_record_is_named_but_an_infra_retry_is_not(
        build: Build, plan: RunPlan, demo) -> None:  # type: ignore[no-untyped-def]
    records = [record_for(plan, i) for i in range(len(plan.runs))]
    retried = [record_for(plan, 2, outcome="infra_error", error="podman died"), *records]
    assert verify_bundle(build("retry.copeca", contents=contents_for(
        plan, demo[2], records=retried))).completeness.ok
    doubled = [*records, record_for(plan, 2, correct=True)]
    message = incomplete(build("dup.copeca", contents=contents_for(plan, demo[2],
                                                                   records=doubled)))
    assert f"duplicated run(s):\n  {plan.runs[2].run_id}" in message


def test_a_budget_stop_a_resume_ran_is_not_a_duplicate(
        build: Build, plan: RunPlan, demo) -> None:  # type: ignore[no-untyped-def]
    """Stopped by the budget, then run by `run --resume` with a larger one: the report reads
    the later record; so does the verifier, which refused the bundle the resume wrote."""
    records = [record_for(plan, i) for i in range(len(plan.runs))]
    stopped = record_for(plan, 3, outcome="budget_stop", cost_usd=0.0, correct=False,
                         error="the scenario budget would be passed by starting this run")
    assert verify_bundle(build("resumed.copeca", contents=contents_for(
        plan, demo[2], records=[stopped, *records]))).completeness.ok


def test_a_run_outside_the_plan_is_unexpected(build: Build, plan: RunPlan, demo) -> None:  # type: ignore[no-untyped-def]
    scenario, tasks, _ = demo
    bigger = build_plan(scenario, tasks, repetitions=3)
    extra = next(r for r in bigger.runs if r.repetition == 2)
    records = [record_for(plan, i) for i in range(len(plan.runs))]
    records.append(record_for(bigger, bigger.runs.index(extra)))
    message = incomplete(build(contents=contents_for(plan, demo[2], records=records)))
    assert f"unexpected run(s):\n  {extra.run_id}" in message and "not in the plan" in message


def test_against_the_scenario_a_changed_task_shows_as_missing_and_unexpected(
        build: Build, demo: tuple[Scenario, dict[str, Task], Path]) -> None:
    scenario, tasks, _ = demo
    task_id = "fastapi/locate-unique-id"
    changed = dict(tasks)
    changed[task_id] = tasks[task_id].model_copy(update={"prompt": "Something else."})
    old_plan = build_plan(scenario, changed)
    path = build(the_plan=old_plan)
    assert verify_bundle(path).completeness.ok  # complete against its own plan
    message = incomplete(path, demo)
    assert "task changed since the run" in message and task_id in message
    assert verify_bundle(build("fresh.copeca"), None, scenario, tasks).scenario_checked


def test_a_shard_bundle_is_checked_against_its_slice_of_the_scenario(
        build: Build, plan: RunPlan, demo) -> None:  # type: ignore[no-untyped-def]
    scenario, tasks, _ = demo
    shard = shard_plan(plan, Shard(index=2, count=3))
    result = verify_bundle(build(the_plan=shard), None, scenario, tasks)
    assert result.statement.predicate.shard == "2/3"
    assert len(result.records) == len(shard.runs) < len(plan.runs)


def test_against_a_scenario_with_other_settings_the_message_names_them(
        build: Build, demo) -> None:  # type: ignore[no-untyped-def]
    """The same runs, from a scenario with another fail threshold: the message said "the
    run ids match but the plan digest differs", while the plan digest was the same; it
    names the setting instead, and says the digest differs only when it does."""
    scenario, tasks, _ = demo
    other = scenario.model_copy(update={"thresholds": scenario.thresholds.model_copy(
        update={"fail": 0.3})})
    message = incomplete(build(), (other, tasks))
    assert "the scenario is not the one the bundle was planned from" in message
    assert "threshold fail 0.3 (the bundle ran with 0.1)" in message
    assert "plan digest" not in message


@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_every_dropped_doubled_or_relabelled_run_is_named(plan: RunPlan, data: st.DataObject
                                                          ) -> None:
    n = len(plan.runs)
    indices = st.sets(st.integers(0, n - 1), max_size=4)
    dropped, doubled, relabelled = data.draw(indices), data.draw(indices), data.draw(indices)
    records = {i: record_for(plan, i) for i in range(n) if i not in dropped}
    log = list(records.values()) + [records[i] for i in doubled if i in records]
    dirs = {r.run_id: r for r in records.values()}
    for i in relabelled:  # the record of run i copied over the next run's directory
        j = (i + 1) % n
        if i in records and j in records:
            dirs[plan.runs[j].run_id] = records[i]
    report = check_completeness(plan.runs, log, dirs)
    named = report.message()
    for i in dropped:
        assert plan.runs[i].run_id in "\n".join(report.missing)
    for i in doubled:
        if i in records:
            assert plan.runs[i].run_id in "\n".join(report.duplicated)
    for i in relabelled:
        j = (i + 1) % n
        if i in records and j in records:
            assert f"runs/{plan.runs[j].run_id}: its record is run {plan.runs[i].run_id}" \
                in named
    assert report.ok == (not dropped and not [i for i in doubled if i in records] and not [
        i for i in relabelled if i in records and (i + 1) % n in records])


def test_a_signed_plan_that_left_out_or_repeated_a_run_is_named(
        build: Build, plan: RunPlan, demo) -> None:  # type: ignore[no-untyped-def]
    """A producer with the key (or a writer's bug) drops a run from the plan and its records,
    or lists one twice: the plan digest it signs still names every run of the plan. verify
    said "runs: 95/95" and "97/97" and passed."""
    short = plan.model_copy(update={"runs": plan.runs[:-1]})
    message = incomplete(build("short.copeca", the_plan=short))
    assert "plan.json holds 95 runs" in message and plan.plan_digest[:12] in message
    twice = plan.model_copy(update={"runs": [*plan.runs, plan.runs[0]]})
    records = [record_for(plan, i) for i in range(len(plan.runs))]
    message = incomplete(build("twice.copeca", contents=contents_for(twice, demo[2],
                                                                      records=records)))
    assert "lists 1 run(s) twice" in message and plan.runs[0].run_id in message
    shard = shard_plan(plan, Shard(index=2, count=2))  # a shard's digest is the whole plan's
    assert verify_bundle(build("shard.copeca", the_plan=shard)).plan.shard == shard.shard
