"""Markdown pieces of a finished Report; the PR comment and step summary reuse them."""

from __future__ import annotations

import math

from copeca_action.report import ArmSummary, Comparison, Interval, Line, Report

VERDICT_MARK = {"improvement": "🟢", "regression": "🔴", "inconclusive": "⚪",
                "invalid": "⚠️", "skipped": "⏭️"}


def pct(value: float | None) -> str:
    if value is None or math.isnan(value):
        return "n/a"
    if math.isinf(value):
        return "+∞" if value > 0 else "−∞"
    return f"{value:+.1%}"


def usd(value: float | None) -> str:
    if value is None or math.isnan(value):
        return "n/a"
    if math.isinf(value):
        return "∞"
    return f"${value:,.4f}" if value < 1 else f"${value:,.2f}"


def share(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.0%}"


def interval_text(i: Interval | None) -> str:
    if i is None:
        return "n/a"
    if i.estimate is None:
        return "undefined (nothing correct in either arm)"
    return f"{pct(i.estimate)} [{pct(i.low)}, {pct(i.high)}]"


def headline_md(report: Report) -> str:
    """The verdict line plus, for the deciding comparison, delta, control and adopted-only."""
    mark = VERDICT_MARK[report.verdict]
    out = [f"### {mark} {report.verdict}: " + "; ".join(report.verdict_reasons)]
    c = report.headline_comparison
    if c is not None:
        level = f"{c.delta.level * 100:.4g}%"
        out.append("")
        out.append(f"**{c.name}**: cost per correct answer {interval_text(c.delta)} "
                   f"({level} CI, {c.delta.clusters} tasks, intent-to-treat)")
        if c.adopted is not None:
            out.append(f"- runs where the tool was used ({share(c.adopted.adoption_rate)} "
                       f"adoption, {c.adopted.runs} runs): {interval_text(c.adopted.delta)}")
        if c.control_delta is not None:
            out.append(f"- control tasks: {interval_text(c.control_delta)} "
                       f"(tolerance ±{report.thresholds.control_tolerance:.0%})")
    return "\n".join(out)


def arms_table(arms: list[ArmSummary]) -> str:
    rows = ["| arm | runs | spend | correct | accuracy | cost per correct | adoption | "
            "infra errors | not run |",
            "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for a in arms:
        rows.append(f"| {a.arm} | {a.runs} | {usd(a.spend_usd)} | {a.correct} | "
                    f"{share(a.accuracy)} | {usd(a.cpc_usd)} | {share(a.adoption_rate)} | "
                    f"{a.infra_errors} | {a.not_run} |")
    return "\n".join(rows)


def comparisons_table(comparisons: list[Comparison]) -> str:
    rows = ["| comparison | delta [CI] | control delta | verdict |", "|---|---|---|---|"]
    for c in comparisons:
        rows.append(f"| {c.name} | {interval_text(c.delta)} | {interval_text(c.control_delta)} "
                    f"| {VERDICT_MARK[c.verdict]} {c.verdict} |")
    return "\n".join(rows)


def lines_table(title: str, lines: list[Line]) -> str:
    if not lines:
        return ""
    rows = [f"| {title} | runs (tool/base) | accuracy (tool/base) | cpc (tool/base) | "
            "delta [CI] |", "|---|---:|---:|---:|---|"]
    for ln in lines:
        delta = interval_text(ln.delta) if ln.delta else ln.note
        rows.append(f"| {ln.key} | {ln.runs_tool}/{ln.runs_base} | {share(ln.accuracy_tool)}/"
                    f"{share(ln.accuracy_base)} | {usd(ln.cpc_tool)}/{usd(ln.cpc_base)} | "
                    f"{delta} |")
    return "\n".join(rows)


def warnings_md(report: Report) -> str:
    return "\n".join(f"- ⚠️ {w}" for w in report.warnings)


def method_md(report: Report) -> str:
    t = report.thresholds
    return (f"Paired cluster bootstrap over tasks ({report.resamples:,} resamples, seed "
            f"{report.seed}, {report.interval_method} interval, alpha {report.alpha:.4g}); "
            f"fail above {t.fail:.0%}, alert above {t.alert:.0%}, control ±"
            f"{t.control_tolerance:.0%}, min {t.min_runs} runs, min adoption "
            f"{t.min_adoption:.0%}. See docs/methodology.md.")


def render_markdown(report: Report, *, tasks: bool = True) -> str:
    """The full report as GitHub-flavoured markdown."""
    parts = [f"## copeca-action: {report.scenario or 'results'}", headline_md(report),
             "#### Arms", arms_table(report.arms)]
    if report.comparisons:
        parts += ["#### Comparisons", comparisons_table(report.comparisons)]
    for c in report.comparisons:
        body = [lines_table("capability", c.capabilities), lines_table("language", c.languages)]
        if len(c.models) > 1:
            body.append(lines_table("model", c.models))
        if tasks:
            body.append(lines_table("task", c.tasks))
        text = "\n\n".join(b for b in body if b)
        if text:
            parts.append(f"<details><summary>{c.name}: breakdowns</summary>\n\n{text}\n\n"
                         "</details>")
    if report.warnings:
        parts += ["#### Warnings", warnings_md(report)]
    ex = report.exclusions
    if ex.infra_error_runs or ex.not_run:
        parts.append(f"Excluded: {len(ex.infra_error_runs)} infra-error run(s); not run "
                     f"(budget): {len(ex.not_run)}.")
    parts.append(f"<sub>{method_md(report)}</sub>")
    return "\n\n".join(parts) + "\n"
