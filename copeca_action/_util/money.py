"""How many decimals an amount of USD needs so a nonzero amount never prints as $0.

A cost per correct of $0.00003 (a cheap local model) printed with four decimals read
"$0.0000", the very text of an arm that spent nothing. Every formatter of an amount
(report.md, report.html, the PR comment) asks here first.
"""

from __future__ import annotations

import math

MOST_DECIMALS = 30
"""Below 10⁻³⁰ USD an amount is shown with this many decimals, whatever they show."""


def usd_decimals(value: float, decimals: int) -> int:
    """`decimals`, or more for a nonzero amount that would round to zero with them: enough
    for two significant digits."""
    size = abs(value)
    if size == 0 or not math.isfinite(size) or size >= 10.0 ** -decimals:
        return decimals
    return min(MOST_DECIMALS, max(decimals, 1 - math.floor(math.log10(size))))


def usd_text(value: float) -> str:
    """A finite amount as report.md writes it: four decimals under $1 (more for an amount
    that would round to zero), two from $1. The PR comment's spend line takes it too, so
    "$0.1701" in the report is not "$0.17" in the comment beside "$0.0301 of it"."""
    return f"${value:,.{usd_decimals(value, 4)}f}" if value < 1 else f"${value:,.2f}"
