"""Which scripts a dry run plays: the benchmark's own, never the bundled demo's for a user's
benchmark; none is a clear error before anything runs."""

from __future__ import annotations

from pathlib import Path

import pytest

from copeca_action.errors import ConfigError
from copeca_action.github._scaffold import scaffold
from copeca_action.pipeline import prepare_scenario


def test_a_dry_run_plays_the_benchmarks_own_scripts(tmp_path: Path) -> None:
    scaffold(tmp_path, "mcp", name="my-tool")
    scenario = tmp_path / "benchmark" / "scenarios" / "pr.yaml"
    prep = prepare_scenario(scenario, out=tmp_path / "out", tool_dir=tmp_path, dry_run=True,
                            cache=tmp_path / "cache")
    assert prep.dry_run and prep.cfg.scenario.model_endpoint == "scripted"
    assert Path(prep.cfg.scenario.scripts or "") == (tmp_path / "benchmark" / "scripts").resolve()
    real = prepare_scenario(scenario, out=tmp_path / "out", tool_dir=tmp_path,
                            cache=tmp_path / "cache")
    assert not real.dry_run and real.cfg.scenario.model_endpoint == "vendor"


def test_a_benchmark_without_scripts_is_told_how_to_write_them(tmp_path: Path) -> None:
    scaffold(tmp_path, "mcp", name="my-tool")
    for path in (tmp_path / "benchmark" / "scripts").iterdir():
        path.unlink()
    scenario = tmp_path / "benchmark" / "scenarios" / "pr.yaml"
    with pytest.raises(ConfigError) as err:
        prepare_scenario(scenario, out=tmp_path / "out", tool_dir=tmp_path, dry_run=True,
                         cache=tmp_path / "cache")
    text = str(err.value)
    assert str(scenario) in text and "docs/dry-run.md" in text and "scripts/" in text


def test_scripts_leading_out_of_the_benchmark_stop_plan_and_run(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """They were played as the benchmark's scripts; refused before anything runs, naming
    the file, line and field, for a scripted scenario and for a dry run alike."""
    from copeca_action.cli import main

    scaffold(tmp_path, "mcp", name="my-tool")
    (tmp_path / "elsewhere").mkdir()
    scenario = tmp_path / "benchmark" / "scenarios" / "pr.yaml"
    scenario.write_text(scenario.read_text() + f"scripts: {tmp_path / 'elsewhere'}\n")
    line = len(scenario.read_text().splitlines())
    with pytest.raises(ConfigError, match=r"scripts: .* leads out of the corpus"):
        prepare_scenario(scenario, out=tmp_path / "out", tool_dir=tmp_path, dry_run=True,
                         cache=tmp_path / "cache")
    scenario.write_text(scenario.read_text() + "model_endpoint: scripted\n")
    assert main(["plan", str(scenario)]) == 2
    err = capsys.readouterr().err
    assert f"{scenario}:{line}: scripts: {tmp_path / 'elsewhere'} leads out of the corpus" in err
    assert "Traceback" not in err


def test_a_task_no_script_can_answer_stops_the_dry_run_before_any_run(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A new task (docs/task-authoring.md) added to the scenario without a script: each of its
    runs reached the scripted model, got HTTP 400 "no script matches" and was recorded as the
    agent's error and a wrong answer (6 of 72 runs after init). Now refused naming the task
    file, before any run is recorded; the scaffold's own tasks all have scripts."""
    from copeca_action.cli import main

    scaffold(tmp_path, "mcp", name="my-tool")
    bench = tmp_path / "benchmark"
    task = bench / "tasks" / "fastapi" / "locate-mine.yaml"
    task.write_text("id: fastapi/locate-mine\nrepo: fastapi\ntype: comprehension\n"
                    "category: locate\nlanguage: python\n"
                    "prompt: Which function turns a Pydantic model into JSON-compatible data, "
                    "and in which file is it defined?\nsource: {origin: original}\n"
                    "grading: {answer: {required: [jsonable_encoder, fastapi/encoders.py]}}\n")
    scenario = bench / "scenarios" / "pr.yaml"
    text = scenario.read_text()
    head, rest = text.split("tasks:\n", 1)
    rest = rest[rest.index("modes:"):].replace("repetitions: 3", "repetitions: 1")
    scenario.write_text(head + "tasks:\n  include: [fastapi/locate-unique-id, "
                        "fastapi/locate-mine]\n" + rest)
    out = tmp_path / "out"
    assert main(["run", str(scenario), "--dry-run", "--tool-dir", str(tmp_path),
                 "--out", str(out), "--cache", str(tmp_path / "cache")]) == 2
    err = capsys.readouterr().err
    assert f"{task}: prompt: no script in {bench / 'scripts'}" in err, err
    assert "'fastapi/locate-mine'" in err and "nothing was run" in err
    assert "locate-unique-id" not in err and "Traceback" not in err
    assert not (out / "results.jsonl").exists() and not (out / "runs").exists()
