"""How many decimals a printed percentage needs so its rounding never moves it across a line
the verdict draws (0, the fail threshold, the control tolerance).

An interval's upper bound of −0.04% printed with one decimal reads "0.0%" (or "−0.0%"): the
interval seems to touch zero while the verdict says it lies below it. A lower bound of
+10.04% against a fail threshold of 10% reads "+10.0%". Every formatter of a delta (report.md,
report.html, the PR comment, the badge, the verdict's reasons) asks here first.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

MOST_DECIMALS = 10
"""Beyond this a bound sits on its line to within 10⁻¹² (as a fraction): it is printed with
this many decimals, whatever they show."""


def _side(value: float, line: float) -> int:
    return (value > line) - (value < line)


def percent_decimals(value: float, decimals: int = 1,
                     lines: Iterable[float] = (0.0,)) -> int:
    """The fewest decimals, at least `decimals`, with which `value` (a fraction: 0.1 is 10%)
    printed as a percentage lies on the same side of each of `lines` (fractions too) as the
    value itself, or on it exactly when the value is."""
    if not math.isfinite(value):
        return decimals
    # the lines as printed percentages: 0.1 × 100 is 10.000000000000002 in binary
    marks = [(round(line * 100, 9), _side(value, line)) for line in lines]
    for d in range(decimals, MOST_DECIMALS + 1):
        shown = float(f"{value * 100:.{d}f}")
        if all(_side(shown, mark) == side for mark, side in marks):
            return d
    return MOST_DECIMALS


def threshold_text(value: float) -> str:
    """A threshold (a fraction) as the percentage the user wrote: 0.1 → "10%", 0.125 →
    "12.5%" (not "12%", which would show a bound of 12.2% below it as above it)."""
    return f"{round(value * 100, 9):g}%"


def level_text(level: float) -> str:
    """A confidence level as every output names it: 0.95 → "95%", an adaptive look's
    0.9975 → "99.75%" (four significant digits: one rounding for report.md, report.html, the
    comment and the badge)."""
    return f"{level * 100:.4g}%"


def threshold_fraction(value: str | float) -> float:
    """A delta threshold as a fraction, from what a user wrote: a percentage (`"10%"` →
    0.1, `"1000%"` → 10) or a bare fraction below 1 (`0.1`). A bare number of 1 or more is
    refused (ValueError, saying what to write): `10` is meant as 10% far more often than
    as +1000%, and read as +1000% it silently turns the gate off."""
    text = value.strip() if isinstance(value, str) else ""
    if text.endswith("%"):
        try:
            return float(text[:-1]) / 100
        except ValueError:
            raise ValueError("expected a number, a percentage such as 10%, or a fraction "
                             "such as 0.10") from None
    try:
        number = float(text or value)
    except (TypeError, ValueError):
        raise ValueError("expected a number, a percentage such as 10%, or a fraction such "
                         "as 0.10") from None
    if number >= 1:
        shown = f"{number:g}"
        fraction = f" (or {number / 100:g})" if number < 100 else ""
        raise ValueError(f"a bare {shown} is ambiguous (a bare number is a fraction: 0.10 is "
                         f"+10%): write {shown}%{fraction} for +{shown}%, or "
                         f"{number * 100:g}% if you mean +{number * 100:g}%")
    return number
