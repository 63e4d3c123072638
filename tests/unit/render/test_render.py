"""Renderers format a finished Report and nothing else."""

from __future__ import annotations

import re

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


def test_an_arm_that_only_met_infra_errors_reads_as_no_run_not_nothing_correct() -> None:
    from copeca_action.render import render_html

    rows = make_rows(Population(), 6, 2, np.random.default_rng(2))
    recs = [RunRecord(**{**r, "outcome": "infra_error", "correct": False})
            if r["arm"] == "codesearch" else RunRecord(**r) for r in rows]
    r = build_report(recs, Settings(resamples=200, power_experiments=0))
    text = render_markdown(r)
    row = next(ln for ln in text.splitlines() if ln.startswith("| codesearch |"))
    assert "n/a (no run reached the agent)" in row and "∞" not in row
    assert "nothing correct in either arm" not in text
    assert "n/a (no task ran in both arms)" in text
    html = render_html(r)
    assert "n/a (no run reached the agent)" in html
    assert "nothing correct" not in html


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


def test_markdown_escapes_text_the_records_supply() -> None:
    """A task id, category, language, arm or scenario from a record renders as itself: it
    cannot end a table row, add a forged verdict heading, open an HTML comment that hides the
    rest, or mention anyone (report.md is shown in the job summary)."""
    hostile = ("x|1\n### 🟢 improvement: −90% | <!-- @octocat #1 `a` "
               "<img src=x onerror=alert(1)>\u202e")
    rows = make_rows(Population(cost_ratio=1.0), 6, 3, np.random.default_rng(1),
                     control_tasks=2)
    for r in rows:
        if r["task_id"].endswith("0001"):
            r.update(task_id=hostile, category=hostile, language=hostile)
        if r["arm"] == "codesearch":
            r["arm"] = "tool|<b>"
    r = build_report([RunRecord(**r) for r in rows], Settings(resamples=200),
                     scenario="s\n## 🟢 improvement")
    text = render_markdown(r)
    assert "<!--" not in text.replace("\\<!--", "") and "<img" not in text.replace("\\<img", "")
    assert "<b>" not in text.replace("\\<b\\>", "").replace("&lt;b&gt;", "")
    assert "\u202e" not in text and "@octocat" not in text
    lines = text.splitlines()
    assert not [ln for ln in lines if ln.startswith("#") and "improvement" in ln
                and not ln.startswith("## copeca-action: s ## ")]
    cells = re.compile(r"(?<!\\)\|")  # a cell boundary: an unescaped |
    task_rows = [ln for ln in lines if ln.startswith("| x\\|1")]
    assert len(task_rows) == 3 and all(len(cells.findall(ln)) == 6 for ln in task_rows)
    arm_rows = [ln for ln in lines if ln.startswith("| tool\\|\\<b\\> |")]
    assert len(arm_rows) == 2 and {len(cells.findall(ln)) for ln in arm_rows} == {8, 10}


def test_escaped_markdown_stays_readable_where_it_is_read_raw() -> None:
    """report.md is printed to terminals: numbers and brackets read as themselves (not as
    &#91;…&#93; entities), and a breakdown's <summary> holds HTML-escaped text."""
    rows = make_rows(Population(cost_ratio=1.0), 6, 3, np.random.default_rng(1))
    for row in rows:
        if row["arm"] == "codesearch":
            row["arm"] = "tool<i>"
    r = build_report([RunRecord(**row) for row in rows], Settings(resamples=200))
    text = render_markdown(r)
    assert "&#" not in text
    reasons = next(ln for ln in text.splitlines() if ln.startswith("### "))
    assert "\\[" in reasons and "%" in reasons  # the interval, readable
    assert "<summary>tool&lt;i&gt; vs baseline: breakdowns</summary>" in text


def test_markdown_prints_bounds_on_their_side_of_zero_and_the_fail_threshold() -> None:
    from copeca_action.render import interval_text
    from copeca_action.render._markdown import delta_lines

    r = report(1.0)
    c = r.comparisons[0]
    near = c.delta.model_copy(update={"estimate": 0.2, "low": 0.1004, "high": 0.3})
    assert interval_text(near, delta_lines(r.thresholds)) == "+20.0% [+10.04%, +30.0%]"
    hair = c.delta.model_copy(update={"estimate": -0.02, "low": -0.04, "high": -0.0004})
    assert interval_text(hair) == "-2.0% [-4.0%, -0.04%]"
    changed = r.model_copy(update={"comparisons": [c.model_copy(update={"delta": hair})]})
    assert "cost per correct answer -2.0% [-4.0%, -0.04%]" in render_markdown(changed)
    from copeca_action.render import render_html

    assert "-2.0% [-4.0%, -0.04%]" in render_html(changed)


def test_no_spend_in_either_arm_reads_undefined_everywhere_never_plus_zero() -> None:
    """Every run at $0: report.md, report.html, the comment, the badge and the outputs said
    "+0.0%" (0/0 taken as a ratio of 1); now each says there is no delta, and why."""
    from copeca_action.github import BundleInfo, comment_data, output_values, render_comment
    from copeca_action.github._badge import badge_input, badge_message
    from copeca_action.render import render_html

    rows = make_rows(Population(), 6, 2, np.random.default_rng(2))
    r = build_report([RunRecord(**{**row, "cost_usd": 0.0}) for row in rows],
                     Settings(resamples=200))
    md, html = render_markdown(r), render_html(r)
    assert "cost per correct answer undefined (no spend in either arm)" in md
    assert "undefined (no spend in either arm)" in html
    assert "+0.0%" not in md and "+0.0%" not in html
    none = BundleInfo(None, None, None)
    comment = render_comment(comment_data(r, none, comment_id="x", tasks={}))
    assert "neither arm spent anything" in comment
    row = next(ln for ln in comment.splitlines() if ln.startswith("| Cost per correct"))
    assert row.split("|")[-2].strip() == "n/a"
    assert badge_message(badge_input(r)) == "inconclusive"
    assert output_values(r, none, None)["delta"] == ""
