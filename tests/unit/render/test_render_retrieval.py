"""The retrieval section in markdown and JSON, and coverage curves from records."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from copeca_action.records import RetrievalSummary, RunRecord
from copeca_action.render import (
    coverage_curves,
    render_html,
    render_json,
    render_markdown,
    retrieval_md,
)
from copeca_action.report import Report, Settings, build_report
from copeca_action.report._simulate import Population, make_rows


def with_retrieval(row: dict[str, Any]) -> dict[str, Any]:
    """codesearch sees the gold twice as early: curves [.2,.4,.6] vs [.4,.8,1]."""
    fast = row["arm"] == "codesearch"
    curve = [0.4, 0.8, 1.0] if fast else [0.2, 0.4, 0.6]
    traj = {"auc": sum(curve) / 3, "redundancy": 0.1, "coverage_by_step": curve}
    span = {"intersection": 6 if fast else 3, "gold": 10, "pred": 20,
            "coverage": 0.6 if fast else 0.3, "precision": 0.3 if fast else 0.15,
            "f1": 0.4 if fast else 0.2}
    return {**row, "retrieval": {"steps": 3, "span": span, "trajectory_span": traj}}


def records(gold: bool = True) -> list[RunRecord]:
    rows = make_rows(Population(), 12, 2, np.random.default_rng(4))
    return [RunRecord(**(with_retrieval(r) if gold else r)) for r in rows]


def test_markdown_has_the_sentence_and_the_ratio_table() -> None:
    report = build_report(records(), Settings(resamples=300))
    text = render_markdown(report)
    assert "#### Retrieval" in text
    assert ("codesearch reached the gold context 1.8× earlier than baseline "
            "(AUC-coverage ratio (span) 1.8, 95% CI 1.8–1.8, 12 tasks)") in text
    assert "| metric | baseline | codesearch | ratio (95% CI) | tasks |" in text
    assert "| AUC-coverage (span), macro | 0.40 | 0.73 | 1.83 (1.83–1.83) | 12 |" in text
    assert "| coverage (span), micro | 0.30 | 0.60 | 2.00 (2.00–2.00) | 12 |" in text
    assert "<summary>retrieval per arm</summary>" in text
    assert "symbol" not in retrieval_md(report.retrieval)  # no symbol data, no symbol rows
    assert Report.model_validate_json(render_json(report)) == report
    assert '"retrieval": {' in render_json(report)


def test_no_retrieval_no_section() -> None:
    report = build_report(records(gold=False), Settings(resamples=200))
    assert "Retrieval" not in render_markdown(report)
    assert retrieval_md(None) == ""
    assert coverage_curves(records(gold=False)) == []


def test_one_arm_shows_the_arm_table_without_a_comparison() -> None:
    report = build_report([r for r in records() if r.arm == "codesearch"],
                          Settings(resamples=200))
    text = retrieval_md(report.retrieval)
    assert text.startswith("| metric | codesearch |")
    assert "| coverage (span) | 0.60 |" in text and "ratio" not in text


def test_coverage_curves_average_runs_per_arm_from_records_or_rows() -> None:
    recs = records()
    curves = {c.arm: c for c in coverage_curves(recs)}
    assert curves["codesearch"].coverage_by_step == pytest.approx([0.4, 0.8, 1.0])
    assert curves["baseline"].runs == 24
    rows = [r.model_dump() for r in recs]
    assert coverage_curves(rows) == coverage_curves(recs)
    # an infra error is not a run of the arm; a later record of a run id wins
    failed = recs[0].model_copy(update={"outcome": "infra_error"})
    assert {c.arm: c.runs for c in coverage_curves([*recs, failed])}[recs[0].arm] == 23
    assert coverage_curves(recs, granularity="file") == []
    html = render_html(build_report(recs, Settings(resamples=200)),
                       coverage=coverage_curves(recs))
    assert 'data-chart="coverage"' in html


def test_summary_model_is_what_the_rows_hold() -> None:
    row = with_retrieval(make_rows(Population(), 1, 1, np.random.default_rng(0))[0])
    summary = RetrievalSummary.model_validate(row["retrieval"])
    assert summary.trajectory_span is not None and summary.file is None
