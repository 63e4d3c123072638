"""The smoke-runners scenario: every shipped runner, both arms, the same tasks."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from copeca_action.plan import build_plan
from copeca_action.scenario import load_corpus, load_runner, load_scenario


def test_every_runner_runs_every_task_in_both_arms(corpus_root: Path) -> None:
    corpus = load_corpus(corpus_root).require_ok()
    scenario = load_scenario(corpus_root / "scenarios" / "smoke-runners.yaml")
    plan = build_plan(scenario, corpus.tasks)
    shipped = {p.stem for p in (corpus_root.parent / "runners").glob("*.yaml")}
    assert {r.runner for r in plan.runs} == shipped
    cells = Counter((r.runner, r.mode, r.task_id) for r in plan.runs)
    assert set(cells.values()) == {1}
    assert len(cells) == len(shipped) * 2 * len(scenario.tasks.include)
    for model, name in scenario.model_runner_map.items():  # every model has a price
        runner = load_runner(corpus_root.parent / "runners" / f"{name}.yaml")
        assert model in runner.pricing
