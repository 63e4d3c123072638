"""Charts as inline SVG strings: plain shapes, CSS classes for colour, no scripts, no fonts.

Every drawn datum carries the class `mark` (tests count them); colours come from the page's
stylesheet (`c0`…`c7` per arm), so light, dark and print schemes need no second drawing.
Text is escaped here because these strings reach the template as Markup.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from markupsafe import Markup, escape

PALETTE = 8
"""Colour classes c0..c7; arms beyond that reuse them in order."""
DENSE = 60
"""Above this many tasks the scatter's arrows fade so the points stay readable."""
DOT_LIMIT = 400
"""Above this many runs in one arm the cost distribution draws only the box."""


def _f(x: float) -> str:
    return f"{x:.1f}".rstrip("0").rstrip(".")


@dataclass(frozen=True)
class Scale:
    """Maps a domain to pixels, linearly or on log10 (values ≤ 0 clamp to the low end)."""

    lo: float
    hi: float
    p0: float
    p1: float
    log: bool = False

    def __call__(self, v: float) -> float:
        lo, hi, x = self.lo, self.hi, v
        if self.log:
            lo, hi, x = math.log10(lo), math.log10(hi), math.log10(max(v, self.lo))
        t = 0.5 if hi == lo else (x - lo) / (hi - lo)
        t = min(max(t, 0.0), 1.0)
        return self.p0 + t * (self.p1 - self.p0)

    def ticks(self, n: int = 5) -> list[float]:
        if self.log:
            out = []
            for k in range(math.floor(math.log10(self.lo)), math.ceil(math.log10(self.hi)) + 1):
                for m in (1, 2, 5):
                    v = m * 10.0**k
                    if self.lo <= v * (1 + 1e-9) and v <= self.hi * (1 + 1e-9):
                        out.append(v)
            if len(out) > 8:
                out = [v for v in out if f"{v:.0e}".startswith("1")]
            return out or [self.lo, self.hi]
        span = self.hi - self.lo
        if span <= 0:
            return [self.lo]
        raw = span / n
        mag = 10.0 ** math.floor(math.log10(raw))
        step = next(m * mag for m in (1, 2, 2.5, 5, 10) if m * mag >= raw)
        first = math.ceil(self.lo / step - 1e-9) * step
        return [first + i * step for i in range(int((self.hi - first) / step + 1e-9) + 1)]


def log_domain(values: Sequence[float]) -> tuple[float, float]:
    """A log axis around the positive values (a decade when there is only one)."""
    pos = [v for v in values if v > 0 and math.isfinite(v)]
    if not pos:
        return 0.01, 1.0
    lo, hi = min(pos), max(pos)
    if hi / lo < 10:
        mid = math.sqrt(lo * hi)
        lo, hi = min(lo, mid / math.sqrt(10)), max(hi, mid * math.sqrt(10))
    return lo / 1.15, hi * 1.15


def _svg(kind: str, width: int, height: int, title: str, body: list[str],
         extra_class: str = "") -> Markup:
    t = escape(title)
    return Markup(
        f'<svg class="chart{extra_class}" data-chart="{kind}" '
        f'viewBox="0 0 {width} {height}" role="img" aria-label="{t}" '
        f'preserveAspectRatio="xMinYMin meet"><title>{t}</title>' + "".join(body) + "</svg>")


def money(v: float) -> str:
    """Axis ticks in USD: short, and zero is "$0"."""
    if v == 0:
        return "$0"
    if v < 0.01:
        return f"${v:.4f}".rstrip("0")
    if v < 10:
        return f"${v:.2f}"
    return f"${v:,.0f}"


def clip(s: str, n: int) -> str:
    """Long labels end in an ellipsis (the full text is in the mark's tooltip and table)."""
    return s if len(s) <= n else s[: n - 1] + "…"


def _text(x: float, y: float, s: str, cls: str = "", anchor: str = "start") -> str:
    c = f' class="{cls}"' if cls else ""
    return (f'<text x="{_f(x)}" y="{_f(y)}" text-anchor="{anchor}"{c}>{escape(s)}</text>')


def _x_axis(scale: Scale, y_top: float, y_bot: float, fmt: Callable[[float], str],
            label: str, ticks: Sequence[float] | None = None) -> list[str]:
    out = []
    for v in ticks if ticks is not None else scale.ticks():
        x = scale(v)
        out.append(f'<line class="grid" x1="{_f(x)}" x2="{_f(x)}" y1="{_f(y_top)}" '
                   f'y2="{_f(y_bot)}"/>')
        out.append(_text(x, y_bot + 14, fmt(v), "tick", "middle"))
    out.append(_text((scale.p0 + scale.p1) / 2, y_bot + 30, label, "axis", "middle"))
    return out


def _y_axis(scale: Scale, x_left: float, x_right: float, fmt: Callable[[float], str],
            label: str, y_mid: float) -> list[str]:
    out = []
    for v in scale.ticks(4):
        y = scale(v)
        out.append(f'<line class="grid" x1="{_f(x_left)}" x2="{_f(x_right)}" y1="{_f(y)}" '
                   f'y2="{_f(y)}"/>')
        out.append(_text(x_left - 6, y + 4, fmt(v), "tick", "end"))
    out.append(f'<text class="axis" text-anchor="middle" transform="translate(12 {_f(y_mid)}) '
               f'rotate(-90)">{escape(label)}</text>')
    return out


# ---------------------------------------------------------------- forest


@dataclass(frozen=True)
class ForestRow:
    """One interval on the ratio scale: delta = ratio − 1 (None: no estimate exists)."""

    label: str
    estimate: float | None
    low: float | None
    high: float | None
    text: str
    """The numbers, printed at the right."""
    group: str = ""
    """A heading drawn above the first row of each new group (e.g. "control tasks")."""
    cls: str = "c0"


def forest(kind: str, title: str, rows: Sequence[ForestRow], refs: Sequence[tuple[float, str]],
           label: str = "delta of cost per correct (log scale: ×2 and ÷2 are equally far)"
           ) -> Markup:
    """Deltas with intervals on a log-ratio axis; ±∞ ends are drawn as arrows at the edge."""
    width, left, right, row_h = 860, 250, 230, 26
    finite = [v for r in rows for v in (r.estimate, r.low, r.high)
              if v is not None and math.isfinite(v)] + [d for d, _ in refs] + [0.0]
    lo_r = max(min(1 + v for v in finite), 0.02)
    hi_r = min(max(1 + v for v in finite), 50.0)
    lo_r, hi_r = min(lo_r, 1 / 1.25) / 1.1, max(hi_r, 1.25) * 1.1
    sc = Scale(lo_r, hi_r, left, width - right, log=True)
    body: list[str] = []
    y = top = 10.0 + 12 * len(refs)
    placed: list[tuple[ForestRow, float, float | None]] = []
    group = None
    for r in rows:
        if r.group != group:
            if r.group:
                y += 10 if group is not None else 0
                body.append(_text(8, y + 14, r.group, "group"))
                y += 20
            group = r.group
        placed.append((r, y + row_h / 2, None))
        y += row_h
    bottom = y + 4
    ticks = [v for v in (0.25, 0.5, 0.8, 1.0, 1.25, 2.0, 4.0, 10.0, 25.0) if lo_r <= v <= hi_r]
    body += _x_axis(sc, top, bottom, lambda v: _pct(v - 1), label, ticks)
    body.append(f'<line class="zero" x1="{_f(sc(1))}" x2="{_f(sc(1))}" y1="{_f(top)}" '
                f'y2="{_f(bottom)}"/>')
    for k, (d, name) in enumerate(refs):
        x = sc(1 + d)
        body.append(f'<line class="ref" x1="{_f(x)}" x2="{_f(x)}" y1="{_f(top)}" '
                    f'y2="{_f(bottom)}"/>')
        body.append(_text(x + 3, 10 + 12 * k, name, "reflabel"))
    for r, cy, _ in placed:
        body.append(_text(8, cy + 4, clip(r.label, 38), "rowlabel"))
        body.append(_text(width - right + 10, cy + 4, r.text, "rowvalue"))
        body.append(_interval(sc, r, cy))
    return _svg(kind, width, int(bottom + 40), title, body)


def _interval(sc: Scale, r: ForestRow, cy: float) -> str:
    if r.estimate is None:
        return ""
    tip = escape(f"{r.label}: {r.text}")
    parts = [f'<g class="mark {r.cls}"><title>{tip}</title>']
    if r.low is not None and r.high is not None:
        x1, x2 = sc(1 + r.low), sc(1 + r.high)
        parts.append(f'<line class="ci" x1="{_f(x1)}" x2="{_f(x2)}" y1="{_f(cy)}" '
                     f'y2="{_f(cy)}"/>')
        if math.isinf(r.high) or 1 + r.high > sc.hi:
            parts.append(f'<path class="end" d="M{_f(x2)} {_f(cy)}l-7 -4v8z"/>')
        if 1 + r.low < sc.lo:
            parts.append(f'<path class="end" d="M{_f(x1)} {_f(cy)}l7 -4v8z"/>')
    x = sc(1 + r.estimate)
    if math.isinf(r.estimate):
        parts.append(f'<path class="est" d="M{_f(x)} {_f(cy)}l-9 -6v12z"/>')
    else:
        parts.append(f'<rect class="est" x="{_f(x - 5)}" y="{_f(cy - 5)}" width="10" '
                     'height="10"/>')
    return "".join(parts) + "</g>"


def _pct(v: float) -> str:
    return "0" if abs(v) < 1e-9 else f"{v:+.0%}"


# ---------------------------------------------------------------- scatter with arrows


@dataclass(frozen=True)
class Move:
    """One task: where the base arm sat (cost per run, accuracy) and where the tool moved it."""

    label: str
    base: tuple[float, float] | None
    tool: tuple[float, float] | None


def arrows(kind: str, title: str, moves: Sequence[Move], base_cls: str, tool_cls: str,
           fmt: Callable[[float], str]) -> Markup:
    """Per-task points, base hollow and tool filled, joined by an arrow base → tool."""
    width, height, left, bottom_pad, top = 860, 420, 70, 50, 16
    xs = [p[0] for m in moves for p in (m.base, m.tool) if p is not None]
    lo, hi = log_domain(xs)
    sx = Scale(lo, hi, left, width - 20, log=True)
    sy = Scale(0.0, 1.0, height - bottom_pad, top)
    body = _x_axis(sx, top, height - bottom_pad, money, "mean cost per run (log scale)")
    body += _y_axis(sy, left, width - 20, lambda v: f"{v:.0%}", "accuracy",
                    (height - bottom_pad + top) / 2)
    body.append('<defs><marker id="arrowhead" viewBox="0 0 8 8" refX="7" refY="4" '
                'markerWidth="7" markerHeight="7" orient="auto-start-reverse">'
                '<path d="M0 0L8 4L0 8z" class="head"/></marker></defs>')
    jitter = _jitter(len(moves))
    for i, m in enumerate(moves):
        body.append(f'<g><title>{escape(m.label)}</title>')
        dy = jitter[i]
        pb = (sx(m.base[0]), sy(m.base[1]) + dy) if m.base else None
        pt = (sx(m.tool[0]), sy(m.tool[1]) + dy) if m.tool else None
        if pb and pt:
            body.append(f'<line class="mark arrow" x1="{_f(pb[0])}" y1="{_f(pb[1])}" '
                        f'x2="{_f(pt[0])}" y2="{_f(pt[1])}" marker-end="url(#arrowhead)"/>')
        if pb:
            body.append(f'<circle class="mark pt base {base_cls}" cx="{_f(pb[0])}" '
                        f'cy="{_f(pb[1])}" r="3.5"/>')
        if pt:
            body.append(f'<circle class="mark pt tool {tool_cls}" cx="{_f(pt[0])}" '
                        f'cy="{_f(pt[1])}" r="3.5"/>')
        body.append("</g>")
    return _svg(kind, width, height, title, body, " dense" if len(moves) > DENSE else "")


def _jitter(n: int) -> list[float]:
    """Deterministic vertical spread (accuracy is a multiple of 1/reps, points pile up)."""
    return [((i * 0.618034) % 1 - 0.5) * 8 for i in range(n)]


# ---------------------------------------------------------------- distributions


@dataclass(frozen=True)
class Spread:
    label: str
    values: Sequence[float]
    cls: str


def quartiles(values: Sequence[float]) -> tuple[float, float, float, float, float]:
    """min, q1, median, q3, max (linear interpolation between order statistics)."""
    v = sorted(values)

    def q(p: float) -> float:
        pos = p * (len(v) - 1)
        i = int(pos)
        return v[i] if i + 1 >= len(v) else v[i] + (v[i + 1] - v[i]) * (pos - i)

    return v[0], q(0.25), q(0.5), q(0.75), v[-1]


def boxes(kind: str, title: str, spreads: Sequence[Spread], fmt: Callable[[float], str]
          ) -> Markup:
    """One box (quartiles, whiskers to min/max) per arm, over its runs' dots when few."""
    width, left, row_h = 860, 170, 54
    drawn = [s for s in spreads if s.values]
    lo, hi = log_domain([v for s in drawn for v in s.values])
    sc = Scale(lo, hi, left, width - 20, log=True)
    top, bottom = 10.0, 10.0 + row_h * max(len(drawn), 1)
    body = _x_axis(sc, top, bottom, money, "cost of one run (log scale)")
    for i, s in enumerate(drawn):
        cy = top + row_h * i + row_h / 2
        mn, q1, md, q3, mx = quartiles(s.values)
        body.append(_text(8, cy + 4, clip(f"{s.label} ({len(s.values)})", 26), "rowlabel"))
        if len(s.values) <= DOT_LIMIT:
            jit = _jitter(len(s.values))
            body.append('<g class="dots">' + "".join(
                f'<circle class="dot {s.cls}" cx="{_f(sc(v))}" cy="{_f(cy + 2.2 * j)}" r="2"/>'
                for v, j in zip(s.values, jit, strict=True)) + "</g>")
        tip = escape(f"{s.label}: min {fmt(mn)}, q1 {fmt(q1)}, median {fmt(md)}, q3 {fmt(q3)}, "
                     f"max {fmt(mx)}")
        body.append(
            f'<g class="mark box {s.cls}"><title>{tip}</title>'
            f'<line class="whisker" x1="{_f(sc(mn))}" x2="{_f(sc(mx))}" y1="{_f(cy)}" '
            f'y2="{_f(cy)}"/><rect x="{_f(sc(q1))}" y="{_f(cy - 12)}" '
            f'width="{_f(max(sc(q3) - sc(q1), 1))}" height="24"/>'
            f'<line class="median" x1="{_f(sc(md))}" x2="{_f(sc(md))}" y1="{_f(cy - 12)}" '
            f'y2="{_f(cy + 12)}"/></g>')
    return _svg(kind, width, int(bottom + 40), title, body)


# ---------------------------------------------------------------- lines


@dataclass(frozen=True)
class Series:
    label: str
    points: Sequence[tuple[float, float]]
    cls: str
    step: bool = False
    """Draw as a staircase (a running total that jumps at each point)."""


def lines(kind: str, title: str, series: Sequence[Series], x_label: str, y_label: str,
          fmt_x: Callable[[float], str], fmt_y: Callable[[float], str],
          y_max: float | None = None) -> Markup:
    """One polyline per series, with a legend; the y axis starts at zero."""
    width, height, left, bottom_pad, top = 860, 340, 80, 50, 16
    xs = [x for s in series for x, _ in s.points]
    ys = [y for s in series for _, y in s.points]
    sx = Scale(min(xs, default=0.0), max(xs, default=1.0), left, width - 150)
    sy = Scale(0.0, y_max if y_max is not None else (max(ys, default=1.0) or 1.0) * 1.05,
               height - bottom_pad, top)
    body = _x_axis(sx, top, height - bottom_pad, fmt_x, x_label)
    body += _y_axis(sy, left, width - 150, fmt_y, y_label, (height - bottom_pad + top) / 2)
    for i, s in enumerate(series):
        pts: list[tuple[float, float]] = []
        prev: tuple[float, float] | None = None
        for x, y in s.points:
            if s.step and prev is not None:
                pts.append((x, prev[1]))
            pts.append((x, y))
            prev = (x, y)
        d = " ".join(f"{_f(sx(x))},{_f(sy(y))}" for x, y in pts)
        tip = escape(f"{s.label}: " + ", ".join(f"{fmt_x(x)} → {fmt_y(y)}"
                                                for x, y in s.points[-3:]))
        body.append(f'<polyline class="mark line {s.cls}" points="{d}"><title>{tip}</title>'
                    "</polyline>")
        ly = top + 8 + 18 * i
        body.append(f'<line class="legend {s.cls}" x1="{width - 140}" x2="{width - 120}" '
                    f'y1="{_f(ly)}" y2="{_f(ly)}"/>')
        body.append(_text(width - 114, ly + 4, clip(s.label, 18), "legendtext"))
    return _svg(kind, width, height, title, body)
