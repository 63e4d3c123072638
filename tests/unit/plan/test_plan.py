from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from copeca_action.errors import ConfigError
from copeca_action.plan import build_plan, parse_shard, shard_plan
from copeca_action.scenario import load_corpus, load_scenario, select_task_ids


@pytest.fixture(scope="module")
def demo(corpus_root: Path):  # type: ignore[no-untyped-def]
    corpus = load_corpus(corpus_root).require_ok()
    scenario = load_scenario(corpus_root / "scenarios" / "demo.yaml")
    return scenario, corpus


def test_plan_is_the_full_matrix_with_unique_stable_ids(demo) -> None:  # type: ignore[no-untyped-def]
    scenario, corpus = demo
    plan = build_plan(scenario, corpus.tasks)
    n_tasks = len(select_task_ids(scenario, list(corpus.tasks)))
    assert n_tasks == len(scenario.tasks.include)  # the demo lists its tasks by id
    assert len(plan.runs) == (n_tasks * len(scenario.modes) * len(scenario.models)
                              * scenario.repetitions)
    assert len(set(plan.run_ids())) == len(plan.runs)
    again = build_plan(scenario, corpus.tasks)
    assert again.run_ids() == plan.run_ids() and again.plan_digest == plan.plan_digest


def test_changing_a_task_changes_only_its_run_ids(demo) -> None:  # type: ignore[no-untyped-def]
    scenario, corpus = demo
    before = build_plan(scenario, corpus.tasks)
    tid = "fastapi/locate-unique-id"
    tasks = dict(corpus.tasks)
    tasks[tid] = tasks[tid].model_copy(update={"prompt": tasks[tid].prompt + " Be brief."})
    after = build_plan(scenario, tasks)
    changed = {a.task_id for a, b in zip(before.runs, after.runs, strict=True)
               if a.run_id != b.run_id}
    assert changed == {tid}


def test_base_ref_compare_adds_base_arms(demo) -> None:  # type: ignore[no-untyped-def]
    scenario, corpus = demo
    assert build_plan(scenario, corpus.tasks, compare="base-ref").arms == [
        "codesearch", "codesearch@base"]
    assert build_plan(scenario, corpus.tasks, compare="both").arms == [
        "baseline", "codesearch", "codesearch@base"]


@pytest.mark.parametrize("text", ["0/3", "4/3", "1/0", "a/b", "3", "-1/2", "", "1/10001",
                                  "1/999999999999", "\uff11/3", "1/" + "9" * 5000])
def test_bad_shards_are_refused_with_the_flag_named(text: str) -> None:
    # a fullwidth digit was read as 1; 5,000 digits raised int()'s ValueError (a traceback)
    with pytest.raises(ConfigError, match="--shard"):
        parse_shard(text)


@pytest.mark.parametrize("text", ["1/49", "49/100", "1/10000"])
def test_more_shards_than_groups_of_runs_are_refused_by_plan(
        text: str, corpus_root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The demo has 48 groups (12 tasks x 2 models x 2 repetitions, both arms together):
    shard 49 of 100 was a plan of no runs, and 1/999999999999 was accepted."""
    from copeca_action.cli import main

    assert main(["plan", str(corpus_root / "scenarios" / "demo.yaml"), "--shard", text]) == 2
    err = capsys.readouterr().err
    assert f"--shard {text!r}: " in err and "use at most 48 shards" in err, err
    assert "Traceback" not in err
    assert main(["plan", str(corpus_root / "scenarios" / "demo.yaml"), "--shard", "48/48",
                 "--json"]) == 0
    assert '"count": 48' in capsys.readouterr().out


@settings(max_examples=60, deadline=None)
@given(n=st.integers(min_value=1, max_value=9), reps=st.integers(min_value=1, max_value=4))
def test_shards_are_disjoint_and_cover_the_plan(n: int, reps: int, demo) -> None:  # type: ignore[no-untyped-def]
    scenario, corpus = demo
    plan = build_plan(scenario, corpus.tasks, repetitions=reps)
    slices = [shard_plan(plan, parse_shard(f"{i}/{n}")) for i in range(1, n + 1)]
    ids = [rid for s in slices for rid in s.run_ids()]
    assert len(ids) == len(set(ids))
    assert set(ids) == set(plan.run_ids())
    assert all(s.plan_digest == plan.plan_digest for s in slices)
    for s in slices:  # paired arms of one task-repetition stay together
        cells = {(r.task_id, r.repetition, r.model) for r in s.runs}
        assert len(s.runs) == len(cells) * len(plan.arms)


def test_a_plan_that_cannot_reach_min_runs_is_named_before_spending(
        demo, corpus_root: Path, tmp_path: Path,  # type: ignore[no-untyped-def]
        capsys: pytest.CaptureFixture[str]) -> None:
    from copeca_action.cli import main
    from copeca_action.plan import unreachable_min_runs

    scenario, corpus = demo
    plan = build_plan(scenario, corpus.tasks)
    assert unreachable_min_runs(scenario, plan) is None
    one = scenario.model_copy(update={"tasks": scenario.tasks.model_copy(
        update={"include": ["fastapi/locate-unique-id"]}), "models": ["claude-sonnet-4-5"]})
    small = build_plan(one, corpus.tasks)
    why = unreachable_min_runs(one, small)
    assert why is not None and "at most 2 run(s)" in why and "min_runs 6" in why
    adaptive = type(one).model_validate({**one.model_dump(), "adaptive": {"max_repetitions": 6}})
    assert unreachable_min_runs(adaptive, build_plan(adaptive, corpus.tasks)) is None
    path = corpus_root / "scenarios" / "demo.yaml"
    text = path.read_text().replace("  control_tolerance: 0.15",
                                    "  control_tolerance: 0.15\n  min_runs: 1000").replace(
        "scripts: ../scripts", f"scripts: {corpus_root / 'scripts'}")
    copy = tmp_path / "many.yaml"
    copy.write_text(text)
    assert main(["plan", str(copy), "--corpus", str(corpus_root)]) == 0
    err = capsys.readouterr().err
    assert "thresholds.min_runs" in err and "below min_runs 1000" in err


def test_a_plan_of_more_than_a_million_runs_is_refused_before_it_is_built(demo) -> None:  # type: ignore[no-untyped-def]
    scenario, corpus = demo
    models = [f"claude-m{i}" for i in range(100)]
    huge = type(scenario).model_validate({
        **scenario.model_dump(), "models": models, "repetitions": 1000,
        "model_runner_map": dict.fromkeys(models, "claude")})
    with pytest.raises(ConfigError, match=r"is 2,400,000 runs; a plan holds at most 1,000,000"):
        build_plan(huge, corpus.tasks)


def test_base_ref_without_a_tool_mode_is_refused_not_an_empty_plan(demo) -> None:  # type: ignore[no-untyped-def]
    scenario, corpus = demo
    only = type(scenario).model_validate({**scenario.model_dump(), "modes": ["baseline"]})
    assert build_plan(only, corpus.tasks).arms == ["baseline"]
    with pytest.raises(ConfigError, match="nothing to compare"):
        build_plan(only, corpus.tasks, compare="base-ref")
