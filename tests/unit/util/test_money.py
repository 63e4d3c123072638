"""A nonzero amount of USD never prints as $0 (report.md, report.html, the comment)."""

from __future__ import annotations

import pytest

from copeca_action._util.money import usd_decimals
from copeca_action.github._markdown import value_text
from copeca_action.render._markdown import usd


@pytest.mark.parametrize(("value", "md", "comment"), [
    (0.00003, "$0.000030", "$0.000030"),  # was "$0.0000": read as an arm that spent nothing
    (0.0000346, "$0.000035", "$0.000035"),
    (1e-15, "$0.0000000000000010", "$0.0000000000000010"),
    (0.0, "$0.0000", "$0.0000"),  # a real $0 stays as it was
    (0.00012, "$0.0001", "$0.0001"),
    (0.42, "$0.4200", "$0.42"),
    (3.5, "$3.50", "$3.50"),
])
def test_amounts_keep_their_digits(value: float, md: str, comment: str) -> None:
    assert usd(value) == md
    assert value_text(value, "usd") == comment


def test_decimals_are_only_ever_added() -> None:
    assert usd_decimals(0.5, 4) == 4 and usd_decimals(0.0, 4) == 4
    assert usd_decimals(float("inf"), 2) == 2
