"""A small mermaid bar chart of cost per correct per arm, for the PR comment (GitHub renders
mermaid). Left out when it would not stay readable."""

from __future__ import annotations

import math
import re

from copeca_action.report import Report

MAX_ARMS = 6
"""More bars than this and the labels collide in a comment's width."""
_UNSAFE = re.compile(r'["\\`<>&\[\]\n\r;#%{}]')


def _label(name: str) -> str:
    """Arm names are user text: keep them to characters mermaid cannot misread."""
    clean = _UNSAFE.sub("", name).strip()[:24]
    return clean or "arm"


def mermaid_chart(report: Report) -> str:
    """A fenced ```mermaid xychart of each arm's cost per correct over all its tasks (controls
    included, unlike the headline table's rows), or "" when there is nothing readable to draw
    (no arm with a finite cost per correct, or too many arms)."""
    arms = [(a.arm, a.cpc_usd) for a in report.arms if a.runs > 0 and a.cpc_usd is not None]
    if not arms or len(arms) > MAX_ARMS or not any(math.isfinite(cpc) for _, cpc in arms):
        return ""
    names = [_label(arm) + ("" if math.isfinite(cpc) else " (none correct)")
             for arm, cpc in arms]
    values = [cpc if math.isfinite(cpc) else 0.0 for _, cpc in arms]
    top = max(values) * 1.15 or 1.0
    digits = 4 if top < 1 else 2
    xs = ", ".join(f'"{n}"' for n in names)
    bars = ", ".join(f"{v:.{digits}f}" for v in values)
    return ("```mermaid\nxychart-beta\n"
            '    title "Cost per correct answer, all tasks with controls (USD)"\n'
            f"    x-axis [{xs}]\n"
            f'    y-axis "USD per correct answer" 0 --> {top:.{digits}f}\n'
            f"    bar [{bars}]\n```\n")
