"""Printed percentages keep their side of the lines a verdict draws."""

from __future__ import annotations

import math

import pytest

from copeca_action._util.percent import MOST_DECIMALS, percent_decimals, threshold_text


@pytest.mark.parametrize(("value", "lines", "decimals"), [
    (-0.182, (0.0,), 1),  # ordinary numbers keep one decimal
    (0.0, (0.0,), 1),
    (-0.0004, (0.0,), 2),  # −0.04%: one decimal reads −0.0%
    (0.00004, (0.0,), 3),
    (0.1004, (0.0, 0.1), 2),  # +10.04% against a fail threshold of 10%
    (0.1, (0.0, 0.1), 1),  # on the line: shown on it
    (0.0996, (0.0, 0.1), 2),
    (-0.1496, (-0.15, 0.0, 0.15), 2),  # −15.0% would touch the control tolerance
    (-0.14996, (-0.15, 0.0, 0.15), 3),
    (math.inf, (0.0,), 1),
    (-1e-14, (0.0,), MOST_DECIMALS),
])
def test_the_fewest_decimals_that_keep_each_side(value: float, lines: tuple[float, ...],
                                                  decimals: int) -> None:
    assert percent_decimals(value, 1, lines) == decimals


def test_shown_with_those_decimals_the_value_is_on_its_side_of_every_line() -> None:
    for value in (-0.0004, 0.1004, 0.09996, -0.1500001, 0.149999, 1e-9, -0.5):
        lines = (-0.15, 0.0, 0.1, 0.15)
        shown = float(f"{value * 100:.{percent_decimals(value, 1, lines)}f}") / 100
        for line in lines:
            assert (shown > line) == (value > line) and (shown < line) == (value < line)


def test_thresholds_are_printed_as_written() -> None:
    assert [threshold_text(t) for t in (0.1, 0.05, 0.125, 0.15, 1.0)] == [
        "10%", "5%", "12.5%", "15%", "100%"]


def test_a_level_is_named_one_way() -> None:
    from copeca_action._util.percent import level_text

    assert [level_text(x) for x in (0.95, 0.9975, 0.998, 0.99)] == [
        "95%", "99.75%", "99.8%", "99%"]
