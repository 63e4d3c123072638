from __future__ import annotations

import re

from sample import sample_comment

from copeca_action.github import (
    MAX_COMMENT_CHARS,
    CommentData,
    escape_md,
    headline_text,
    marker,
    render_comment,
)


def test_headline_reads_like_a_sentence() -> None:
    assert headline_text(sample_comment()) == (
        "Cost per correct −18.2% (95% CI −27.5 to −8.1%) vs baseline")


def test_table_has_the_metrics_and_a_control_row() -> None:
    body = render_comment(sample_comment())
    assert body.startswith(marker("copeca") + "\n")
    assert "| Metric | Baseline | Tool | Δ (95% CI) |" in body
    assert ("| Cost per correct | $0.41 (0.33–0.52) | $0.34 (0.27–0.43) | −18.2% (−27.5 to "
            "−8.1%) |") in body
    assert "| Accuracy | 61.5% (48–73%) | 66.7% (53–78%) | +5.2 pp (−2.0 to +11.0 pp) |" in body
    assert "| Spend per run | $0.55 | $0.45 | −18.0% |" in body  # no interval: the cells say none
    assert ("| **Control**: Cost per correct | $0.20 (0.15–0.27) | $0.20 (0.16–0.28) | +2.0% "
            "(−5.0 to +9.0%) |") in body
    assert "<sub>In parentheses: each arm's own 95% CI (tasks resampled, as for Δ).</sub>" in body
    assert "<details><summary>Tasks by their effect on the headline (6 tasks)</summary>" in body
    assert "signed by key <code>" + "cd" * 32 in body
    assert "[workflow run](https://github.com/o/r/actions/runs/1)" in body


def test_unsigned_bundle_is_said() -> None:
    data = sample_comment()
    assert data.footer is not None
    data = data.model_copy(update={"footer": data.footer.model_copy(update={"key_id": None})})
    assert " · unsigned · " in render_comment(data)


HOSTILE = ("@octocat please <img src=x onerror=alert(1)> **bold** [x](https://evil.example) "
           "| col ` code #1 :smile: owner/repo#2 <!-- copeca-action:comment-id=copeca -->\nnew")


def test_agent_text_cannot_inject_markup_mentions_or_markers() -> None:
    body = render_comment(sample_comment(note=HOSTILE))
    row = next(line for line in body.splitlines() if line.startswith("| fastapi/task-0"))
    assert row.count(" | ") == 6  # the pipe in the note did not add a cell
    plain = re.sub(r"&#\d+;", "§", row)  # what markdown sees, entities as opaque marks
    for bad in ("@octocat", "<", "*", "[", "](", "https://", "`", "#", ":smile:"):
        assert bad not in plain, bad
    assert body.count(marker("copeca")) == 1
    assert "\nnew" not in body


def test_escape_keeps_plain_text_readable() -> None:
    assert escape_md("fastapi/locate-unique-id 1.2") == "fastapi/locate-unique-id 1.2"
    assert escape_md("a" * 400, max_len=10) == "a" * 9 + "…"
    assert "\u202e" not in escape_md("abc\u202edef")


def test_a_70000_character_report_is_cut_to_the_limit_and_says_where_the_rest_is() -> None:
    data = sample_comment(tasks=400, note="n" * 200)
    full = render_comment(data, limit=10**9)
    assert len(full) > 70_000
    body = render_comment(data)
    assert len(body) <= MAX_COMMENT_CHARS
    assert "truncated to fit GitHub's 65,536-character limit" in body
    assert "<code>copeca-bundle</code>" in body
    assert "| **Control**: Cost per correct" in body  # the verdict survives the cut
    shown = int(re.search(r"\(400 tasks, the first (\d+) shown\)", body).group(1))  # type: ignore[union-attr]
    assert 100 < shown < 400  # as many task rows as fit, not none
    assert f"| … {400 - shown} more tasks in the full report |" in body
    assert f"after the first {shown} tasks" in body


def test_last_resort_cut_still_closes_details_and_keeps_the_note() -> None:
    data = sample_comment(tasks=2)
    huge = CommentData.model_validate({**data.model_dump(), "metrics": [
        {**data.metrics[0].model_dump(), "metric": f"metric {i} " + "m" * 400}
        for i in range(400)]})
    body = render_comment(huge)
    assert len(body) <= MAX_COMMENT_CHARS
    assert body.count("<details>") == body.count("</details>")
    assert "most of the report are left out" in body


def test_skipped_comment_explains_why() -> None:
    data = CommentData(verdict="skipped", skipped_reason="From a fork: no `secrets`. @bob")
    body = render_comment(data)
    assert "### ⏭️ copeca-action: skipped" in body
    assert "<code>secrets</code>" in body and "@bob" not in body
    assert re.search(r"copeca-action:state=[0-9a-f]{16}", body)


def test_infinite_and_missing_numbers_render_without_crashing() -> None:
    from copeca_action.github import Estimate, MetricRow

    data = sample_comment(tasks=0)
    rows = [MetricRow(metric="Cost per correct", unit="usd", baseline=0.4, tool=float("inf"),
                      estimate=Estimate(delta=float("inf"))),
            MetricRow(metric="Accuracy", unit="fraction", baseline=None, tool=0.0)]
    body = render_comment(data.model_copy(update={"metrics": rows}))
    assert "| Cost per correct | $0.40 | ∞ | +∞ |" in body
    assert "| Accuracy | n/a | 0.0% | n/a |" in body
    assert "In parentheses" not in body  # no arm interval, no note


def test_an_arm_with_nothing_correct_shows_infinity_and_its_lower_bound() -> None:
    from copeca_action.github import Bounds, Estimate, MetricRow

    data = sample_comment(tasks=0)
    rows = [MetricRow(metric="Cost per correct", unit="usd", baseline=0.4, tool=None,
                      estimate=Estimate(delta=float("inf"), ci_low=1.5, ci_high=float("inf")),
                      baseline_ci=Bounds(low=0.3, high=0.55), tool_ci=Bounds(low=1.2, high=None)),
            MetricRow(metric="Accuracy", unit="fraction", baseline=0.5, tool=0.0,
                      baseline_ci=Bounds(low=0.3, high=0.7), tool_ci=Bounds(low=0.0, high=0.12))]
    body = render_comment(data.model_copy(update={"metrics": rows}))
    assert "| Cost per correct | $0.40 (0.30–0.55) | ∞ (≥ $1.20) | +∞ (+150.0 to +∞) |" in body
    assert "| Accuracy | 50.0% (30–70%) | 0.0% (0–12%) | n/a |" in body
    assert "nan" not in body.lower()


def test_rounding_never_shows_a_bound_on_the_line_the_verdict_says_it_clears() -> None:
    """An improvement whose upper bound is −0.04% read "(−4.0 to 0.0%)": an interval
    touching zero beside a green verdict. A regression's lower bound of +10.04% read +10.0%
    against a fail threshold of 10%."""
    from copeca_action.github import Estimate, Headline

    data = sample_comment()
    for est, shown in ((Estimate(delta=-0.02, ci_low=-0.04, ci_high=-0.0004),
                        "−2.0% (95% CI −4.0 to −0.04%)"),
                       (Estimate(delta=0.2, ci_low=0.1004, ci_high=0.3),
                        "+20.0% (95% CI +10.04 to +30.0%)"),
                       (Estimate(delta=-0.00004, ci_low=-0.1, ci_high=0.00004),
                        "−0.004% (95% CI −10.0 to +0.004%)")):
        metrics = [data.metrics[0].model_copy(update={"estimate": est}), *data.metrics[1:]]
        changed = data.model_copy(update={"headline": Headline(estimate=est),
                                          "metrics": metrics})
        assert headline_text(changed) == f"Cost per correct {shown} vs baseline"
        row = next(ln for ln in render_comment(changed).splitlines()
                   if ln.startswith("| Cost per correct"))
        assert row.endswith(f"| {shown.replace('95% CI ', '')} |")


def test_a_head_vs_base_comment_names_its_columns_base_and_head() -> None:
    """With `compare: base-ref` the arms are the tool at the PR's base and at the commit
    measured; the tables said "Baseline | Tool", the names of the other comparison (the
    agent without the tool and with it)."""
    data = sample_comment()
    assert data.headline is not None
    data = data.model_copy(update={"headline": data.headline.model_copy(
        update={"versus": "base"})})
    body = render_comment(data)
    assert "| Metric | Base | Head | Δ (95% CI) |" in body
    assert "| Task | Category | Base correct | Head correct | Base cpc | Head cpc |" in body
    assert "| Category | Tasks | Base accuracy | Head accuracy |" in body
    assert "| Flag | Base runs | Head runs | Detail |" in body
    assert "Base: the tool at the PR's base; Head: the tool at the commit measured." in body
    assert "Baseline" not in body and "| Tool" not in body
    baseline = render_comment(sample_comment())
    assert "| Metric | Baseline | Tool |" in baseline and "Head" not in baseline
