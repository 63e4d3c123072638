"""The HTML report without a browser: structure, escaping, self-containment, chart marks."""

from __future__ import annotations

import base64
import datetime as dt
import hashlib
import math
import re
from collections import Counter
from html.parser import HTMLParser

import pytest
from html_cases import CASES, HOSTILE, Case, _report, demo, records

from copeca_action.render import CoverageCurve, render_html, report_files, run_points
from copeca_action.render._svg import DOT_LIMIT, Scale, quartiles
from copeca_action.report import Report


class Page(HTMLParser):
    """Counts `.mark` elements per chart, and collects tags and attributes."""

    def __init__(self, text: str) -> None:
        super().__init__(convert_charrefs=True)
        self.marks: Counter[str] = Counter()
        self.tags: Counter[str] = Counter()
        self.attrs: list[tuple[str, str, str]] = []
        self.chart = ""
        self.data: list[str] = []
        self.feed(text)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k: v or "" for k, v in attrs}
        self.tags[tag] += 1
        self.attrs += [(tag, k, v) for k, v in a.items()]
        if tag == "svg":
            self.chart = a.get("data-chart", "")
            self.marks[self.chart] += 0  # a chart with no marks is still a chart
        if "mark" in a.get("class", "").split():
            self.marks[self.chart] += 1

    def handle_data(self, data: str) -> None:
        self.data.append(data)


def render(case: Case) -> str:
    return render_html(case.report, **case.kwargs())


@pytest.mark.parametrize("name", sorted(CASES))
def test_each_chart_draws_the_marks_its_report_implies(name: str) -> None:
    case = CASES[name]()
    assert dict(Page(render(case)).marks) == case.marks


def test_nothing_is_loaded_from_anywhere() -> None:
    text = render(demo())
    page = Page(text)
    assert not {"link", "img", "iframe", "object", "embed"} & set(page.tags)
    assert [a for a in page.attrs if a[1] in ("src", "href") and not a[2].startswith("#")] == []
    assert "http://" not in text and "https://" not in text and "@import" not in text
    assert "url(" not in text.replace('url(#arrowhead)', "")
    assert page.tags["script"] == 1


def test_the_policy_allows_exactly_the_inline_script() -> None:
    text = render(demo())
    script = re.search(r"<script>(.*?)</script>", text, re.S)
    assert script is not None
    digest = base64.b64encode(hashlib.sha256(script.group(1).encode()).digest()).decode()
    assert f"default-src 'none'; style-src 'unsafe-inline'; script-src 'sha256-{digest}'" in text


def test_hostile_text_is_escaped_everywhere() -> None:
    text = render(CASES["hostile"]())
    page = Page(text)
    assert page.tags["script"] == 1 and "img" not in page.tags
    assert not any(k.startswith("on") for _, k, _ in page.attrs)
    assert "<script>alert" not in text and "<img src=x" not in text
    shown = "".join(page.data)
    assert HOSTILE in shown  # kept as text, intact (the template did not evaluate {{ 7*7 }})
    assert shown.count(HOSTILE) >= 6


BIDI = "\u202e\u2066\u200f\u061c"


def test_bidi_controls_are_dropped_from_the_page() -> None:
    """U+202E in a task id or arm name would show the rest of its tooltip or warning right to
    left (`$1.68` read as `86.1$`); the page keeps the text and drops the controls."""
    from copeca_action.render import TrendArm, TrendRun, render_history_html

    def edit(r: dict[str, object]) -> dict[str, object]:
        return {**r, "task_id": f"{r['task_id']}{BIDI}", "category": f"c{BIDI}",
                "arm": f"tool{BIDI}" if r["arm"] == "codesearch" else r["arm"]}

    recs = records(8, 2, edit=edit)
    report = _report(recs, (f"warn{BIDI} 12.5%",), f"scen{BIDI}")
    text = render_html(report, runs=run_points(recs), scenario_yaml=f"a: b{BIDI}")
    assert not set(BIDI) & set(text)
    assert "tool" in text and "warn 12.5%" in text
    page = render_history_html([TrendRun("ab" * 20, "2026-01-01", "inconclusive",
                                         [TrendArm(f"tool{BIDI}", 1.0, 0.5, 2.0)],
                                         release=f"v1{BIDI}")], title=f"t{BIDI}")
    assert not set(BIDI) & set(page) and "tool" in page


def test_infinite_cost_per_correct_is_an_arrow_at_the_edge() -> None:
    case = CASES["infinite"]()
    assert math.isinf(case.report.arms[1].cpc_usd)
    text = render(case)
    assert "+∞ [" in text
    assert re.search(r'<path class="est" d="M[\d.]+ [\d.]+l-9 -6v12z"/>', text)
    assert 'data-v="Infinity">∞<' in text  # the arms table sorts ∞ last


def test_one_arm_only_has_no_comparison_charts_but_still_renders() -> None:
    case = CASES["one_arm"]()
    page = Page(render(case))
    assert set(page.marks) == {"costs", "spend"}
    assert "forest" not in "".join(v for _, k, v in page.attrs if k == "data-chart")


def test_no_control_tasks_means_no_control_row() -> None:
    text = render(CASES["no_control"]())
    assert "control tasks (should be" not in text
    assert "control tasks (should be" in render(demo())


def test_many_tasks_stay_compact() -> None:
    case = CASES["many_tasks"]()
    text = render(case)
    assert len(case.report.comparisons[0].tasks) == 520
    assert len(text.encode()) < 1_000_000  # 2,080 runs: dots are dropped above DOT_LIMIT
    assert 'class="dot' not in text and len(case.runs) / 2 > DOT_LIMIT


def test_tables_carry_the_numbers_the_charts_show() -> None:
    case = demo()
    text = render(case)
    costs = [p.cost_usd for p in case.runs if p.arm == "baseline"]
    _, _, median, _, _ = quartiles(costs)
    assert f'data-v="{median}"' in text
    c = case.report.comparisons[0]
    assert f'data-v="{c.delta.low}"' in text and f'data-v="{c.delta.high}"' in text
    for arm in case.report.arms:
        assert f'data-v="{arm.spend_usd}"' in text


def test_verification_block_says_signed_or_unsigned() -> None:
    case = demo()
    assert f"signed by keyid <code>{'cd' * 32}</code>" in render(case)
    unsigned = render_html(case.report, runs=case.runs)
    assert "<strong>unsigned</strong>" in unsigned and "not in this file" in unsigned
    assert "not given" not in unsigned  # it read like a failed check


def test_light_dark_and_print_schemes_exist() -> None:
    text = render(demo())
    assert "@media (prefers-color-scheme: dark)" in text and "@media print" in text
    assert '<meta name="color-scheme" content="light dark">' in text


def test_coverage_curve_keeps_a_finished_runs_last_value() -> None:
    c = CoverageCurve.from_runs("a", [[0.2, 0.6], [0.4, 0.4, 1.0], []])
    assert c.coverage_by_step == pytest.approx([0.2, 1.0 / 3, (0.6 + 1.0) / 3])
    assert c.runs == 3


def test_run_points_keep_the_last_record_of_a_run_id_and_parse_times() -> None:
    rows = [{"run_id": "r", "task_id": "t", "arm": "a", "outcome": "infra_error"},
            {"run_id": "r", "task_id": "t", "arm": "a", "outcome": "ok", "cost_usd": 2.0,
             "started_at": "2026-11-21T09:00:00Z"},
            {"run_id": "s", "task_id": "t", "arm": "a", "outcome": "budget_stop"}]
    points = run_points(rows)
    assert [(p.cost_usd, p.reached) for p in points] == [(2.0, True), (0.0, False)]
    assert points[0].started_at == dt.datetime(2026, 11, 21, 9, tzinfo=dt.UTC)
    assert run_points(records(2, 1))[0].started_at is not None


def test_spend_without_start_times_is_drawn_by_run_order() -> None:
    case = demo()
    runs = [p.model_copy(update={"started_at": None}) for p in case.runs]
    text = render_html(case.report, runs=runs)
    assert "runs, in record order" in text and "minutes since" not in text


def test_scales_and_quartiles() -> None:
    assert quartiles([4.0, 1.0, 3.0, 2.0, 5.0]) == (1.0, 2.0, 3.0, 4.0, 5.0)
    s = Scale(0.1, 10.0, 0.0, 100.0, log=True)
    assert s(1.0) == pytest.approx(50.0) and s(0.0) == 0.0 and s(1e9) == 100.0
    assert Scale(0.0, 1.0, 0.0, 1.0).ticks(4) == pytest.approx([0.0, 0.25, 0.5, 0.75, 1.0])
    assert 1.0 in s.ticks()


def test_report_files_are_the_three_forms_a_bundle_carries() -> None:
    case = demo()
    files = report_files(case.report, runs=case.runs, keyid="k1")
    assert set(files) == {"report.json", "report.md", "report.html"}
    assert Report.model_validate_json(files["report.json"]) == case.report
    assert b"signed by keyid <code>k1</code>" in files["report.html"]


def test_arm_table_shows_each_arms_intervals() -> None:
    case = CASES["infinite"]()
    text = render_html(case.report, **case.kwargs())
    table = text[text.index('id="arms-table"'):]
    table = table[:table.index("</table>")]
    assert "cost per correct (95% CI)" in table and "accuracy (95% CI)" in table
    tool = next(a for a in case.report.arms if a.arm == "codesearch")
    base = next(a for a in case.report.arms if a.arm == "baseline")
    assert tool.interval is not None and tool.interval.cpc_low is not None
    assert f"≥ ${tool.interval.cpc_low:,.2f} (nothing correct)" in table
    assert base.interval is not None and base.interval.cpc_high is not None
    assert base.interval.cpc_low is not None
    from copeca_action.render._markdown import usd

    assert f"{usd(base.interval.cpc_low)} – {usd(base.interval.cpc_high)}" in table
    assert "nan" not in table.lower()


def test_a_simulated_run_is_marked_in_the_trend_chart() -> None:
    """The history's chart draws every run; a scripted model's point is hollow and its
    tooltip says simulated, as the table beside it does."""
    from copeca_action.render import TrendArm, TrendRun, render_history_html

    runs = [TrendRun(c * 40, f"2026-01-0{i + 1}", "inconclusive",
                     [TrendArm("tool", 1.0 + i, 0.5, 3.0)], simulated=(c == "b"))
            for i, c in enumerate("abc")]
    page = render_history_html(runs)
    points = re.findall(r'<circle class="mark est ([^"]*)"[^>]*><title>([^<]*)</title>', page)
    assert [("simulated" in cls.split(), "simulated" in tip) for cls, tip in points] == [
        (False, False), (True, True), (False, False)]
    assert ".est.simulated" in page


def test_a_simulated_reports_page_title_says_so() -> None:
    """The browser tab and a saved page's name show the title, not the banner."""
    def scripted(r: dict[str, object]) -> dict[str, object]:
        return {**r, "endpoint": "scripted"}

    recs = records(6, 2, edit=scripted)
    report = _report(recs, (), "s")
    assert report.simulated
    title = re.search(r"<title>([^<]*)</title>", render_html(report))
    assert title is not None and f"(simulated {report.verdict})" in title.group(1)
    real = _report(records(6, 2, edit=lambda r: {**r, "endpoint": "real"}), (), "s")
    assert "simulated" not in re.findall(r"<title>([^<]*)</title>", render_html(real))[0]
