"""Honest verdicts (#16), each edge case through `copeca-action analyze` on a crafted
results.jsonl."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from copeca_action.cli import main
from copeca_action.report import Report
from copeca_action.report._simulate import Population, make_rows


def row(task: str, arm: str, rep: int = 0, correct: bool = True, cost: float = 1.0,
        **extra: Any) -> dict[str, Any]:
    out: dict[str, Any] = {
        "run_id": f"{task}-{arm}-{rep}", "scenario": "s", "task_id": task, "task_hash": "h",
        "arm": arm, "model": "m", "runner": "claude", "cli_version": "1.0.0",
        "repetition": rep, "control": False, "category": "locate", "language": "python",
        "outcome": "ok", "correct": correct, "cost_usd": cost, "cost_source": "vendor",
        "duration_s": 1.0, "turns": 1, "tool_calls": 1, "tool_adopted": None, "flags": []}
    out.update(extra)
    return out


def analyze(tmp_path: Path, rows: list[dict[str, Any]], capsys: pytest.CaptureFixture[str],
            *extra: str) -> Report:
    path = tmp_path / "results.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert main(["analyze", str(path), "--format", "json", "--resamples", "500",
                 *extra]) == 0
    return Report.model_validate_json(capsys.readouterr().out)


def grid(tasks: int, reps: int = 2, tool_cost: float = 1.0, **extra: Any
         ) -> list[dict[str, Any]]:
    rng = np.random.default_rng(tasks)
    return [row(f"t{i}", arm, r, correct=bool(rng.random() < 0.7),
                cost=float(rng.lognormal()) * (tool_cost if arm == "codesearch" else 1.0),
                **extra)
            for i in range(tasks) for r in range(reps) for arm in ("codesearch", "baseline")]


def test_overall_cells_are_the_population_and_estimand_of_the_delta(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rows = grid(12)
    rows += [row("only-tool", "codesearch", r, cost=7.75 * 50) for r in range(2)]
    rows += [row("t0", "baseline", 5, correct=False, cost=0.01)]  # unequal counts on t0
    report = analyze(tmp_path, rows, capsys)
    c = report.comparisons[0]
    assert c.overall is not None and c.delta.estimate is not None
    assert c.overall.cpc_tool / c.overall.cpc_base - 1 == pytest.approx(c.delta.estimate,
                                                                         rel=1e-12)
    assert c.overall.runs_tool == 24  # the tool-only task is not in the overall cells
    assert any("only one arm" in w for w in report.warnings)
    assert any("run counts differ" in w and "t0 (2/3)" in w for w in report.warnings)


def test_unequal_run_counts_do_not_bias_the_delta(tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    # the same runs in both arms, but the tool lost one run of the dear task: a ratio of
    # raw sums would say −22% ((20/6) / (30/7) − 1); per-task means say 0
    rows = []
    for i, cost in enumerate([10.0, 1.0, 1.0, 1.0, 1.0, 1.0]):
        for r in range(2):
            for arm in ("codesearch", "baseline"):
                if not (arm == "codesearch" and i == 0 and r == 1):
                    rows.append(row(f"t{i}", arm, r, correct=i == 0 or r == 0, cost=cost))
    report = analyze(tmp_path, rows, capsys)
    assert report.comparisons[0].delta.estimate == pytest.approx(0.0, abs=1e-12)


def test_no_paired_task_is_invalid_with_the_true_reason(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rows = [row(f"a{i}", "codesearch", r) for i in range(7) for r in range(1)]
    rows += [row(f"b{i}", "baseline", r) for i in range(7) for r in range(1)]
    report = analyze(tmp_path, rows, capsys)
    assert report.verdict == "invalid"
    assert "no task ran in both arms (7 only in the tool arm, 7 only in the base arm)" in (
        report.verdict_reasons[0])


def test_only_control_tasks_is_invalid(tmp_path: Path,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    report = analyze(tmp_path, grid(8, control=True), capsys)
    assert report.verdict == "invalid" and "only control tasks" in report.verdict_reasons[0]


@pytest.mark.parametrize(("field", "value", "label"), [("model", "other", "models"),
                                                        ("cli_version", "2.0.0",
                                                         "CLI versions")])
def test_arms_on_different_models_or_versions_are_invalid(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], field: str, value: str,
        label: str) -> None:
    rows = [{**r, field: value} if r["arm"] == "codesearch" else r
            for r in grid(20, tool_cost=3.0)]
    report = analyze(tmp_path, rows, capsys)
    assert report.verdict == "invalid" and f"{label} differ" in report.verdict_reasons[0]
    scenario = tmp_path / "s.yaml"
    scenario.write_text("name: s\ntasks: {include: ['*']}\nmodes: [baseline, codesearch]\n"
                        "models: [m]\nmodel_runner_map: {m: claude}\nresamples: 500\n"
                        f"thresholds: {{compare_across: [{field}]}}\n")
    declared = analyze(tmp_path, rows, capsys, "--scenario", str(scenario))
    assert declared.verdict == "regression"


def test_a_served_model_differing_between_arms_is_invalid() -> None:
    from copeca_action.report import Settings, build_report, table_from_rows

    rows = [{**r, "served_model": "m-2025" if r["arm"] == "codesearch" else "m-2024"}
            for r in grid(10)]
    report = build_report(table_from_rows(rows), Settings(resamples=300))
    assert report.verdict == "invalid" and "m-2024 vs m-2025" not in report.verdict_reasons[0]
    assert "models differ between the arms (m-2025 vs m-2024)" in report.verdict_reasons[0]


def test_a_duplicate_run_id_with_different_content_is_an_error(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rows = grid(6)
    path = tmp_path / "results.jsonl"
    other_task = {**rows[0], "task_id": "t5"}
    path.write_text("".join(json.dumps(r) + "\n" for r in [*rows, other_task]))
    assert main(["analyze", str(path)]) == 2
    err = capsys.readouterr().err
    assert "results.jsonl" in err and "t0-codesearch-0" in err and "two different runs" in err
    changed = {**rows[0], "cost_usd": 99.0}
    path.write_text("".join(json.dumps(r) + "\n" for r in [*rows, changed]))
    assert main(["analyze", str(path)]) == 2
    assert "two different results" in capsys.readouterr().err
    # an identical repeat, or a retry of an infra error, is fine
    retry = [{**rows[0], "outcome": "infra_error", "correct": False}, *rows, rows[1]]
    report = analyze(tmp_path, retry, capsys)
    assert report.exclusions.superseded_attempts == 2


def test_an_agent_error_is_never_correct(tmp_path: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    rows = grid(6)
    rows[0] = {**rows[0], "outcome": "agent_error", "correct": True}
    report = analyze(tmp_path, rows, capsys)
    base = analyze(tmp_path, [{**rows[0], "correct": False}, *rows[1:]], capsys)
    tool = next(a for a in report.arms if a.arm == "codesearch")
    assert tool.correct == next(a for a in base.arms if a.arm == "codesearch").correct
    assert any("agent_error run(s) were graded correct" in w for w in report.warnings)


def test_the_control_gate_needs_five_control_tasks(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    few = grid(12) + [{**r, "task_id": "c" + r["task_id"], "run_id": "c" + r["run_id"],
                       "control": True, "cost_usd": r["cost_usd"] * (4 if
                                                                   r["arm"] == "codesearch"
                                                                   else 1)}
                      for r in grid(3)]
    report = analyze(tmp_path, few, capsys)
    assert report.verdict != "invalid"
    assert any("control drift not checked: 3 control tasks, need 5" in w
               for w in report.warnings)
    assert not any("outside ±15%" in w for w in report.warnings)
    many = grid(12) + [{**r, "task_id": "c" + r["task_id"], "run_id": "c" + r["run_id"],
                        "control": True, "cost_usd": r["cost_usd"] * (4 if
                                                                    r["arm"] == "codesearch"
                                                                    else 1)}
                       for r in grid(8)]
    report = analyze(tmp_path, many, capsys)
    assert report.verdict == "invalid" and "control delta interval" in (
        report.verdict_reasons[0])


def test_zero_correct_bound_and_effective_tasks(tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    rows = [{**r, "correct": False} if r["arm"] == "codesearch" else r for r in grid(12)]
    report = analyze(tmp_path, rows, capsys)
    d = report.comparisons[0].delta
    assert d.estimate == math.inf and d.low is not None and 0 < d.low < math.inf
    assert d.effective_clusters is not None and 1 <= d.effective_clusters <= d.clusters


def test_a_simulated_null_with_lost_runs_is_not_called_an_improvement(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rng = np.random.default_rng(5)
    rows = make_rows(Population(), 30, 3, rng)
    dear = {r["task_id"] for r in rows if r["arm"] == "baseline" and r["repetition"] == 0
            and float(r["cost_usd"]) > 1.5}  # type: ignore[arg-type]
    kept = [r for r in rows if not (r["arm"] == "codesearch" and r["task_id"] in dear
                                    and r["repetition"] > 0)]
    report = analyze(tmp_path, kept, capsys)
    assert report.comparisons[0].delta.high is not None
    assert report.comparisons[0].delta.high > 0  # no false improvement from lost runs


def test_the_report_states_what_its_design_can_detect(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    small = analyze(tmp_path, grid(8, reps=3), capsys).comparisons[0].power
    large = analyze(tmp_path, grid(40, reps=3), capsys).comparisons[0].power
    assert small is not None and large is not None
    assert (small.tasks, small.repetitions, large.tasks) == (8, 3, 40)
    assert large.improvement is not None and large.regression is not None
    assert (small.improvement or -1.0) < large.improvement < 0 < 0.10 < large.regression
    assert small.regression is None or small.regression > large.regression
