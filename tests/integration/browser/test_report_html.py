"""The HTML report in a real browser: opened from a file, nothing fetched, no console error,
every chart drawn with the marks its Report implies, tables sortable, readable without JS."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cdp import Browser
from html_cases import CASES, HOSTILE, Case

from copeca_action.render import render_html

COUNT_MARKS = """JSON.stringify(Object.fromEntries(Array.from(
  document.querySelectorAll('svg[data-chart]'),
  s => [s.dataset.chart, s.querySelectorAll('.mark').length])))"""


def open_case(browser: Browser, case: Case, out: Path) -> tuple[Path, list[str]]:
    path = out / "report.html"
    path.write_text(render_html(case.report, **case.kwargs()), encoding="utf-8")
    loaded = browser.load(path)
    assert loaded.errors == []
    assert loaded.requests == [path.resolve().as_uri()]  # the file itself and nothing else
    return path, loaded.requests


@pytest.mark.parametrize("name", sorted(CASES))
def test_every_chart_draws_its_marks_without_errors_or_requests(
        browser: Browser, name: str, tmp_path: Path) -> None:
    case = CASES[name]()
    open_case(browser, case, tmp_path)
    assert json.loads(browser.evaluate(COUNT_MARKS)) == case.marks
    # every figure has a table with the same rows, and no chart overflows its page width
    tables = browser.evaluate("document.querySelectorAll('section.figure table').length")
    assert tables == len(case.marks) + ("capabilities" not in case.marks and "scatter" in
                                         case.marks)
    assert browser.evaluate("document.documentElement.scrollWidth <= window.innerWidth + 1")
    browser.screenshot(tmp_path / f"{name}.png")


def test_demo_screenshots_light_dark_and_print(browser: Browser, tmp_path: Path) -> None:
    case = CASES["demo"]()
    open_case(browser, case, tmp_path)
    for shot, kw in (("light", {}), ("dark", {"dark": True}), ("print", {"media": "print"})):
        png = browser.screenshot(tmp_path / f"demo-{shot}.png", **kw)  # type: ignore[arg-type]
        assert png.stat().st_size > 10_000
    background = "getComputedStyle(document.documentElement).backgroundColor"
    dark = [{"name": "prefers-color-scheme", "value": "dark"}]
    browser.call("Emulation.setEmulatedMedia", media="", features=dark)
    assert browser.evaluate(background) == "rgb(15, 20, 25)"
    browser.call("Emulation.setEmulatedMedia", media="print", features=dark)
    assert browser.evaluate(background) == "rgb(255, 255, 255)"  # print is always light
    assert browser.evaluate("getComputedStyle(document.querySelector('nav')).display") == "none"


def test_hostile_text_stays_text(browser: Browser, tmp_path: Path) -> None:
    case = CASES["hostile"]()
    open_case(browser, case, tmp_path)
    assert browser.evaluate("document.scripts.length") == 1  # ours
    assert browser.evaluate("document.querySelectorAll('img, [onerror]').length") == 0
    assert browser.evaluate("document.title").startswith(f"copeca-action: {HOSTILE}")
    text = browser.evaluate("document.body.innerText")
    assert HOSTILE in text and "{{ 7*7 }}" in text and "49" not in text.split(HOSTILE)[0][-5:]


def test_tables_sort_on_click_and_charts_render_without_javascript(
        browser: Browser, tmp_path: Path) -> None:
    case = CASES["larger"]()
    path, _ = open_case(browser, case, tmp_path)
    first_col = """Array.from(document.querySelectorAll('#task-table tbody tr'),
                  r => r.cells[1].dataset.v ? Number(r.cells[1].dataset.v) : null)"""
    browser.evaluate("document.querySelector('#task-table thead th:nth-child(2) button')"
                     ".click()")
    up = [v for v in browser.evaluate(first_col) if v is not None]
    assert up == sorted(up) and len(up) > 10
    browser.evaluate("document.querySelector('#task-table thead th:nth-child(2) button')"
                     ".click()")
    down = [v for v in browser.evaluate(first_col) if v is not None]
    assert down == sorted(down, reverse=True)
    cpc_tool = """Array.from(document.querySelectorAll('#forest-table tbody tr'),
                  r => r.cells[2].textContent)"""
    for _ in range(2):  # ascending, then descending: blank cells stay last both ways
        browser.evaluate("document.querySelector('#forest-table thead th:nth-child(3) button')"
                         ".click()")
        cells = browser.evaluate(cpc_tool)
        assert cells[0].startswith("$") and cells[1:] == ["", ""]
    browser.call("Emulation.setScriptExecutionDisabled", value=True)
    try:
        loaded = browser.load(path)
        assert loaded.errors == []
        assert browser.evaluate("document.querySelectorAll('th button').length") == 0
        assert json.loads(browser.evaluate(COUNT_MARKS)) == case.marks
        assert browser.evaluate("document.querySelectorAll('#task-table tbody tr').length") \
            == len(case.report.comparisons[0].tasks)
        browser.screenshot(tmp_path / "no-js.png")
    finally:
        browser.call("Emulation.setScriptExecutionDisabled", value=False)
