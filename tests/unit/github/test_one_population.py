"""What is published is what was decided: report.json, report.md, report.html and the PR
comment show the same per-arm numbers (cost per correct, accuracy, spend, runs, turns) on one
population, the headline comparison's `overall` line (its non-control tasks)."""

from __future__ import annotations

import html
import re
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "render"))
from html_cases import records

from copeca_action.github import BundleInfo, comment_data, render_comment
from copeca_action.render import render_html, render_markdown
from copeca_action.report import Report, Settings, build_report

NUM = re.compile(r"[−-]?\$?[\d,]+(?:\.\d+)?%?")


def _value(text: str) -> float:
    t = text.replace("−", "-").replace("$", "").replace(",", "")
    return float(t[:-1]) / 100 if t.endswith("%") else float(t)


def _first_number(cell: str) -> float:
    found = NUM.search(cell)
    assert found, cell
    return _value(found.group(0))


def _md_rows(text: str, header: str) -> dict[str, list[str]]:
    """The rows of the markdown table whose header line starts with `header`."""
    lines = text.splitlines()
    start = next(i for i, ln in enumerate(lines) if ln.startswith(header))
    rows = {}
    for ln in lines[start + 2:]:
        if not ln.startswith("|"):
            break
        cells = [c.strip() for c in ln.strip("|").split("|")]
        rows[cells[0]] = cells[1:]
    return rows


def _html_rows(text: str, table_id: str) -> dict[str, list[str]]:
    body = text.split(f'id="{table_id}"', 1)[1].split("</table>", 1)[0]
    rows = {}
    for tr in re.findall(r"<tr>(.*?)</tr>", body, flags=re.S):
        cells = [html.unescape(re.sub(r"<[^>]+>", "", c))
                 for c in re.findall(r"<t[hd][^>]*>(.*?)</t[hd]>", tr, flags=re.S)]
        if cells and cells[0] != "arm":
            rows[cells[0]] = cells[1:]
    return rows


@pytest.fixture(scope="module")
def report() -> Report:
    r = build_report(records(10, 2, control=3), Settings(resamples=400,
                                                         breakdown_resamples=200))
    return Report.model_validate_json(r.model_dump_json())  # as report.json reads back


def test_json_md_html_and_comment_agree_on_the_headline_population(report: Report) -> None:
    c = report.headline_comparison
    assert c is not None and c.overall is not None
    o = c.overall
    expected = {
        c.base: {"cpc": o.cpc_base, "acc": o.accuracy_base, "spend": o.spend_base,
                 "runs": o.runs_base, "turns": o.mean_turns_base, "correct": o.correct_base},
        c.tool: {"cpc": o.cpc_tool, "acc": o.accuracy_tool, "spend": o.spend_tool,
                 "runs": o.runs_tool, "turns": o.mean_turns_tool, "correct": o.correct_tool}}
    # the population is not the whole arm's (control tasks), else this test could not fail
    whole = {a.arm: a for a in report.arms}
    assert whole[c.tool].runs != o.runs_tool and whole[c.tool].cpc_usd != o.cpc_tool

    md = _md_rows(render_markdown(report), "| arm | cost per correct")
    page = _html_rows(render_html(report), "population-table")
    data = comment_data(report, BundleInfo(None, None, None), comment_id="x", tasks={})
    comment = _md_rows(render_comment(data), "| Metric | Baseline | Tool |")

    def close(got: float, want: float | None, rel: float = 0.006) -> None:
        assert want is not None and got == pytest.approx(want, rel=rel, abs=0.0006)

    for arm, want in expected.items():
        cpc, acc, spend, correct, runs, turns = md[arm]
        close(_first_number(cpc), want["cpc"])
        close(_first_number(acc), want["acc"], rel=0.01)
        close(_first_number(spend), want["spend"])
        assert (int(runs), int(correct)) == (want["runs"], want["correct"])
        close(_first_number(turns), want["turns"], rel=0.05)
        h = page[arm]
        close(_first_number(h[0]), want["cpc"])
        close(_first_number(h[2]), want["acc"], rel=0.01)
        close(_first_number(h[4]), want["spend"])
        assert (int(h[6]), int(h[5])) == (want["runs"], want["correct"])
        close(_first_number(h[7]), want["turns"], rel=0.05)
        col = 0 if arm == c.base else 1
        close(_first_number(comment["Cost per correct"][col]), want["cpc"])
        close(_first_number(comment["Accuracy"][col]), want["acc"], rel=0.01)
        close(_first_number(comment["Spend per run"][col]), want["spend"] / want["runs"])
        assert int(_first_number(comment["Runs"][col])) == want["runs"]
        close(_first_number(comment["Turns per run"][col]), want["turns"], rel=0.05)


def test_every_output_names_the_adaptive_look_and_its_level_alike() -> None:
    """Under the default adaptive schedule (a look per repetition) look 2 judges at alpha
    0.0025: report.md said 99.75% CI, report.html 99.8% (one decimal), and none of report.md,
    report.html or the comment said which look or which alpha the verdict was decided at."""
    from copeca_action.github import badge_input, badge_svg
    from copeca_action.scenario import Adaptive

    adaptive = Adaptive(min_repetitions=2, step=1, max_repetitions=10, alpha=0.05)
    r = build_report(records(10, 3), Settings(resamples=400, breakdown_resamples=200,
                                              power_experiments=0, adaptive=adaptive))
    assert r.look is not None and (r.look.look, r.look.repetitions) == (2, 3)
    note = ("adaptive sampling, look 2 of 9 (3 repetitions): judged at alpha 0.0025 (99.75% "
            "intervals); 0.0045 of the overall alpha 0.05 spent")
    assert r.look.note == note
    md = render_markdown(r)
    page = html.unescape(re.sub(r"<[^>]+>", "", render_html(r)))
    comment = html.unescape(render_comment(comment_data(
        r, BundleInfo(None, None, None), comment_id="x", tasks={}))).replace("\u200b", "")
    for text in (md, page, comment):
        assert note in text and "99.75% CI" in text
        assert "99.8% CI" not in text and "99.7% CI" not in text
    assert "99.75% CI" in badge_svg(badge_input(r))


def test_every_output_keeps_the_verdicts_reasons_apart() -> None:
    """An unknown cost beside an inconclusive interval gives one tool's verdict two reasons:
    report.md joined them with "; ", the comment with a space ("…no price for m2 the interval
    …", one sentence) and report.html with nothing at all ("…m2the interval …")."""

    def unpriced(r: dict[str, object]) -> dict[str, object]:
        if r["arm"] == "codesearch" and r["task_id"] == "repo/task-0000" and r["repetition"] == 0:
            return {**r, "cost_usd": None, "cost_unknown_reason": "no price for m2"}
        return r

    r = build_report(records(8, 2, edit=unpriced), Settings(resamples=400,
                                                            breakdown_resamples=200))
    assert r.multiplicity is None and len(r.verdict_reasons) == 2, r.verdict_reasons
    joined = "; ".join(r.verdict_reasons)
    assert "no price for m2; the interval" in joined
    page = html.unescape(re.sub(r"<[^>]+>", "", render_html(r)))
    comment = html.unescape(render_comment(comment_data(
        r, BundleInfo(None, None, None), comment_id="x", tasks={}))).replace("\u200b", "")
    md = render_markdown(r).replace("\\[", "[").replace("\\]", "]")
    for text in (md, page, comment):
        assert joined in text


def test_a_skipped_report_comment_says_why_and_what_was_spent() -> None:
    """A report judged `skipped` (runs of one arm only: nothing to compare) rendered the
    comment's skipped template, which showed only the action's own skip reason: empty here,
    so the PR read a bare "skipped", without the report's reason, the spend already made or
    the simulated label."""
    only_base = [r for r in records(6, 2) if r.arm == "baseline"]
    r = build_report(only_base, Settings(resamples=400, breakdown_resamples=200))
    assert r.verdict == "skipped" and r.spend.total_usd > 0
    data = comment_data(r, BundleInfo(None, None, None), comment_id="x", tasks={})
    comment = html.unescape(render_comment(data)).replace("\u200b", "")
    assert "copeca-action: skipped" in comment
    for reason in r.verdict_reasons:
        assert reason in comment
    assert f"on {r.records:,} runs" in comment, comment
    simulated = [rec.model_copy(update={"endpoint": "scripted"}) for rec in only_base]
    rs = build_report(simulated, Settings(resamples=400, breakdown_resamples=200))
    assert rs.simulation_note
    comment = html.unescape(render_comment(comment_data(
        rs, BundleInfo(None, None, None), comment_id="x", tasks={})))
    assert "Simulated." in comment and rs.simulation_note in comment.replace("\u200b", "")


def test_an_arm_whose_runs_all_have_unknown_cost_is_not_said_to_have_no_run() -> None:
    """Every non-control run of the tool arm unpriced: those runs reached the agent, their
    cost is unknown. The headline table of report.md and report.html read "no run reached
    the agent" for that arm's cost per correct: a false statement about what happened."""

    def unpriced(r: dict[str, object]) -> dict[str, object]:
        if r["arm"] == "codesearch" and not r["control"]:
            return {**r, "cost_usd": None, "cost_unknown_reason": "no price for m2"}
        return r

    r = build_report(records(8, 2, control=3, edit=unpriced),
                     Settings(resamples=400, breakdown_resamples=200))
    assert r.verdict == "invalid" and r.exclusions.unknown_cost_runs
    md = render_markdown(r)
    page = html.unescape(re.sub(r"<[^>]+>", "", render_html(r)))
    for text in (md, page):
        assert "no run reached the agent" not in text
        assert "no run of known cost" in text
    # an arm none of whose runs reached the agent still says so
    def infra(rec: dict[str, object]) -> dict[str, object]:
        return {**rec, "outcome": "infra_error"} if rec["arm"] == "codesearch" else rec

    r2 = build_report(records(8, 2, control=3, edit=lambda rec: infra(rec) if not rec["control"]
                              else rec), Settings(resamples=400, breakdown_resamples=200))
    assert "no run reached the agent" in render_markdown(r2)
