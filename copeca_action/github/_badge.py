"""The release badge: a shields.io endpoint JSON and a self-contained SVG of the same.

The endpoint JSON carries only keys of the shields.io endpoint schema (`schemaVersion`,
`label`, `message`, `color`, `labelColor`, …), so shields.io renders it unchanged; the SVG
needs no service at all (no fonts, scripts or external references).
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any
from xml.sax.saxutils import escape

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from copeca_action.errors import ConfigError, Problem
from copeca_action.github._comment_data import CommentData, Verdict, Versus
from copeca_action.github._markdown import MINUS, ci_text, signed_pct
from copeca_action.report import WORST_FIRST, Report

ENDPOINT_KEYS = frozenset({"schemaVersion", "label", "message", "color", "labelColor",
                           "isError", "namedLogo", "logoSvg", "logoColor", "logoWidth",
                           "style", "cacheSeconds", "logoSize"})
"""Every key the shields.io endpoint schema documents; the badge uses a subset."""
COLORS = {"improvement": "#2ea44f", "regression": "#cf222e", "inconclusive": "#9f9f9f",
          "invalid": "#d4a72c", "skipped": "#9f9f9f"}
LABEL = "cost per correct"
LABEL_COLOR = "#555"


class BadgeInput(BaseModel):
    """What the badge needs from a report: the verdict and the headline delta."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    verdict: Verdict
    delta: float | None = None
    ci_low: float | None = None
    ci_high: float | None = None
    versus: Versus = "baseline"
    """What the delta is against: nothing else is drawn (a hand-made badge JSON gave any text
    here, and it showed after "vs")."""
    simulated: bool = False
    """The numbers come from the scripted model (Report.simulated): the label says so."""
    comparison: str = Field(default="", max_length=120)
    """With several tools, the comparison the delta is (`toolB vs baseline`, the worst of
    them, which decides the verdict): the message names it; "" with one tool."""
    confidence: float = Field(default=0.95, gt=0, lt=1)
    """The interval's level (the report's `delta.level`: 1 − alpha, or the adaptive look's),
    named in the SVG's title."""

    @field_validator("delta", "ci_low", "ci_high")
    @classmethod
    def _a_number_or_null(cls, value: float | None) -> float | None:
        """NaN is no number: it drew `n/a` beside the verdict's colour (a green improvement
        reading `n/a vs baseline`). Unknown is null; ±Infinity stays (an unbounded side)."""
        if value is not None and math.isnan(value):
            raise ValueError("NaN is not a number: write null for an unknown value")
        return value


def badge_label(data: BadgeInput) -> str:
    return f"simulated {LABEL}" if data.simulated else LABEL


def badge_message(data: BadgeInput) -> str:
    """`−18.2% vs baseline`; when inconclusive the interval, never a bare estimate
    (`−45.4 to +12.0% vs baseline`), or just the verdict when there is no interval."""
    if data.delta is None or data.verdict in ("skipped", "invalid"):
        return f"{data.verdict} ({data.comparison})" if data.comparison else data.verdict
    if data.verdict == "inconclusive":
        ci = ci_text(data.ci_low, data.ci_high)
        if not ci:
            return data.verdict
        return f"{data.comparison}: {ci}" if data.comparison else f"{ci} vs {data.versus}"
    if data.comparison:  # the name says against what
        return f"{data.comparison}: {signed_pct(data.delta)}"
    return f"{signed_pct(data.delta)} vs {data.versus}"


def badge_endpoint(data: BadgeInput) -> dict[str, Any]:
    return {"schemaVersion": 1, "label": badge_label(data), "message": badge_message(data),
            "color": COLORS.get(data.verdict, "#9f9f9f"), "labelColor": LABEL_COLOR}


def unbacked(data: BadgeInput) -> str | None:
    """Why the numbers do not back the verdict (None: they do). An improvement or a
    regression is drawn only with the interval that decides it (`report._verdict.judge`):
    wholly below zero, or wholly above it. The report and the action's comment carry it by
    construction; a file given to `copeca-action badge` may not."""
    if data.verdict == "improvement" and not (
            data.delta is not None and data.ci_high is not None and data.ci_high < 0):
        return ("an improvement is drawn with its delta and an interval whose upper bound "
                "ci_high is below zero")
    if data.verdict == "regression" and not (
            data.delta is not None and data.ci_low is not None and data.ci_low > 0):
        return ("a regression is drawn with its delta and an interval whose lower bound "
                "ci_low is above zero")
    return None


def badge_input(report: Report) -> BadgeInput:
    """The badge of a Report: the headline comparison's delta and interval, as the action's
    comment shows them."""
    c = report.headline_comparison
    if c is None:
        return BadgeInput(verdict=report.verdict, simulated=report.simulated)
    return BadgeInput(verdict=report.verdict, delta=_finite_or_none(c.delta.estimate),
                      ci_low=_finite_or_none(c.delta.low), ci_high=_finite_or_none(c.delta.high),
                      versus="base" if c.kind == "head_vs_base" else "baseline",
                      simulated=report.simulated, confidence=c.delta.level,
                      comparison=c.name if report.multiplicity is not None else "")


def _better_than_a_tool(report: Report) -> str | None:
    """Why a report's verdict is not the summary of its tools' comparisons (None: it is):
    it may be worse than each of them (an unknown cost makes it `invalid`), never better
    than one (an improvement beside another tool's regression)."""
    head = report.headline_comparison
    if head is None or report.multiplicity is None:  # one tool: `unbacked` checks it
        return None
    rank = WORST_FIRST.index
    for c in report.comparisons:
        if c.kind == head.kind and rank(c.verdict) < rank(report.verdict):
            return (f"verdict {report.verdict!r} hides comparison {c.name!r} "
                    f"({c.verdict}): the report's verdict is the worst of its tools' "
                    "comparisons")
    return None


def badge_from_comment(data: CommentData) -> BadgeInput:
    """The action's badge: the comment's verdict and headline (the same numbers as
    `badge_input(report)` of the report it was made from)."""
    est = data.headline.estimate if data.headline else None
    return BadgeInput(verdict=data.verdict, delta=_finite_or_none(est.delta if est else None),
                      ci_low=_finite_or_none(est.ci_low if est else None),
                      ci_high=_finite_or_none(est.ci_high if est else None),
                      versus=data.headline.versus if data.headline else "baseline",
                      comparison=data.headline.comparison if data.headline else "",
                      simulated=bool(data.simulated),
                      confidence=data.footer.confidence if data.footer else 0.95)


def _finite_or_none(v: float | None) -> float | None:
    """NaN is no number; ±∞ stays (an unbounded interval), as in the comment."""
    return None if v is None or math.isnan(v) else v


# Verdana 11px advance widths (approximate, in px) for the glyphs badges use.
_WIDE = set("mwMW%")
_NARROW = set("iljtfI.,:;'|!() ")


def text_width(text: str) -> float:
    width = 0.0
    for ch in text:
        if ch in _NARROW:
            width += 3.9
        elif ch in _WIDE:
            width += 10.5
        elif ch.isupper() or ch.isdigit() or ch in (MINUS, "+", "∞"):
            width += 7.0
        else:
            width += 6.6
    return width


def badge_svg(data: BadgeInput) -> str:
    """A flat two-part badge; text is XML-escaped; no external resources."""
    label, message = badge_label(data), badge_message(data)
    color = COLORS.get(data.verdict, "#9f9f9f")
    lw, mw = round(text_width(label) + 10), round(text_width(message) + 10)
    total = lw + mw
    title = f"{label}: {message}"
    if data.ci_low is not None and data.ci_high is not None and data.delta is not None:
        title += f" ({ci_text(data.ci_low, data.ci_high, confidence=data.confidence)})"
    t, lab, msg = escape(title), escape(label), escape(message)
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{total}" height="20" role="img" '
        f'aria-label="{escape(title, {chr(34): "&quot;"})}">'
        f"<title>{t}</title>"
        '<linearGradient id="s" x2="0" y2="100%"><stop offset="0" stop-color="#bbb" '
        'stop-opacity=".1"/><stop offset="1" stop-opacity=".1"/></linearGradient>'
        f'<clipPath id="r"><rect width="{total}" height="20" rx="3" fill="#fff"/></clipPath>'
        f'<g clip-path="url(#r)"><rect width="{lw}" height="20" fill="{LABEL_COLOR}"/>'
        f'<rect x="{lw}" width="{mw}" height="20" fill="{color}"/>'
        f'<rect width="{total}" height="20" fill="url(#s)"/></g>'
        '<g fill="#fff" text-anchor="middle" '
        'font-family="Verdana,Geneva,DejaVu Sans,sans-serif" font-size="11">'
        f'<text x="{lw / 2:.1f}" y="14">{lab}</text>'
        f'<text x="{lw + mw / 2:.1f}" y="14">{msg}</text></g></svg>\n')


def read_badge_input(path: Path) -> BadgeInput:
    """The badge of a report.json the action or `run` wrote (its headline comparison, as the
    action's badge), or of a JSON with top-level `verdict`, `delta`, `ci_low`, `ci_high`
    (other keys are ignored). An improvement or a regression needs the numbers that decide
    it (`unbacked`)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigError(Problem(str(path), f"cannot read: {exc.strerror}")) from exc
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ConfigError(Problem(str(path), f"not JSON: {exc}")) from exc
    if isinstance(data, dict) and "comparisons" in data and "schema_version" in data:
        try:
            report = Report.model_validate(data)
        except ValidationError as exc:
            raise ConfigError(Problem(str(path), f"not a report: {exc.errors()[0]['msg']}",
                                      field=".".join(str(x) for x in exc.errors()[0]["loc"]))
                              ) from exc
        drawn = badge_input(report)
        if better := _better_than_a_tool(report):  # an edited report of several tools
            raise ConfigError(Problem(str(path), better, field="verdict"))
        if why := unbacked(drawn):  # an edited report: its verdict, not its numbers
            raise ConfigError(Problem(
                str(path), f"verdict {report.verdict!r} is not what the headline comparison's "
                f"interval says ({why})", field="verdict"))
        return drawn
    try:
        drawn = BadgeInput.model_validate(data)
    except ValidationError as exc:
        problems = [Problem(str(path), e["msg"], field=".".join(str(x) for x in e["loc"]))
                    for e in exc.errors()]
        raise ConfigError(problems) from exc
    if why := unbacked(drawn):
        raise ConfigError(Problem(str(path), why, field="verdict"))
    return drawn


def write_badge(data: BadgeInput, out_dir: Path, stem: str = "badge") -> tuple[Path, Path]:
    """Write `badge.json` (shields endpoint) and `badge.svg`; return both paths."""
    out_dir.mkdir(parents=True, exist_ok=True)
    js, svg = out_dir / f"{stem}.json", out_dir / f"{stem}.svg"
    js.write_text(json.dumps(badge_endpoint(data), ensure_ascii=False, indent=2) + "\n",
                  encoding="utf-8")
    svg.write_text(badge_svg(data), encoding="utf-8")
    return js, svg
