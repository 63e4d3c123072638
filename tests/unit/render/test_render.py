"""Renderers format a finished Report and nothing else."""

from __future__ import annotations

import numpy as np

from copeca_action.records import RunRecord
from copeca_action.render import headline_md, render_json, render_markdown
from copeca_action.report import Report, Settings, build_report
from copeca_action.report._simulate import Population, make_rows


def report(ratio: float, **kw: object) -> Report:
    rows = make_rows(Population(cost_ratio=ratio), 12, 5, np.random.default_rng(1), **kw)
    return build_report([RunRecord(**r) for r in rows], Settings(resamples=300))


def test_markdown_shows_verdict_delta_adoption_and_control() -> None:
    r = report(3.0, control_tasks=6)
    text = render_markdown(r)
    assert text.startswith("## copeca-action: sim")
    assert "regression" in headline_md(r)
    assert "runs where the tool was used" in text and "control tasks:" in text
    assert "| codesearch |" in text and "<summary>codesearch vs baseline: breakdowns" in text
    assert "repo/task-0000" in text
    assert "repo/task-0000" not in render_markdown(r, tasks=False)


def test_infinite_cost_per_correct_renders_as_infinity() -> None:
    rows = make_rows(Population(), 6, 2, np.random.default_rng(2))
    recs = [RunRecord(**{**r, "correct": False}) if r["arm"] == "codesearch" else RunRecord(**r)
            for r in rows]
    r = build_report(recs, Settings(resamples=200))
    text = render_markdown(r)
    assert "| ∞ (nothing correct; ≥ $" in text and "+∞" in text
    assert "nan" not in text.lower()
    assert Report.model_validate_json(render_json(r)) == r


def test_markdown_arm_rows_carry_their_intervals() -> None:
    from copeca_action.render._markdown import usd

    r = report(1.5)
    text = render_markdown(r)
    assert "accuracy (95% CI) | cost per correct (95% CI)" in text
    for arm in r.arms:
        i = arm.interval
        assert i is not None and i.cpc_low is not None and i.cpc_high is not None
        row = next(ln for ln in text.splitlines() if ln.startswith(f"| {arm.arm} |"))
        assert f"[{i.accuracy_low:.0%}, {i.accuracy_high:.0%}]" in row
        assert f"[{usd(i.cpc_low)}, {usd(i.cpc_high)}]" in row
