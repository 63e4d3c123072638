"""The Report's retrieval section: point estimates, ratios with the paired cluster bootstrap,
excluded tasks, and the edge cases (no data, one arm, no metric in common)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from retrieval_factory import rec, summary

from copeca_action.records import RetrievalSummary, RunRecord, read_rows, write_records
from copeca_action.report import Report, Settings, build_report, paired_bootstrap, table_from_rows

FAST = Settings(resamples=2_000, seed=7)


def paired_records(ratio: float, tasks: int = 14, reps: int = 2, noise: float = 0.0,
                   seed: int = 0) -> list[RunRecord]:
    """Tool AUC = ratio × baseline AUC on each task, plus optional run noise."""
    rng = np.random.default_rng(seed)
    out = []
    for t in range(tasks):
        level = rng.uniform(0.1, 0.4)
        for r in range(reps):
            for arm, factor in (("baseline", 1.0), ("mcp", ratio)):
                auc = float(np.clip(level * factor + rng.normal(0, noise), 0, 1))
                out.append(rec(f"t{t:02d}", arm, r, summary(auc)))
    return out


def test_no_retrieval_data_means_no_section() -> None:
    report = build_report([rec("a", "baseline"), rec("a", "mcp")], FAST)
    assert report.retrieval is None
    assert "retrieval" in report.model_dump()  # the key is there, null


def test_exact_ratio_has_a_degenerate_interval() -> None:
    report = build_report(paired_records(2.0), FAST)
    assert report.retrieval is not None
    (comparison,) = report.retrieval.comparisons
    auc = next(ln for ln in comparison.lines if ln.metric == "trajectory.span.auc")
    assert auc.ratio == pytest.approx(2.0)
    assert auc.low == pytest.approx(2.0) and auc.high == pytest.approx(2.0)
    assert auc.tasks == 14 and auc.aggregation == "macro"
    assert comparison.summary.startswith("mcp reached the gold context 2× earlier than baseline")
    assert "95% CI 2–2, 14 tasks" in comparison.summary


def test_ratio_and_interval_are_those_of_the_shared_bootstrap() -> None:
    records = paired_records(1.5, noise=0.05, seed=3)
    report = build_report(records, FAST)
    assert report.retrieval is not None
    auc = next(ln for ln in report.retrieval.comparisons[0].lines
               if ln.metric == "trajectory.span.auc")
    # By hand: per-task sums of AUC and of run counts, then the cost-per-correct bootstrap.
    tasks = sorted({r.task_id for r in records})
    sums = {arm: np.array([sum(r.retrieval.trajectory_span.auc for r in records  # type: ignore[union-attr]
                                if r.arm == arm and r.task_id == t) for t in tasks])
            for arm in ("mcp", "baseline")}
    counts = np.full(len(tasks), 2.0)
    bs = paired_bootstrap(sums["mcp"], counts, sums["baseline"], counts, resamples=2_000,
                          seed=7, alpha=0.05)
    assert auc.ratio == pytest.approx(1 + float(bs.estimate))
    assert auc.low == pytest.approx(1 + float(bs.low))
    assert auc.high == pytest.approx(1 + float(bs.high))
    assert auc.tool == pytest.approx(sums["mcp"].sum() / 28)
    assert auc.base == pytest.approx(sums["baseline"].sum() / 28)
    assert auc.low is not None and auc.high is not None and auc.low < 1.5 < auc.high
    assert report.retrieval.level == 0.95 and report.retrieval.resamples == 2_000


def test_micro_ratios_pool_sizes() -> None:
    """Micro coverage Σ∩/Σgold, precision Σ∩/Σpred, F1 2Σ∩/(Σgold+Σpred), per arm."""
    records = []
    for t, (gold, pred) in enumerate([(10, 20), (30, 10), (5, 5)]):
        records.append(rec(f"t{t}", "baseline", 0, summary(0.3, inter=gold // 5, gold=gold,
                                                            pred=pred)))
        records.append(rec(f"t{t}", "mcp", 0, summary(0.6, inter=gold // 2, gold=gold,
                                                       pred=pred)))
    report = build_report(records, FAST)
    assert report.retrieval is not None
    lines = {ln.metric: ln for ln in report.retrieval.comparisons[0].lines}
    inter_b, inter_t, gold, pred = 2 + 6 + 1, 5 + 15 + 2, 45, 35
    assert lines["span.coverage"].tool == pytest.approx(inter_t / gold)
    assert lines["span.coverage"].base == pytest.approx(inter_b / gold)
    assert lines["span.coverage"].ratio == pytest.approx(inter_t / inter_b)
    assert lines["span.precision"].tool == pytest.approx(inter_t / pred)
    assert lines["span.f1"].tool == pytest.approx(2 * inter_t / (gold + pred))
    arm = next(a for a in report.retrieval.arms if a.arm == "mcp")
    assert arm.metrics.span.micro_coverage == pytest.approx(inter_t / gold)
    assert arm.metrics.span.micro_f1 == pytest.approx(lines["span.f1"].tool)
    assert arm.metrics.editloc.runs == 0 and "editloc.coverage" not in lines


def test_tasks_without_gold_are_excluded_and_counted() -> None:
    records = [*paired_records(1.0, tasks=6),
               rec("nogold", "baseline"), rec("nogold", "mcp"), rec("nogold", "mcp", 1)]
    report = build_report(records, FAST)
    assert report.retrieval is not None
    assert report.retrieval.tasks_without_gold == ["nogold"]
    unscored = {a.arm: a.unscored_runs for a in report.retrieval.arms}
    assert unscored == {"baseline": 1, "mcp": 2}
    assert {a.arm: a.metrics.runs for a in report.retrieval.arms} == {"baseline": 12, "mcp": 12}
    assert all(ln.tasks == 6 for ln in report.retrieval.comparisons[0].lines)


def test_infra_errors_are_not_scored() -> None:
    records = [*paired_records(1.0, tasks=3),
               rec("t00", "mcp", 5, summary(1.0), outcome="infra_error")]
    report = build_report(records, FAST)
    assert report.retrieval is not None
    assert {a.arm: a.metrics.runs for a in report.retrieval.arms} == {"baseline": 6, "mcp": 6}


def test_one_arm_only_gives_arm_estimates_and_no_comparison() -> None:
    report = build_report([rec("a", "mcp", 0, summary(0.5)), rec("b", "mcp", 0, summary(0.7))],
                          FAST)
    assert report.retrieval is not None
    assert report.retrieval.comparisons == []
    (arm,) = report.retrieval.arms
    assert arm.metrics.span.auc == pytest.approx(0.6)


def test_no_metric_in_common_gives_no_ratio() -> None:
    """Every granularity null (a task with edit gold whose runs left no patch): only the step
    count is compared, and the sentence says no AUC ratio exists."""
    empty = RetrievalSummary(steps=3)
    report = build_report([rec("a", "baseline", 0, empty), rec("a", "mcp", 0, empty)], FAST)
    assert report.retrieval is not None
    (comparison,) = report.retrieval.comparisons
    assert [ln.metric for ln in comparison.lines] == ["steps"]
    assert comparison.summary.startswith("No AUC-coverage ratio between mcp and baseline")
    (arm, _) = report.retrieval.arms
    assert arm.metrics.span.micro_coverage is None and arm.metrics.span.auc is None


def test_zero_base_gives_an_infinite_ratio_and_zero_over_zero_none() -> None:
    records = [rec(f"t{t}", arm, 0, summary(a, inter=i)) for t in range(4)
               for arm, a, i in (("baseline", 0.0, 0), ("mcp", 0.5, 5))]
    report = build_report(records, FAST)
    assert report.retrieval is not None
    lines = {ln.metric: ln for ln in report.retrieval.comparisons[0].lines}
    assert lines["trajectory.span.auc"].ratio == float("inf")
    assert report.retrieval.comparisons[0].summary.startswith(
        "mcp viewed gold context where baseline viewed none (AUC-coverage ratio (span) ∞")
    assert lines["trajectory.span.redundancy"].ratio == 1.0  # 0.25 both
    text = Report.model_validate_json(report.model_dump_json())
    assert text == report


def test_a_slower_tool_reads_as_later() -> None:
    report = build_report(paired_records(0.5, noise=0.01), FAST)
    assert report.retrieval is not None
    assert report.retrieval.comparisons[0].summary.startswith(
        "mcp reached the gold context 2× later than baseline (AUC-coverage ratio (span) 0.5")


def test_head_vs_base_comes_first_and_is_seeded() -> None:
    records = paired_records(1.3, noise=0.05)
    records += [rec(r.task_id, "mcp@base", r.repetition, r.retrieval)
                for r in records if r.arm == "baseline"]
    one = build_report(records, FAST)
    again = build_report(records, FAST)
    other = build_report(records, Settings(resamples=2_000, seed=8))
    assert one == again
    assert one.retrieval is not None and other.retrieval is not None
    assert [c.name for c in one.retrieval.comparisons] == ["mcp vs mcp@base", "mcp vs baseline"]
    assert [c.kind for c in one.retrieval.comparisons] == ["head_vs_base", "tool_vs_baseline"]
    assert one.retrieval.comparisons[0].lines[0].low != other.retrieval.comparisons[0].lines[0].low


def test_results_file_carries_retrieval_to_the_report(tmp_path: Path) -> None:
    records = paired_records(1.5, tasks=5, noise=0.02)
    path = tmp_path / "results.jsonl"
    write_records(path, records)
    line = json.loads(path.read_text().splitlines()[0])
    first = records[0].retrieval
    assert first is not None and first.trajectory_span is not None
    assert line["retrieval"]["trajectory_span"]["auc"] == first.trajectory_span.auc
    rows, _ = read_rows(path)
    from_file = build_report(table_from_rows(rows), FAST)
    assert from_file.retrieval == build_report(records, FAST).retrieval
