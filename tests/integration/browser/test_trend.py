"""A history of three runs (and a release) in a real browser: the trend chart draws one
point per arm and run with its band, on the history page and inside the report, with no
request and no error, and stays legible on a 390 px phone."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from cdp import Browser
from html_cases import records

from copeca_action.github import History, history_entry
from copeca_action.github._history import trend_runs
from copeca_action.render import render_history_html, render_html
from copeca_action.report import Report, Settings, build_report

TREND_MARKS = "document.querySelectorAll('svg.trend .mark.est').length"
TREND_BANDS = "document.querySelectorAll('svg.trend .band').length"
SMALLEST_TEXT = """Math.min(...Array.from(document.querySelectorAll('svg.trend text'),
  t => t.getBoundingClientRect().height))"""


def _report(ratio: float, seed: int) -> Report:
    return build_report(records(8, 2, ratio=ratio, control=2, seed=seed),
                        Settings(resamples=300, breakdown_resamples=100))


def _history() -> History:
    entries = []
    for i, (ratio, tag) in enumerate(((1.0, None), (0.85, "v1.2.0"), (0.7, None))):
        entries.append(history_entry(
            _report(ratio, seed=i), commit=f"{i + 1}" * 40,
            date=dt.datetime(2026, 11, 1 + i, tzinfo=dt.UTC), event="push", tag=tag,
            bundle_sha256="cd" * 32, scenario_digest="ab" * 32,
            run_url=f"https://github.com/o/r/actions/runs/{i}"))
    return History(entries=entries)


def _check(browser: Browser, path: Path, shots: str) -> None:
    loaded = browser.load(path)
    assert loaded.errors == []
    assert loaded.requests == [path.resolve().as_uri()]
    assert browser.evaluate(TREND_MARKS) == 6  # three runs, two arms
    assert browser.evaluate(TREND_BANDS) == 2
    assert browser.evaluate("document.querySelectorAll('svg.trend .release').length") == 1
    for width in (390, 1280):
        browser.screenshot(path.parent / f"{shots}-{width}.png", width=width)
        assert browser.evaluate("document.documentElement.scrollWidth <= "
                                "window.innerWidth + 1"), width
        assert browser.evaluate(SMALLEST_TEXT) >= 9.5, width  # legible on a phone


def test_history_page_draws_the_trend_of_three_runs(browser: Browser, tmp_path: Path) -> None:
    page = tmp_path / "history.html"
    page.write_text(render_history_html(trend_runs(_history()), title="o/r: copeca"),
                    encoding="utf-8")
    _check(browser, page, "history")
    rows = browser.evaluate("document.querySelectorAll('#history-table tbody tr').length")
    assert rows == 3


def test_the_report_carries_the_trend_when_given_a_history(browser: Browser,
                                                           tmp_path: Path) -> None:
    page = tmp_path / "report.html"
    page.write_text(render_html(_report(0.7, seed=2), trend=trend_runs(_history())),
                    encoding="utf-8")
    _check(browser, page, "report")


def test_every_chart_is_legible_at_390_px(browser: Browser, tmp_path: Path) -> None:
    """On a phone a chart keeps a readable width and scrolls inside its figure; the page
    does not scroll sideways."""
    from html_cases import CASES

    case = CASES["demo"]()
    page = tmp_path / "report.html"
    page.write_text(render_html(case.report, **case.kwargs(), trend=trend_runs(_history())),
                    encoding="utf-8")
    assert browser.load(page).errors == []
    browser.screenshot(tmp_path / "demo-390.png", width=390)
    assert browser.evaluate("document.documentElement.scrollWidth <= window.innerWidth + 1")
    smallest = """Math.min(...Array.from(document.querySelectorAll('svg.chart text'),
      t => t.getBoundingClientRect().height).filter(h => h > 0))"""
    assert browser.evaluate(smallest) >= 9.5
