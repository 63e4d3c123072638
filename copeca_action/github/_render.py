"""Render CommentData to the PR comment (and the skipped comment), within GitHub's size.

Templates only format; escaping is not left to them: every value printed by `{{ }}` goes
through `escape_md` unless a formatter here marked it `Safe`.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections.abc import Iterable
from functools import cache
from typing import Any

import jinja2

from copeca_action._util.money import usd_text
from copeca_action._util.percent import level_text
from copeca_action.github._comment_data import (
    Bounds,
    CommentData,
    Estimate,
    MetricRow,
    RunFacts,
)
from copeca_action.github._comments import MAX_COMMENT_CHARS, marker, state_marker
from copeca_action.github._markdown import (
    Safe,
    ci_text,
    cut_markdown,
    escape_md,
    signed_pct,
    signed_points,
    value_text,
)

ICONS = {"improvement": "🟢", "regression": "🔴", "inconclusive": "⚪", "invalid": "⚠️",
         "skipped": "⏭️"}
_URL = re.compile(r"^https?://[A-Za-z0-9.:-]+(/[A-Za-z0-9._~/%-]*)?\Z")
_HEX = re.compile(r"^[0-9a-f]{8,128}\Z")
ROW_CAP = {0: 50, 1: 50, 2: 10}
"""Flags and warnings shown at each truncation level."""


def _finalize(value: Any) -> Any:
    if isinstance(value, Safe | int | float) and not isinstance(value, bool):
        return value
    return escape_md(value, max_len=500)


def escape_with_code(text: str, max_len: int = 1000) -> Safe:
    """Our own messages: escaped, but `backtick spans` shown as code."""
    parts = text.split("`")
    out = [escape_md(p, max_len) if i % 2 == 0 else Safe(f"<code>{escape_md(p, max_len)}</code>")
           for i, p in enumerate(parts)]
    return Safe("".join(out))


def safe_url(url: str | None) -> Safe | None:
    return Safe(url) if url and _URL.match(url) else None


@cache
def _env() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("copeca_action.github", "templates"),
        autoescape=False, undefined=jinja2.StrictUndefined, finalize=_finalize,
        trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True)
    env.filters["url"] = lambda u: safe_url(u) or Safe("#")
    return env


def estimate_text(est: Estimate | None, with_conf: bool = False,
                  kind: str = "relative", confidence: float = 0.95,
                  lines: Iterable[float] = (0.0,)) -> Safe:
    """The change and its interval, each number on its side of each of `lines`."""
    if est is None or est.delta is None:
        return Safe("n/a")
    lines = tuple(lines)
    head = (signed_points(est.delta) if kind == "points"
            else signed_pct(est.delta, lines=lines))
    ci = ci_text(est.ci_low, est.ci_high, kind, confidence if with_conf else None, lines)
    return Safe(f"{head} ({ci})" if ci else head)


def verdict_lines(data: CommentData, control: bool = False) -> tuple[float, ...]:
    """Where the verdict turns (zero and the fail threshold; for the control row, zero and ±
    the control tolerance): a number printed beside it keeps its side of them."""
    f = data.footer
    if f is None:
        return (0.0,)
    if control:
        return (-f.control_tolerance, 0.0, f.control_tolerance)
    return (0.0, f.fail_threshold)


def headline_text(data: CommentData) -> Safe:
    """'Cost per correct −18.2% (95% CI −27.5 to −8.1%) vs baseline'."""
    h = data.headline
    if h is None:
        return Safe("")
    conf = data.footer.confidence if data.footer else 0.95
    est = estimate_text(h.estimate, True, confidence=conf, lines=verdict_lines(data))
    if h.comparison:  # several tools: which one decides, and it says against what
        return Safe(f"{escape_md(h.comparison, 120)}: {escape_md(h.metric, 80)} {est}")
    return Safe(f"{escape_md(h.metric, 80)} {est} vs {escape_md(h.versus, 80)}")


def arm_value(value: float | None, ci: Bounds | None, unit: str) -> Safe:
    """An arm's cell, compactly: `$0.41 (0.33–0.52)`, `61.5% (48–74%)`; a cost per correct
    with nothing correct: `∞ (≥ $1.20)`."""
    if ci is None:
        return value_text(value, unit)
    if unit == "fraction":
        rng = f"{ci.low * 100:.0f}–{ci.high * 100:.0f}%" if ci.high is not None else ""
    else:
        low = value_text(ci.low, unit)
        if ci.high is None:
            if value is None:
                return Safe(f"∞ (≥ {low})")
            rng = f"{low.removeprefix('$')}–∞"
        else:
            rng = f"{low.removeprefix('$')}–{value_text(ci.high, unit).removeprefix('$')}"
    head = value_text(value, unit)
    return Safe(f"{head} ({rng})" if rng else head)


def row_delta(row: MetricRow, lines: Iterable[float] = (0.0,)) -> Safe:
    return estimate_text(row.estimate, kind=row.delta_kind, lines=lines)


def footer_text(data: CommentData) -> Safe:
    f = data.footer
    if f is None:
        return Safe("")
    parts = [f"thresholds: alert {signed_pct(f.alert_threshold)}, fail "
             f"{signed_pct(f.fail_threshold)}, control ±{f.control_tolerance * 100:g}%",
             f"seed {f.seed}", f"{f.resamples:,} resamples"]
    if f.scenario:
        parts.insert(0, f"scenario <code>{escape_md(f.scenario, 80)}</code>")
    if f.bundle_name:
        bundle = f"bundle <code>{escape_md(f.bundle_name, 120)}</code>"
        if f.bundle_sha256 and _HEX.match(f.bundle_sha256):
            bundle += f" sha256 <code>{f.bundle_sha256}</code>"
        parts.append(bundle)
    parts.append(f"signed by key <code>{escape_md(f.key_id, 80)}</code>" if f.key_id
                 else "unsigned")
    url = safe_url(f.run_url)
    if url:
        parts.append(f"[workflow run]({url})")
    if f.version:
        parts.append(f"copeca-action {escape_md(f.version, 40)}")
    return Safe(" · ".join(parts))


def _duration(seconds: float) -> str:
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 7200:
        return f"{seconds / 60:.1f} min"
    return f"{seconds / 3600:.1f} h"


def _usd(value: float) -> str:
    return usd_text(value) if math.isfinite(value) else str(value_text(value, "usd"))


def run_text(data: CommentData) -> Safe:
    """The run in one line: spend, agent time, models, CLI versions, commits, where the full
    report is."""
    r = data.run
    parts = []
    if r is not None:
        # the report's precision (report.md's Spend line): the same figures, the same digits
        spent = f"**This run**: {_usd(r.spend_usd)} on {r.runs:,} runs (all arms "
        if r.excluded_attempts:
            spent += (f"and tasks; {_usd(r.excluded_usd)} of it on "
                      f"{r.excluded_attempts:,} excluded or retried attempts)")
        else:
            spent += "and tasks)"
        if r.unknown_attempts:
            spent += f", plus {r.unknown_attempts:,} attempts of unknown cost"
        stopped = r.lower_bound_attempts - r.died_lower_bound
        low = [f"{stopped:,} attempts stopped mid-run"] if stopped else []
        if r.died_lower_bound:
            low.append(f"{r.died_lower_bound:,} running when the harness died")
        if low:
            spent += f" ({' and '.join(low)} may have been billed more than counted)"
        if ungraded := r.died_attempts - r.died_lower_bound:
            spent += (f"; {ungraded:,} attempts finished but not graded when the harness died "
                      "were counted and run again")
        parts.append(f"{spent}, {_duration(r.duration_s)} of agent time" if r.duration_s
                     is not None else f"{spent}; agent time not reported")
        if r.models:
            parts.append("models " + ", ".join(escape_md(m, 80) for m in r.models[:6]))
        if r.cli_versions:
            parts.append("CLIs " + ", ".join(escape_md(v, 80) for v in r.cli_versions[:6]))
        if commits := commits_text(r):
            parts.append(commits)
    url = safe_url(data.footer.run_url if data.footer else None)
    where = escape_md(data.full_report, 200) if data.full_report else ""
    if url:
        parts.append(f"[workflow run]({url})" + (f", full report in {where}" if where else ""))
    elif where:
        parts.append(f"full report in {where}")
    return Safe(" · ".join(parts))


def _sha(sha: str | None) -> str | None:
    return f"<code>{sha[:12]}</code>" if sha and _HEX.match(sha) else None


def commits_text(r: RunFacts) -> str:
    """What was measured: the tool's commit as checked out (for a pull_request event
    GitHub's merge commit, named with the PR head and the base commit it merges), then what
    it was compared with."""
    shown = [(escape_md(label, 40), code) for label, sha in r.commits
             if (code := _sha(sha)) is not None]
    if not shown:
        return ""
    (label, code), rest = shown[0], shown[1:]
    text = f"measured {label} {code}"
    if r.merged_from and (head := _sha(r.merged_from[0])) and (into := _sha(r.merged_from[1])):
        text += f" (the PR head {head} merged into {into})"
    elif (head := _sha(r.pr_head)) is not None:
        text += f" (not the PR head {head})"
    if rest:
        text += " against " + " and ".join(f"{lab} {c}" for lab, c in rest)
    return text


def history_text(data: CommentData) -> Safe:
    h = data.history
    if h is None or h.runs == 0:
        return Safe("")
    return Safe(f"Tool cost per correct {value_text(h.cpc_tool, 'usd')} vs a median of "
                f"{value_text(h.median_cpc_tool, 'usd')} over the last {h.runs} runs on "
                f"{escape_md(h.branch, 80)} (a point comparison: no interval).")


def state_of_data(data: CommentData) -> str:
    """A digest of what the reader cares about, for `comment: on-change`."""
    key = {"verdict": data.verdict, "headline": data.headline and data.headline.model_dump(),
           "metrics": [m.model_dump() for m in data.metrics], "skipped": data.skipped_reason}
    if data.comparisons:  # several tools: another tool's verdict changing is a change
        key["comparisons"] = [c.model_dump() for c in data.comparisons]
    return hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest()[:16]


def _truncation_note(data: CommentData, level: int, shown: int = 0) -> Safe:
    cut = {1: f"per-task details after the first {shown} tasks" if shown else
              "per-task details",
           2: "per-task details, capabilities, retrieval and long lists",
           3: "most of the report"}[level]
    where = escape_md(data.full_report or (data.footer.bundle_name if data.footer
                                           and data.footer.bundle_name else "the bundle"), 200)
    url = safe_url(data.footer.run_url if data.footer else None)
    run = f" of [this workflow run]({url})" if url else ""
    return Safe(f"> [!NOTE]\n> This comment is truncated to fit GitHub's {MAX_COMMENT_CHARS:,}-"
                f"character limit: {cut} are left out. The full report (report.md, "
                f"report.html) is in <code>{where}</code>, the artifact{run}.")


ARM_COLUMNS = {"baseline": ("Baseline", "Tool"), "base": ("Base", "Head")}
"""The tables' two arm columns by what the headline compares: the agent without the tool
and with it, or the tool at the PR's base and at the commit measured."""


def column_names(data: CommentData) -> tuple[str, str]:
    return ARM_COLUMNS[data.headline.versus if data.headline else "baseline"]


def _render_level(data: CommentData, level: int, task_cap: int | None = None) -> str:
    """Level 0: everything; 1: the first `task_cap` tasks; 2: no tasks and short lists."""
    cap = len(data.tasks) if level == 0 else (task_cap or 0) if level == 1 else 0
    common = {"data": data, "marker": Safe(marker(data.comment_id)),
              "state": Safe(state_marker(state_of_data(data)))}
    if data.verdict == "skipped":
        # the action's own reason (nothing ran), else the report's (runs, nothing to compare:
        # their spend and any simulated label are shown as for any verdict)
        return _env().get_template("skipped.md.j2").render(
            **common, data_reason=Safe(data.skipped_reason or data.verdict_reason),
            run_line=run_text(data) if data.run is not None else "")
    conf = data.footer.confidence if data.footer else 0.95
    return _env().get_template("comment.md.j2").render(
        **common, level=level, cap=ROW_CAP.get(level, 10), task_cap=cap,
        icon=ICONS[data.verdict], icons=ICONS,
        headline=headline_text(data), conf=Safe(level_text(conf).removesuffix("%")),
        pct=lambda v: value_text(v, "fraction"), value=value_text,
        estimate=lambda e, c=False: estimate_text(e, c, confidence=conf,
                                                  lines=verdict_lines(data)),
        row_delta=lambda row: row_delta(row, verdict_lines(data, row.control)
                                        if row.metric == "Cost per correct" else (0.0,)),
        arm=arm_value, footer=footer_text(data), cols=column_names(data),
        run_line=run_text(data), history=history_text(data),
        notes=any(t.note and t.note != data.task_note for t in data.tasks),
        truncation_note=_truncation_note(data, max(level, 1), cap))


def render_comment(data: CommentData, limit: int = MAX_COMMENT_CHARS) -> str:
    """The comment markdown, at most `limit` characters: detail is dropped level by level,
    and as a last resort the text is cut at a line with a note saying where the rest is."""
    data = _with_safe_reasons(data)
    body = _render_level(data, 0)
    if len(body) <= limit:
        return body
    if data.tasks:  # keep as many task rows as fit: estimate from the row size, then check
        bare = len(_render_level(data, 1, 0))
        per_task = max(1.0, (len(body) - bare) / len(data.tasks))
        rows = int((limit - bare - 400) / per_task)
        while rows > 0:
            body = _render_level(data, 1, rows)
            if len(body) <= limit:
                return body
            rows = int(rows * 0.9)
    body = _render_level(data, 2)
    if len(body) <= limit:
        return body
    return cut_markdown(body, limit, _truncation_note(data, 3))


def _with_safe_reasons(data: CommentData) -> CommentData:
    """Reasons are our own sentences with `code` spans: escape them once, keep the spans."""
    return data.model_copy(update={
        "verdict_reason": Safe(escape_with_code(data.verdict_reason)),
        "skipped_reason": Safe(escape_with_code(data.skipped_reason)),
        "simulated": Safe(escape_with_code(data.simulated)),
    })
