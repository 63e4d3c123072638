"""The PR comment's mermaid chart: readable or absent, never broken by user text."""

from __future__ import annotations

from html_cases import CASES, HOSTILE

from copeca_action.render import mermaid_chart
from copeca_action.render._mermaid import MAX_ARMS


def test_bars_show_each_arms_cost_per_correct() -> None:
    report = CASES["demo"]().report
    text = mermaid_chart(report)
    assert text.startswith("```mermaid\nxychart-beta\n") and text.endswith("```\n")
    assert 'x-axis ["baseline", "codesearch"]' in text
    bars = [a.cpc_usd for a in report.arms]
    assert f"bar [{bars[0]:.2f}, {bars[1]:.2f}]" in text


def test_an_arm_with_nothing_correct_is_named_not_drawn_as_infinity() -> None:
    text = mermaid_chart(CASES["infinite"]().report)
    assert '"codesearch (none correct)"' in text and "inf" not in text.lower()


def test_user_text_cannot_break_the_chart() -> None:
    text = mermaid_chart(CASES["hostile"]().report)
    axis = next(line for line in text.splitlines() if "x-axis" in line)
    assert axis.count('"') == 4 and "<" not in axis and "]" not in axis[:-1]
    assert HOSTILE not in text


def test_too_many_arms_or_nothing_finite_gives_no_chart() -> None:
    report = CASES["demo"]().report
    many = report.model_copy(update={"arms": [report.arms[0].model_copy(
        update={"arm": f"arm{i}"}) for i in range(MAX_ARMS + 1)]})
    assert mermaid_chart(many) == ""
    none = report.model_copy(update={"arms": [a.model_copy(update={"cpc_usd": float("inf")})
                                              for a in report.arms]})
    assert mermaid_chart(none) == ""
