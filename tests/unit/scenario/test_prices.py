"""Refuse before spending: a model no price table prices, on a runner that reports no cost of
its own, is refused by `validate`, `plan` and the run pipeline, before any run."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from copeca_action.errors import ConfigError
from copeca_action.pipeline import prepare_scenario
from copeca_action.scenario import validate_paths

ROOT = Path(__file__).resolve().parents[3]


def _corpus(tmp: Path, models: dict[str, str]) -> Path:
    """A copy of the bundled corpus (repos, modes, one task) and runners, with a scenario
    running `models` (model → runner)."""
    corpus = tmp / "corpus"
    (corpus / "tasks" / "fastapi").mkdir(parents=True)
    shutil.copy(ROOT / "corpus" / "repos.yaml", corpus / "repos.yaml")
    shutil.copytree(ROOT / "corpus" / "modes", corpus / "modes")
    shutil.copy(ROOT / "corpus" / "tasks" / "fastapi" / "locate-unique-id.yaml",
                corpus / "tasks" / "fastapi" / "locate-unique-id.yaml")
    (tmp / "runners").mkdir()
    for name in ("claude", "codex"):
        shutil.copy(ROOT / "runners" / f"{name}.yaml", tmp / "runners" / f"{name}.yaml")
    scenario = corpus / "scenarios" / "s.yaml"
    scenario.parent.mkdir()
    scenario.write_text(yaml.safe_dump({
        "name": "s", "tasks": {"include": ["fastapi/*"]}, "modes": ["baseline"],
        "models": list(models), "model_runner_map": models, "repetitions": 1}))
    return scenario


def test_validate_refuses_an_unpriced_model_on_a_runner_without_its_own_cost(
        tmp_path: Path) -> None:
    scenario = _corpus(tmp_path, {"gpt-5-pro": "codex", "claude-sonnet-4-5": "claude"})
    result = validate_paths([scenario])
    assert not result.ok
    [error] = result.errors
    assert error.field == "model_runner_map.gpt-5-pro" and error.line is not None
    assert "'gpt-5-pro' has no price in" in error.message and "codex.yaml" in error.message
    assert "cache_write_5m" in error.message  # says how to add the price


def test_a_cli_with_its_own_cost_only_warns(tmp_path: Path) -> None:
    scenario = _corpus(tmp_path, {"claude-opus-4-1": "claude"})
    result = validate_paths([scenario])
    assert result.ok
    assert any("claude-opus-4-1" in w.message and "own figure" in w.message
               for w in result.warnings)


def test_plan_and_run_refuse_before_any_run(tmp_path: Path) -> None:
    scenario = _corpus(tmp_path, {"gpt-7": "codex"})
    with pytest.raises(ConfigError) as caught:
        prepare_scenario(scenario, out=tmp_path / "out")
    assert "'gpt-7' has no price" in str(caught.value)
    assert not (tmp_path / "out").exists()  # nothing was prepared, nothing ran
    plan = subprocess.run([sys.executable, "-m", "copeca_action.cli", "plan", str(scenario)],
                          capture_output=True, text=True, check=False)
    assert plan.returncode != 0 and "'gpt-7' has no price" in plan.stderr
    assert "Traceback" not in plan.stderr


def test_priced_models_pass(tmp_path: Path) -> None:
    scenario = _corpus(tmp_path, {"gpt-6.1-sol": "codex", "claude-sonnet-4-5": "claude"})
    assert validate_paths([scenario]).ok
    prepared = prepare_scenario(scenario, out=tmp_path / "out")
    assert {r.model for r in prepared.plan.runs} == {"gpt-6.1-sol", "claude-sonnet-4-5"}
