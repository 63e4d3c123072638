"""`copeca-action analyze`: both record formats, both output formats, the gate."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from copeca_action.cli import main
from copeca_action.report import Report
from copeca_action.report._simulate import Population, make_rows


def write(path: Path, rows: list[dict[str, object]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_json_output_is_a_report_and_the_gate_fails_a_regression(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rows = make_rows(Population(cost_ratio=3.0), 25, 3, np.random.default_rng(0))
    results = write(tmp_path / "results.jsonl", rows)
    code = main(["analyze", str(results), "--format", "json", "--gate", "--resamples", "500"])
    report = Report.model_validate_json(capsys.readouterr().out)
    assert report.verdict == "regression" and code == 1
    assert main(["analyze", str(results), "--resamples", "500"]) == 0  # no gate, no failure


def test_markdown_of_a_copeca_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rows = []
    for i in range(6):
        for mode, cost in (("indexed", 0.02), ("baseline", 0.03)):
            for rep in range(2):
                rows.append({"task": f"task{i}", "mode": mode, "model": "m", "runner": "claude",
                             "repetition": rep, "correct": True, "total_cost_usd": cost,
                             "cost_source": "vendor", "category": "locate",
                             "language": "python", "tool_adopted": mode == "indexed" or None,
                             "error": None, "exit_code": 0})
    results = write(tmp_path / "scn.jsonl", rows)
    out = tmp_path / "report.md"
    assert main(["analyze", str(results), "--out", str(out), "--resamples", "300"]) == 0
    text = out.read_text()
    assert "indexed vs baseline" in text and "-33.3%" in text
    assert "copeca records carry no control flag" in text


def test_a_missing_file_is_a_config_error(tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["analyze", str(tmp_path / "nope.jsonl")]) == 2
    assert "nope.jsonl" in capsys.readouterr().err


def test_an_adaptive_scenario_judges_with_the_alpha_of_its_last_look(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    scenario = tmp_path / "s.yaml"
    scenario.write_text(
        "name: s\ntasks: {include: ['*']}\nmodes: [baseline, codesearch]\nmodels: [m]\n"
        "model_runner_map: {m: claude}\nseed: 11\nresamples: 400\n"
        "adaptive: {min_repetitions: 2, step: 2, max_repetitions: 6, alpha: 0.05}\n"
        "thresholds: {fail: 0.2, alert: 0.1}\n")
    rows = make_rows(Population(cost_ratio=1.0), 12, 2, np.random.default_rng(0))
    results = write(tmp_path / "results.jsonl", rows)
    assert main(["analyze", str(results), "--scenario", str(scenario), "--format", "json"]) == 0
    report = Report.model_validate_json(capsys.readouterr().out)
    assert report.alpha == pytest.approx(0.05 * (2 / 6) ** 2)
    assert (report.seed, report.resamples, report.thresholds.fail) == (11, 400, 0.2)
    assert report.comparisons[0].delta.level == pytest.approx(1 - report.alpha)


def test_results_without_their_scenario_say_they_are_judged_with_the_defaults(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The records do not say how the run was designed: an adaptive run's results.jsonl
    copied away from its folder was judged at the full alpha 0.05 without a word, dropping
    the alpha its looks spent. It is still judged so (nothing says otherwise), but stderr
    says with which settings and how to judge it as it was; with its scenario, no note."""
    rows = make_rows(Population(cost_ratio=1.0), 12, 2, np.random.default_rng(0))
    results = write(tmp_path / "copied.jsonl", rows)
    assert main(["analyze", str(results), "--format", "json", "--resamples", "300"]) == 0
    captured = capsys.readouterr()
    assert Report.model_validate_json(captured.out).alpha == 0.05
    assert "no scenario.yaml beside it and no --scenario" in captured.err
    assert "--scenario" in captured.err and "adaptive" in captured.err
    scenario = tmp_path / "s.yaml"
    scenario.write_text(
        "name: s\ntasks: {include: ['*']}\nmodes: [baseline, codesearch]\nmodels: [m]\n"
        "model_runner_map: {m: claude}\nresamples: 300\n"
        "adaptive: {min_repetitions: 2, step: 2, max_repetitions: 6, alpha: 0.05}\n")
    assert main(["analyze", str(results), "--scenario", str(scenario), "--format", "json"]) == 0
    captured = capsys.readouterr()
    assert Report.model_validate_json(captured.out).alpha < 0.05
    assert "no scenario" not in captured.err


def test_an_output_folder_is_analysed_with_its_own_scenario(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Without --scenario, the scenario.yaml the run wrote beside its results gives the seed,
    resamples and thresholds: the report is the run's own, not seed 0's."""
    from copeca_action._util.paths import corpus_dir

    rows = make_rows(Population(cost_ratio=0.8), 12, 2, np.random.default_rng(3))
    for r in rows:
        r["endpoint"] = "scripted"
    write(tmp_path / "results.jsonl", rows)
    text = (corpus_dir() / "scenarios" / "demo.yaml").read_text()
    (tmp_path / "scenario.yaml").write_text(text.replace("scripts: ../scripts", "scripts: .")
                                            + "resamples: 400\n")
    assert main(["analyze", str(tmp_path), "--format", "json"]) == 0
    own = Report.model_validate_json(capsys.readouterr().out)
    assert (own.seed, own.resamples) == (7, 400) and own.simulated
    assert main(["analyze", str(tmp_path / "results.jsonl"), "--scenario",
                 str(tmp_path / "scenario.yaml"), "--format", "json"]) == 0
    assert Report.model_validate_json(capsys.readouterr().out) == own


@pytest.mark.parametrize(("argv", "where", "said"), [
    (["--seed", "-1"], "--seed", "-1: expected a whole number ≥ 0"),
    (["--resamples", "99"], "--resamples", "99: expected 100 to 1,000,000"),
    (["--scenario", "{scenario}"], "s.yaml:6", "seed: Input should be greater than or equal to 0")])
def test_a_seed_or_resample_count_out_of_range_is_refused_by_name(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str], where: str,
        said: str) -> None:
    """numpy takes no negative seed: a clear error naming the flag or the scenario's line,
    never a traceback (and a scenario is refused by `validate`, before any run is paid)."""
    scenario = tmp_path / "s.yaml"
    scenario.write_text("name: s\ntasks: {include: ['*']}\nmodes: [baseline, codesearch]\n"
                        "models: [m]\nmodel_runner_map: {m: claude}\nseed: -3\n")
    rows = make_rows(Population(cost_ratio=1.0), 6, 2, np.random.default_rng(0))
    results = write(tmp_path / "results.jsonl", rows)
    args = [a.format(scenario=scenario) for a in argv]
    assert main(["analyze", str(results), *args]) == 2
    err = capsys.readouterr().err
    assert f"{where}: {said}" in err and "Traceback" not in err


def test_results_that_are_not_a_regular_file_are_refused_by_name(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A pipe (`<(…)`, /dev/stdin, a FIFO) could be read only once, and a file that falls
    back to the validating reader is read twice: refused, saying so; a missing file says
    it is missing."""
    import os

    fifo = tmp_path / "results.jsonl"
    os.mkfifo(fifo)
    assert main(["analyze", str(fifo)]) == 2
    err = capsys.readouterr().err
    assert str(fifo) in err and "not a regular file" in err
    assert main(["analyze", str(tmp_path / "missing.jsonl")]) == 2
    assert "no such results file" in capsys.readouterr().err


def test_an_output_folder_that_is_a_file_is_named_as_such(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """badge --out-dir at a file, or under one: the error says a folder was expected, not
    the bare "File exists" / "Not a directory" of the system call."""
    rows = make_rows(Population(cost_ratio=1.0), 6, 2, np.random.default_rng(1))
    results = write(tmp_path / "results.jsonl", rows)
    report = tmp_path / "report.json"
    assert main(["analyze", str(results), "--format", "json", "--resamples", "200",
                 "--out", str(report)]) == 0
    afile = tmp_path / "afile"
    afile.write_text("")
    assert main(["badge", str(report), "--out-dir", str(afile)]) == 2
    err = capsys.readouterr().err
    assert f"{afile}: exists and is not a folder" in err
    assert main(["badge", str(report), "--out-dir", str(afile / "sub")]) == 2
    err = capsys.readouterr().err
    assert f"{afile / 'sub'}: " in err and "a part of this path is a file" in err


@pytest.mark.parametrize("fmt", ["md", "json", "html"])
def test_the_report_is_scrubbed_of_the_environments_secrets(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
        fmt: str) -> None:
    """Results that were not written by this job (another job's shard, a hand-made file) may
    hold a secret this job holds; the report printed or written never shows it."""
    secret = "Zk7mQ2xVb9LpR4tW8nYc3Hd6"
    monkeypatch.setenv("ANTHROPIC_API_KEY", secret)
    rows = make_rows(Population(cost_ratio=1.0), 6, 2, np.random.default_rng(0))
    for row in rows:
        row["task_id"] = f"repo/task-{secret}-{str(row['task_id'])[-4:]}"
    results = write(tmp_path / "results.jsonl", rows)
    out = tmp_path / f"report.{fmt}"
    assert main(["analyze", str(results), "--format", fmt, "--resamples", "200",
                 "--out", str(out)]) == 0
    assert main(["analyze", str(results), "--format", fmt, "--resamples", "200"]) == 0
    for text in (out.read_text(), capsys.readouterr().out):
        assert secret not in text and "[REDACTED:env:ANTHROPIC_API_KEY]" in text


def test_the_gate_fails_on_one_tools_regression_beside_anothers_improvement(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rows: list[dict[str, object]] = []
    for tool, ratio in (("toolA", 0.4), ("toolB", 2.5)):  # same seed: one shared baseline
        drawn = make_rows(Population(cost_ratio=ratio), 30, 4, np.random.default_rng(0),
                          tool=tool)
        rows += [r for r in drawn if r["arm"] == tool or not rows]
    results = write(tmp_path / "results.jsonl", rows)
    code = main(["analyze", str(results), "--gate", "--resamples", "500"])
    out, err = capsys.readouterr()
    assert code == 1 and out.startswith("## copeca-action") and "### 🔴 regression" in out
    assert ("gate failed: verdict regression (fail-on regression): toolB vs baseline: "
            "regression") in err


def test_md_and_html_are_the_full_reports_though_the_power_is_not_simulated_for_them(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`analyze --format md|html` leaves out the minimum detectable effects (report.json's
    `power`, a simulation), because neither shows them: each is the rendering of the full
    report. Should a renderer start to show `power`, this fails."""
    from copeca_action.render import render_html, render_markdown
    from copeca_action.report import Settings, build_report, table_from_rows

    rows = make_rows(Population(cost_ratio=0.7), 20, 3, np.random.default_rng(1))
    results = write(tmp_path / "results.jsonl", rows)
    full = build_report(table_from_rows(rows), Settings(resamples=500))
    assert all(c.power is not None for c in full.comparisons)
    bare = full.model_copy(update={"comparisons": [
        c.model_copy(update={"power": None}) for c in full.comparisons]})
    assert render_markdown(bare) == render_markdown(full)
    assert render_html(bare) == render_html(full)
    assert main(["analyze", str(results), "--resamples", "500"]) == 0
    printed = capsys.readouterr().out
    assert printed.strip() == render_markdown(full).strip()
    assert main(["analyze", str(results), "--resamples", "500", "--format", "json"]) == 0
    assert Report.model_validate_json(capsys.readouterr().out).comparisons[0].power == \
        full.comparisons[0].power


def test_the_gate_fails_on_one_tools_regression_beside_anothers_unpriced_run(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """One run of toolA with no price made the whole report `invalid`, which the default
    gate (fail-on: regression) passes: toolB's measured regression went through."""
    rows: list[dict[str, object]] = []
    for tool, ratio in (("toolA", 1.0), ("toolB", 2.5)):  # same seed: one shared baseline
        drawn = make_rows(Population(cost_ratio=ratio), 30, 4, np.random.default_rng(0),
                          tool=tool)
        rows += [r for r in drawn if r["arm"] == tool or not rows]
    unpriced = next(r for r in rows if r["arm"] == "toolA")
    unpriced.update(cost_usd=None, cost_unknown_reason="no price for gpt-9")
    results = write(tmp_path / "results.jsonl", rows)
    code = main(["analyze", str(results), "--gate", "--resamples", "500"])
    out, err = capsys.readouterr()
    assert code == 1 and "### 🔴 regression" in out
    assert "| toolA vs baseline |" in out and "⚠️ invalid |" in out
    assert "so toolA vs baseline is invalid; the regression of toolB vs baseline" in out
    assert ("gate failed: verdict regression (fail-on regression): toolB vs baseline: "
            "regression") in err
