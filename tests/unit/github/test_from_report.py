"""The real Report → the comment's data and the action's outputs: every number the comment
shows is the report's own."""

from __future__ import annotations

import math
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bundle"))
from bundle_support import record_for

from copeca_action.github import BundleInfo, comment_data, output_values, render_comment
from copeca_action.plan import build_plan
from copeca_action.report import Report, Settings, build_report
from copeca_action.scenario import Task, load_corpus, load_scenario


def _report(corpus_root: Path, **update: object) -> tuple[Report, dict[str, Task]]:
    scenario = load_scenario(corpus_root / "scenarios" / "demo.yaml")
    corpus = load_corpus(corpus_root)
    plan = build_plan(scenario, corpus.tasks)
    records = [record_for(plan, i, **update) for i in range(len(plan.runs))]
    report = build_report(records, Settings.from_scenario(scenario), scenario=scenario.name)
    return report, dict(corpus.tasks)


def test_comment_data_carries_the_reports_numbers(corpus_root: Path) -> None:
    report, tasks = _report(corpus_root)
    head = report.headline_comparison
    assert head is not None
    info = BundleInfo(Path("/out/demo.copeca"), "ab" * 32, "cd" * 32)
    data = comment_data(report, info, comment_id="x", tasks=tasks,
                        run_url="https://github.com/o/r/actions/runs/1")
    assert data.verdict == report.verdict
    assert data.headline is not None and data.headline.versus == "baseline"
    assert data.headline.estimate.delta == head.delta.estimate
    assert data.headline.estimate.ci_low == head.delta.low
    cpc = data.metrics[0]
    arms = {a.arm: a for a in report.arms}
    assert head.overall is not None and head.control is not None
    assert cpc.tool == head.overall.cpc_tool and cpc.baseline == head.overall.cpc_base
    # the row's values are the ones its delta compares (non-control tasks), not the arm's
    assert head.overall.cpc_tool != arms[head.tool].cpc_usd
    assert math.isclose(head.overall.cpc_tool / head.overall.cpc_base - 1,
                        head.delta.estimate or 0, rel_tol=1e-9)
    control = [m for m in data.metrics if m.control]
    assert head.control_delta is not None and len(control) == 1
    assert control[0].estimate is not None
    assert control[0].estimate.delta == head.control_delta.estimate
    assert control[0].tool == head.control.cpc_tool
    # each arm cell carries that arm's own interval on the same tasks as the row's value
    it, ib = head.overall.interval_tool, head.overall.interval_base
    assert it is not None and ib is not None and cpc.tool_ci and cpc.baseline_ci
    assert (cpc.tool_ci.low, cpc.tool_ci.high) == (it.cpc_low, it.cpc_high)
    assert (cpc.baseline_ci.low, cpc.baseline_ci.high) == (ib.cpc_low, ib.cpc_high)
    accuracy = data.metrics[1]
    assert accuracy.tool_ci and accuracy.tool_ci.low == it.accuracy_low
    assert head.control.interval_tool is not None and control[0].tool_ci is not None
    assert control[0].tool_ci.low == head.control.interval_tool.cpc_low
    assert {t.task_id for t in data.tasks} == {line.key for line in head.tasks}
    assert any(t.control for t in data.tasks)
    assert data.footer is not None and data.footer.seed == report.seed
    assert data.footer.key_id == "cd" * 32 and data.footer.bundle_name == "demo.copeca"
    body = render_comment(data)
    assert "**Control**" in body and "ab" * 32 in body
    assert not any("unsigned" in w for w in data.warnings)
    assert not data.chart and "```mermaid" not in body  # the table says what a chart would
    spend = next(m for m in data.metrics if m.metric == "Spend per run")
    runs = next(m for m in data.metrics if m.metric == "Runs")
    o = head.overall
    assert o is not None and o.spend_tool is not None and o.spend_base is not None
    # one population: the headline's, not the whole arm's
    assert (spend.tool, spend.baseline) == (o.spend_tool / o.runs_tool,
                                            o.spend_base / o.runs_base)
    assert (runs.tool, runs.baseline) == (head.overall.runs_tool, head.overall.runs_base)
    effects = [abs(t.effect) for t in data.tasks if t.effect is not None]
    assert effects == sorted(effects, reverse=True) and effects
    assert all(t.effect is None for t in data.tasks[len(effects):])


def test_a_chart_that_could_escape_its_fence_is_refused() -> None:
    import pytest
    from pydantic import ValidationError

    from copeca_action.github import CommentData

    bad = '```mermaid\nxychart-beta\n    title "x"\n```\n<img src=x onerror=alert(1)>\n```\n'
    with pytest.raises(ValidationError, match="chart"):
        CommentData(verdict="inconclusive", chart=bad)


def test_unsigned_bundle_and_version_drift_are_warned(corpus_root: Path) -> None:
    report, tasks = _report(corpus_root)
    arms = [a.model_copy(update={"cli_versions": [f"2.{i}.0"]})
            for i, a in enumerate(report.arms)]
    report = report.model_copy(update={"arms": arms})
    data = comment_data(report, BundleInfo(Path("b.copeca"), "00" * 32, None), comment_id="x",
                        tasks=tasks)
    assert any("unsigned" in w for w in data.warnings)
    assert any("CLI versions differ" in w for w in data.warnings)
    assert "unsigned" in render_comment(data)


def test_outputs_are_the_headline_numbers(corpus_root: Path) -> None:
    report, _ = _report(corpus_root)
    head = report.headline_comparison
    assert head is not None
    out = output_values(report, BundleInfo(Path("/o/b.copeca"), "ef" * 32, None),
                        Path("/o/report.json"))
    assert out["verdict"] == report.verdict
    assert math.isclose(float(out["delta"]), head.delta.estimate or 0, rel_tol=1e-5)
    assert out["bundle-path"] == "/o/b.copeca" and out["report-path"] == "/o/report.json"
    assert out["bundle-sha256"] == "ef" * 32
    assert out["cpc-tool"] and out["cpc-baseline"]


def test_the_outputs_name_the_level_of_their_interval(corpus_root: Path) -> None:
    """Under adaptive sampling the interval in delta-ci-low/-high is at the look's level
    (98.75% at look 1 of 2..4): a workflow read it with nothing saying so. delta-ci-level
    is the report's level, the one the comment and the badge name."""
    from copeca_action.scenario import Adaptive

    plain, _ = _report(corpus_root)
    assert output_values(plain, BundleInfo(None, None, None), None)["delta-ci-level"] == "0.95"
    scenario = load_scenario(corpus_root / "scenarios" / "demo.yaml")
    plan = build_plan(scenario, load_corpus(corpus_root).tasks)
    records = [record_for(plan, i) for i in range(len(plan.runs))]
    settings = Settings.from_scenario(scenario, adaptive=Adaptive(min_repetitions=2,
                                                                  max_repetitions=4))
    report = build_report(records, settings, scenario=scenario.name)
    head = report.headline_comparison
    assert report.look is not None and head is not None
    out = output_values(report, BundleInfo(None, None, None), None)
    assert out["delta-ci-level"] == "0.9875" and head.delta.level == pytest.approx(0.9875)


def test_an_unbounded_output_is_infinity_never_an_empty_zero(corpus_root: Path) -> None:
    """A GitHub expression reads an empty output as 0: an infinite cost per correct or bound
    printed empty would read as 0 ("delta-ci-high < 0.05" true for an unbounded interval)."""
    scenario = load_scenario(corpus_root / "scenarios" / "demo.yaml")
    plan = build_plan(scenario, load_corpus(corpus_root).tasks)
    records = [record_for(plan, i) for i in range(len(plan.runs))]
    records = [r.model_copy(update={"correct": r.arm != "codesearch"}) for r in records]
    report = build_report(records, Settings.from_scenario(scenario), scenario=scenario.name)
    out = output_values(report, BundleInfo(None, None, None), None)
    assert out["cpc-tool"] == "Infinity" and out["delta"] == "Infinity"
    assert out["delta-ci-high"] == "Infinity"
    assert float(out["cpc-baseline"]) > 0 and float(out["delta-ci-low"]) > 0
    assert math.isinf(float(out["delta"]))  # Python reads it; so do JavaScript and GitHub


def test_merged_user_tasks_keep_category_and_control_without_the_corpus(
        corpus_root: Path) -> None:
    """In `merge:` the tasks may be the user's, absent from the bundled corpus: category and
    control come from the records (through the report), so rows and counts stay right."""
    report, tasks = _report(corpus_root)
    head = report.headline_comparison
    assert head is not None
    data = comment_data(report, BundleInfo(None, None, None), comment_id="x", tasks={})
    with_corpus = comment_data(report, BundleInfo(None, None, None), comment_id="x",
                               tasks=tasks)
    assert [(t.task_id, t.category, t.control) for t in data.tasks] == [
        (t.task_id, t.category, t.control) for t in with_corpus.tasks]
    assert {t.task_id for t in data.tasks if t.control} == {
        k for k, t in tasks.items() if t.control and k in {ln.key for ln in head.tasks}}
    assert [c.tasks for c in data.capabilities] == [c.tasks for c in with_corpus.capabilities]
    non_control = sum(1 for t in data.tasks if not t.control)
    assert sum(c.tasks for c in data.capabilities) == non_control  # controls not counted


def test_an_arm_with_no_run_gets_no_spend_change_or_cost_per_correct() -> None:
    """Every tool run an infra error: the comment's table shows no cost per correct for the
    tool and no "−100%" spend change (the tool arm counted nothing, it saved nothing)."""
    from copeca_action.records import RunRecord

    def rec(task: int, arm: str, rep: int, **kw: object) -> RunRecord:
        return RunRecord(**{"run_id": f"{task}-{arm}-{rep}", "scenario": "s", "task_id": f"t{task}",
                            "task_hash": "h", "arm": arm, "model": "m", "runner": "claude",
                            "repetition": rep, "outcome": "ok", "correct": True,
                            "cost_usd": 1.0, **kw})

    records = [rec(t, "baseline", r) for t in range(4) for r in range(2)]
    records += [rec(t, "codesearch", r, outcome="infra_error", correct=False, cost_usd=0.3)
                for t in range(4) for r in range(2)]
    report = build_report(records, Settings(resamples=200, power_experiments=0))
    data = comment_data(report, BundleInfo(None, None, None), comment_id="x", tasks={})
    rows = {m.metric: m for m in data.metrics}
    assert rows["Cost per correct"].tool is None and rows["Spend per run"].estimate is None
    assert rows["Spend per run"].tool is None  # no run: no spend per run, not $0
    body = render_comment(data)
    spend = next(ln for ln in body.splitlines() if ln.startswith("| Spend"))
    assert "100" not in spend.split("|")[-2]


def test_the_spend_row_compares_spend_per_run_when_run_counts_differ() -> None:
    """The tool arm lost a third of its runs (infra errors) at the same cost per run: the row
    said "Spend −33%" beside the verdict, a change made of the lost runs, not of the tool."""
    from copeca_action.records import RunRecord

    def rec(task: int, arm: str, rep: int, **kw: object) -> RunRecord:
        return RunRecord(**{"run_id": f"{task}-{arm}-{rep}", "scenario": "s", "task_id": f"t{task}",
                            "task_hash": "h", "arm": arm, "model": "m", "runner": "claude",
                            "repetition": rep, "outcome": "ok", "correct": rep != 1,
                            "cost_usd": 0.5 + 0.1 * task, **kw})

    records = [rec(t, arm, r) for t in range(8) for arm in ("baseline", "codesearch")
               for r in range(3)]
    records = [r.model_copy(update={"outcome": "infra_error"})
               if r.arm == "codesearch" and r.repetition == 2 else r for r in records]
    report = build_report(records, Settings(resamples=200, power_experiments=0))
    data = comment_data(report, BundleInfo(None, None, None), comment_id="x", tasks={})
    rows = {m.metric: m for m in data.metrics}
    assert "Spend" not in rows
    spend, runs = rows["Spend per run"], rows["Runs"]
    assert (runs.baseline, runs.tool) == (24, 16)
    assert spend.baseline == pytest.approx(0.85) and spend.tool == pytest.approx(0.85)
    assert spend.estimate is not None and spend.estimate.delta == pytest.approx(0.0, abs=1e-12)
    line = next(ln for ln in render_comment(data).splitlines()
                if ln.startswith("| Spend per run"))
    assert line.split("|")[-2].strip() == "+0.0%"


def test_task_rows_show_nothing_correct_as_infinity_and_no_run_as_na() -> None:
    """report.md prints ∞ for a task an arm ran without a correct answer; the comment's task
    table said n/a there, as for a task the arm did not run at all."""
    from copeca_action.records import RunRecord

    def rec(task: str, arm: str, rep: int, correct: bool) -> RunRecord:
        return RunRecord(run_id=f"{task}-{arm}-{rep}", scenario="s", task_id=task,
                         task_hash="h", arm=arm, model="m", runner="claude", repetition=rep,
                         outcome="ok", correct=correct, cost_usd=1.0)

    records = [rec(f"t{t}", arm, r, True) for t in range(4) for arm in ("baseline", "codesearch")
               for r in range(2)]
    records += [rec("wrong", arm, r, arm == "baseline") for arm in ("baseline", "codesearch")
                for r in range(2)]
    records += [rec("base-only", "baseline", r, True) for r in range(2)]
    report = build_report(records, Settings(resamples=200, power_experiments=0))
    data = comment_data(report, BundleInfo(None, None, None), comment_id="x", tasks={})
    rows = {t.task_id: t for t in data.tasks}
    assert rows["wrong"].tool_cost_usd == math.inf and rows["base-only"].tool_cost_usd is None
    body = render_comment(data)
    wrong = next(ln for ln in body.splitlines() if ln.startswith("| wrong "))
    only = next(ln for ln in body.splitlines() if ln.startswith("| base-only "))
    assert wrong.split("|")[6].strip() == "∞" and only.split("|")[6].strip() == "n/a"


def test_agent_time_not_reported_is_said_not_zero() -> None:
    """Records without `duration_s` summed to "0 s of agent time" in the comment."""
    from copeca_action.report import table_from_rows

    rows = [{"run_id": f"{arm}-{t}", "task_id": f"t{t}", "arm": arm, "model": "m",
             "outcome": "ok", "correct": True, "cost_usd": 0.5,
             **({"duration_s": 10.0} if arm == "baseline" else {})}
            for t in range(6) for arm in ("baseline", "codesearch")]
    report = build_report(table_from_rows(rows), Settings(resamples=200, power_experiments=0))
    data = comment_data(report, BundleInfo(None, None, None), comment_id="x", tasks={})
    assert data.run is not None and data.run.duration_s is None
    body = render_comment(data)
    assert "agent time not reported" in body and "0 s of agent time" not in body
