"""A results file names the statistical design its run was planned under (`RunRecord.design`),
so one that travels without its scenario keeps its alpha spending: `analyze` of an adaptive
run's records without that scenario (or with another) is `invalid`, saying what to pass, and
never a verdict at alpha 0.05; with the matching scenario the report is the run's own."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml
from engine_helpers import config, fake, make_corpus, scenario

from copeca_action.cli import main
from copeca_action.conclude import conclude
from copeca_action.engine import run_plan
from copeca_action.errors import VerificationError
from copeca_action.plan import build_plan
from copeca_action.records import Design, read_records, write_records
from copeca_action.records._design import DEFAULT_THRESHOLDS
from copeca_action.report import Report

ADAPTIVE = {"min_repetitions": 2, "max_repetitions": 5, "step": 1}


@pytest.fixture(scope="module")
def adaptive_run(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """An adaptive run with thresholds of its own (the tool costs a fifth: decided early, at
    a look's alpha well below 0.05), concluded into its report and an unsigned bundle."""
    tmp = tmp_path_factory.mktemp("adaptive")
    tasks = {f"t{i}": {"prompt": fake(answer="42", cost=0.05)} for i in range(6)}
    corpus = make_corpus(tmp, tasks, modes={"tool": {"env": {"FAKE_COST_SCALE": "0.2"}}})
    sc = scenario(modes=["baseline", "tool"], repetitions=5, adaptive=ADAPTIVE,
                  thresholds={"fail": 0.2, "alert": 0.1}, resamples=400)
    cfg = config(tmp, corpus, sc)
    plan = build_plan(cfg.scenario, cfg.corpus.tasks)
    run_plan(cfg, plan, scenario_text="")  # OUT/scenario.yaml: the scenario as loaded
    effective = cfg.out.existing_plan()
    assert effective is not None
    scenario_path = tmp / "scenario.yaml"
    scenario_path.write_text(yaml.safe_dump(sc.model_dump(mode="json")))
    done = conclude(cfg.out.root, scenario_path, sc, effective, runners=cfg.corpus.runners,
                    tasks=cfg.corpus.tasks, bundle_path=tmp / "run.copeca")
    assert done.report.look is not None and done.report.alpha < 0.05  # alpha was spent
    return {"out": cfg.out.root, "report": done.report, "bundle": tmp / "run.copeca",
            "scenario": sc, "plan": effective, "corpus": cfg.corpus, "tmp": tmp}


def _json(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, Report, str]:
    code = main(["analyze", *argv, "--format", "json"])
    captured = capsys.readouterr()
    return code, Report.model_validate_json(captured.out), captured.err


def test_every_record_names_the_design_its_run_was_planned_under(
        adaptive_run: dict[str, Any]) -> None:
    records = read_records(adaptive_run["out"] / "results.jsonl")
    designs = {r.design for r in records}
    assert len(designs) == 1
    design = designs.pop()
    assert design is not None and design.adaptive is not None
    assert design.thresholds != DEFAULT_THRESHOLDS  # fail 0.2, alert 0.1: its own


def test_the_output_folder_and_the_matching_scenario_give_the_runs_own_report(
        adaptive_run: dict[str, Any], tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    out = adaptive_run["out"]
    code, own, _ = _json(capsys, str(out))
    assert code == 0 and own.verdict == adaptive_run["report"].verdict == "improvement"
    assert own.alpha == adaptive_run["report"].alpha < 0.05
    assert (out / "report.json").read_text() == main_text(capsys, str(out))
    copied = shutil.copy(out / "results.jsonl", tmp_path / "results.jsonl")
    assert main_text(capsys, str(copied), "--scenario", str(out / "scenario.yaml")) == \
        (out / "report.json").read_text()


def main_text(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    assert main(["analyze", *argv, "--format", "json"]) == 0
    return capsys.readouterr().out


def test_a_copy_without_its_scenario_is_invalid_never_judged_at_alpha_05(
        adaptive_run: dict[str, Any], tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    """Before, the copy was judged at one look with alpha 0.05 and the default thresholds
    (a note on stderr only): a published verdict that dropped the alpha the looks spent."""
    copied = shutil.copy(adaptive_run["out"] / "results.jsonl", tmp_path / "results.jsonl")
    code, report, err = _json(capsys, str(copied))
    assert code == 0 and report.verdict == "invalid"
    why = report.verdict_reasons[0]
    assert "adaptive sampling and its own thresholds" in why and "--scenario" in why
    assert all(c.verdict == "invalid" and c.reasons[0] == why for c in report.comparisons)
    assert "no scenario.yaml beside it" not in err  # the report says it, not a note
    assert main(["analyze", str(copied)]) == 0
    md = capsys.readouterr().out
    assert "invalid" in md and "--scenario FILE" in md
    # the gate cannot pass what it cannot judge, whatever --fail-on says
    assert main(["analyze", str(copied), "--gate", "--fail-on", "regression"]) == 1
    assert "cannot be judged without the design" in capsys.readouterr().err


def test_an_edited_scenario_beside_the_results_is_invalid(
        adaptive_run: dict[str, Any], tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "out"
    folder.mkdir()
    shutil.copy(adaptive_run["out"] / "results.jsonl", folder / "results.jsonl")
    data = yaml.safe_load((adaptive_run["out"] / "scenario.yaml").read_text())
    data["thresholds"]["fail"] = 0.3
    (folder / "scenario.yaml").write_text(yaml.safe_dump(data))
    code, report, _ = _json(capsys, str(folder))
    assert code == 0 and report.verdict == "invalid"
    why = report.verdict_reasons[0]
    assert why.startswith("the scenario.yaml beside the results is not the design")
    assert "its thresholds differ" in why and "adaptive sampling differ" not in why
    del data["adaptive"]  # and one without the adaptive schedule, given by --scenario
    other = tmp_path / "other.yaml"
    other.write_text(yaml.safe_dump(data))
    code, report, _ = _json(capsys, str(folder / "results.jsonl"), "--scenario", str(other))
    assert report.verdict == "invalid" and f"--scenario {other}" in report.verdict_reasons[0]
    assert "its thresholds and adaptive sampling differ" in report.verdict_reasons[0]


def test_ordinary_records_without_a_scenario_give_the_same_report_as_before(
        adaptive_run: dict[str, Any], tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    """Records of a run with the built-in thresholds and no adaptive sampling need no
    scenario: their report, md and json, is byte for byte the one records that name no
    design (an older copeca-action's) give, without the stderr note those get."""
    records = read_records(adaptive_run["out"] / "results.jsonl")
    ordinary = tmp_path / "ordinary.jsonl"
    write_records(ordinary, [r.model_copy(update={"design": Design(
        thresholds=DEFAULT_THRESHOLDS)}) for r in records])
    older = tmp_path / "older.jsonl"
    write_records(older, [r.model_copy(update={"design": None}) for r in records])
    for fmt in ("md", "json"):
        assert main(["analyze", str(ordinary), "--format", fmt]) == 0
        mine = capsys.readouterr()
        assert main(["analyze", str(older), "--format", fmt]) == 0
        before = capsys.readouterr()
        assert mine.out == before.out.replace("older.jsonl", "ordinary.jsonl")
        assert "no scenario.yaml beside it" in before.err
        # the default design: judged as before, the bootstrap's seed named (not a design)
        assert "the records name the default design" in mine.err and "seed 0" in mine.err
    assert json.loads(mine.out)["verdict"] == "improvement"


def test_the_bundle_verifies_its_records_name_its_scenario_and_design(
        adaptive_run: dict[str, Any], capsys: pytest.CaptureFixture[str]) -> None:
    bundle = adaptive_run["bundle"]
    assert main(["verify", str(bundle)]) == 0
    assert "design: every record names the bundle's scenario t and its design" in \
        capsys.readouterr().out
    assert main(["verify", str(bundle), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["design_checked"].startswith("every record")


def test_a_bundle_whose_scenario_has_another_adaptive_schedule_is_never_written(
        adaptive_run: dict[str, Any], tmp_path: Path) -> None:
    """The records were stopped by one schedule; a bundle carrying another scenario.yaml
    would publish its verdict at an alpha they did not spend: its verification fails
    (`report`, exit 15), so `conclude` leaves no bundle."""
    sc = adaptive_run["scenario"]
    other = tmp_path / "scenario.yaml"
    other.write_text(yaml.safe_dump({**sc.model_dump(mode="json"),
                                     "adaptive": {**ADAPTIVE, "max_repetitions": 8}}))
    out = tmp_path / "out"
    shutil.copytree(adaptive_run["out"], out)
    with pytest.raises(VerificationError, match="adaptive schedule is not the one the runs "
                       "were stopped with") as info:
        conclude(out, other, sc, adaptive_run["plan"], runners=adaptive_run["corpus"].runners,
                 bundle_path=tmp_path / "b.copeca")
    assert info.value.kind == "report" and info.value.exit_code == 15
    assert not (tmp_path / "b.copeca").exists()


def test_reused_runs_name_the_design_of_the_run_that_reuses_them(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`--reuse` copies finished runs whose fingerprint matches (a threshold is no part of
    it): they join a run judged with its own thresholds, and name that design, so `analyze`
    of its folder is its report (with the first run's design they would make it invalid)."""
    from reuse_world import make_world

    world = make_world(tmp_path)
    assert world.run("first") == 0
    world.edit_yaml(world.scenario, thresholds={"fail": 0.3, "alert": 0.1})
    assert world.run("second", "--reuse", str(world.bundle("first"))) == 0
    capsys.readouterr()
    records = world.records("second")
    assert records and all(r.reused_from for r in records)
    first = {r.design for r in world.records("first")}
    second = {r.design for r in records}
    assert len(second) == 1 and second != first
    out = tmp_path / "second"
    mine = json.loads(main_text(capsys, str(out)))  # (analyze adds no reuse note: compare
    own = world.report("second")  # the verdict, its reasons and the comparisons)
    assert (mine["verdict"], mine["verdict_reasons"], mine["comparisons"]) == (
        own["verdict"], own["verdict_reasons"], own["comparisons"])


def test_an_output_folder_keeps_the_thresholds_its_run_used(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The action's threshold inputs lay over the scenario's; the output folder kept the file
    as written, so `analyze` of it judged with other thresholds than the run's (now: invalid,
    as its records name the thresholds as run). It keeps the thresholds as run instead."""
    from reuse_world import make_world

    from copeca_action.pipeline import execute, prepare_scenario

    world = make_world(tmp_path)
    out = tmp_path / "out"
    overrides = {"thresholds": {"min_runs": 1, "alert": 0.02, "fail": 3.0}}
    prep = prepare_scenario(world.scenario, out=out, cache=tmp_path / "cache",
                            tool_dir=world.tool, overrides=overrides)
    execute(prep, resume=False, plain=True)
    capsys.readouterr()
    code, report, _ = _json(capsys, str(out))
    assert code == 0 and (report.thresholds.fail, report.thresholds.alert) == (3.0, 0.02)
    assert not any("not the design" in r for r in report.verdict_reasons)
    assert "fail: 300%" in (out / "scenario.yaml").read_text()
