"""The trend of cost per correct over a history of runs: an inline SVG (one line per arm, its
confidence band, releases marked) and a self-contained history page.

A renderer: it takes the history as its own input (the GitHub layer keeps it, see
github/_history.py; a Report never reads it) and formats; it computes no statistic.
"""

from __future__ import annotations

import base64
import hashlib
import math
from collections.abc import Sequence
from dataclasses import dataclass, field

from markupsafe import Markup, escape

from copeca_action._util.percent import level_text
from copeca_action.render._markdown import usd
from copeca_action.render._svg import PALETTE, Scale, _f
from copeca_action.render._templates import asset, environment, without_bidi

WIDTH, HEIGHT = 480, 300
"""User units of the trend's viewBox: narrow, so its text stays legible on a 390 px phone."""
LEFT, RIGHT, TOP, BOTTOM = 66, 14, 30, 62


@dataclass(frozen=True)
class TrendArm:
    """One arm's cost per correct in one run, with the interval the run's report gave."""

    arm: str
    cpc: float | None
    """None: unknown (no run reached the agent); ∞: nothing correct."""
    low: float | None = None
    high: float | None = None


@dataclass(frozen=True)
class TrendRun:
    """One run of the history, oldest first in a sequence."""

    commit: str
    date: str
    """ISO date (or date-time) of the run."""
    verdict: str
    arms: Sequence[TrendArm]
    release: str | None = None
    """The release tag when the run was a release's; marked on the chart."""
    delta: float | None = None
    delta_low: float | None = None
    delta_high: float | None = None
    delta_level: float | None = None
    """The level of [delta_low, delta_high]; None: not recorded (an older history entry)."""
    accuracy: dict[str, float | None] = field(default_factory=dict)
    spend_usd: float | None = None
    simulated: bool = False
    run_url: str | None = None
    bundle_sha256: str | None = None
    scenario_digest: str | None = None


def _finite(v: float | None) -> float | None:
    return v if v is not None and math.isfinite(v) and v > 0 else None


def trend_svg(runs: Sequence[TrendRun], title: str = "Cost per correct answer over time"
              ) -> Markup | None:
    """Per arm a line through its cost per correct and a band over its interval; x is the
    run's place in the history, releases are dashed verticals with their tag. None when no
    run has a finite value."""
    values = [f for r in runs for a in r.arms for v in (a.cpc, a.low, a.high)
              if (f := _finite(v)) is not None]
    if not values or not runs:
        return None
    lo, hi = min(values), max(values)
    pad = (hi - lo) * 0.08 or hi * 0.1 or 1.0
    y = Scale(max(0.0, lo - pad), hi + pad, HEIGHT - BOTTOM, TOP)
    n = len(runs)
    x = Scale(0, max(n - 1, 1), LEFT + 8, WIDTH - RIGHT - 8)
    arms = list(dict.fromkeys(a.arm for r in runs for a in r.arms))
    out = [f'<svg class="chart trend" data-chart="trend" viewBox="0 0 {WIDTH} {HEIGHT}" role="img" '
           f'aria-labelledby="trend-title" xmlns="http://www.w3.org/2000/svg">',
           f'<title id="trend-title">{escape(title)}</title>']
    for t in y.ticks(4):
        out.append(f'<line class="grid" x1="{LEFT}" x2="{WIDTH - RIGHT}" y1="{_f(y(t))}" '
                   f'y2="{_f(y(t))}"/>')
        out.append(f'<text class="tick" x="{LEFT - 6}" y="{_f(y(t) + 4)}" '
                   f'text-anchor="end">{escape(usd(t))}</text>')
    for i, r in enumerate(runs):
        if r.release:
            out.append(f'<line class="ref release" x1="{_f(x(i))}" x2="{_f(x(i))}" y1="{TOP}" '
                       f'y2="{HEIGHT - BOTTOM}"/>')
            out.append(f'<text class="reflabel" x="{_f(x(i))}" y="{TOP - 8}" '
                       f'text-anchor="middle">{escape(r.release[:14])}</text>')
    step = max(1, math.ceil(n / 6))  # at most ~6 commit labels: legible at 390 px
    for i, r in enumerate(runs):
        if i % step == 0 or i == n - 1:
            out.append(f'<text class="tick" x="{_f(x(i))}" y="{HEIGHT - BOTTOM + 16}" '
                       f'text-anchor="middle">{escape(r.commit[:7])}</text>')
    for k, arm in enumerate(arms):
        cls = f"c{k % PALETTE}"
        points = [(i, a) for i, r in enumerate(runs) for a in r.arms if a.arm == arm]
        band = [(i, a) for i, a in points if _finite(a.low) and _finite(a.high)]
        if len(band) >= 2:
            upper = " ".join(f"{_f(x(i))},{_f(y(a.high or 0))}" for i, a in band)
            lower = " ".join(f"{_f(x(i))},{_f(y(a.low or 0))}" for i, a in reversed(band))
            out.append(f'<polygon class="band {cls}" points="{upper} {lower}"/>')
        for i, a in band:
            out.append(f'<line class="ci {cls}" x1="{_f(x(i))}" x2="{_f(x(i))}" '
                       f'y1="{_f(y(a.low or 0))}" y2="{_f(y(a.high or 0))}"/>')
        line = [(i, a) for i, a in points if _finite(a.cpc) is not None]
        if len(line) >= 2:
            path = " ".join(f"{_f(x(i))},{_f(y(a.cpc or 0))}" for i, a in line)
            out.append(f'<polyline class="mark line {cls}" points="{path}"/>')
        for i, a in line:
            label = f"{arm} at {runs[i].commit[:7]}: {usd(a.cpc)}"
            if _finite(a.low) and a.high is not None:
                label += f" [{usd(a.low)}, {usd(a.high)}]"
            sim = " simulated" if runs[i].simulated else ""
            if sim:  # a hollow point: the scripted model answered, it measures nothing
                label += " (simulated: the scripted model answered)"
            out.append(f'<circle class="mark est {cls}{sim}" cx="{_f(x(i))}" '
                       f'cy="{_f(y(a.cpc or 0))}" r="3.5"><title>{escape(label)}</title></circle>')
        lx = LEFT + (k % 2) * 200
        ly = HEIGHT - 22 + (k // 2) * 16
        out.append(f'<line class="legend {cls}" x1="{lx}" x2="{lx + 18}" y1="{ly - 4}" '
                   f'y2="{ly - 4}"/><text x="{lx + 24}" y="{ly}">{escape(arm[:26])}</text>')
    out.append("</svg>")
    return Markup("".join(out))


def render_history_html(runs: Sequence[TrendRun], *, title: str = "copeca-action history",
                        badge_url: str | None = None) -> str:
    """A self-contained page: the trend chart and one row per run, newest first."""
    script = asset("report.js")
    digest = base64.b64encode(hashlib.sha256(script.encode()).digest()).decode()
    arms = list(dict.fromkeys(a.arm for r in runs for a in r.arms))
    return without_bidi(environment().get_template("history.html.j2").render(
        title=title, chart=trend_svg(runs), runs=list(reversed(runs)), arms=arms,
        simulated=any(r.simulated for r in runs), badge_url=badge_url,
        style=Markup(asset("report.css")), script=Markup(script), script_hash=digest,
        level=level_text))
