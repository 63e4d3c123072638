"""Markdown pieces of a finished Report (report.md, which `analyze` prints and the job
summary embeds).

Text a record, task or scenario supplies (task ids, arm, model and scenario names,
categories, languages, and the reasons, warnings and notes that quote them) goes through
`plain` (`plain_html` inside an HTML tag): it renders as itself and cannot end a table row,
start a heading, open a tag or an HTML comment, form a link or math, or mention anyone.
Unlike the PR comment's entities (`github._markdown.escape_md`), it stays readable where
report.md is read raw, in a terminal. Numbers are formatted here and left as is.
"""

from __future__ import annotations

import html
import math
import re
from collections.abc import Iterable

from copeca_action._util.money import usd_text
from copeca_action._util.percent import level_text, percent_decimals, threshold_text
from copeca_action._util.text import one_line
from copeca_action.report import (
    ArmInterval,
    ArmSummary,
    Comparison,
    Interval,
    Line,
    Report,
    RetrievalComparison,
    RetrievalSection,
)
from copeca_action.scenario import Thresholds

_SPECIAL = re.compile(r"([\\`*_{}\[\]<>|~&$])")
"""What CommonMark and GitHub give a meaning to mid-line: emphasis, code, links and images,
HTML tags, comments and entities, table cells, strikethrough, math. Escaped with a backslash,
each renders as itself."""


def plain(value: object, max_len: int = 300) -> str:
    """Supplied text as itself in markdown: one line (`one_line`), specials backslash-escaped, a
    zero-width space after `@` (no mention)."""
    return _SPECIAL.sub(r"\\\1", one_line(value, max_len)).replace("@", "@\u200b")


def plain_html(value: object, max_len: int = 300) -> str:
    """Supplied text as itself inside an HTML tag (`<summary>`), where backslashes are not
    read: HTML-escaped instead."""
    return html.escape(one_line(value, max_len), quote=False).replace("@", "@\u200b")


VERDICT_MARK = {"improvement": "🟢", "regression": "🔴", "inconclusive": "⚪",
                "invalid": "⚠️", "skipped": "⏭️"}


def pct(value: float | None, lines: Iterable[float] = (0.0,)) -> str:
    """A signed percentage, with as many decimals as keep it on its side of each of `lines`
    (0 by default): −0.04% is "-0.04%", never "-0.0%" beside a verdict it decided."""
    if value is None or math.isnan(value):
        return "n/a"
    if math.isinf(value):
        return "+∞" if value > 0 else "−∞"
    return f"{value:+.{percent_decimals(value, 1, lines)}%}"


def delta_lines(t: Thresholds) -> tuple[float, ...]:
    """Where a delta's verdict turns: zero and the fail threshold."""
    return (0.0, t.fail)


def control_lines(t: Thresholds) -> tuple[float, ...]:
    """Where the control gate turns: zero and ± the control tolerance."""
    return (-t.control_tolerance, 0.0, t.control_tolerance)


def usd(value: float | None) -> str:
    if value is None or math.isnan(value):
        return "n/a"
    if math.isinf(value):
        return "∞"
    return usd_text(value)


def share(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.0%}"


def cpc_range(i: ArmInterval | None) -> str:
    """An arm's cost-per-correct interval: "[$a, $b]", "[$a, ∞)" when nothing (or, in a
    resample, nothing) was correct, "" with no interval."""
    if i is None or i.cpc_low is None or i.cpc_high is None:
        return ""
    high = "∞)" if math.isinf(i.cpc_high) else f"{usd(i.cpc_high)}]"
    return f"[{usd(i.cpc_low)}, {high}"


NO_RUN = "n/a (no run reached the agent)"
"""A cost per correct that does not exist: the arm has no run that reached the agent (an
infra error is the harness's failure, not the agent's wrong answer, so never ∞)."""
NO_KNOWN_COST = "n/a (no run of known cost)"
"""The same where the report left runs out for an unknown cost: they did reach the agent."""


def no_cpc(cost_unknown: bool) -> str:
    """What a missing cost per correct reads (`cost_unknown`: the report left runs out for
    an unknown cost, `Exclusions.unknown_cost_runs`)."""
    return NO_KNOWN_COST if cost_unknown else NO_RUN


def cpc_text(value: float | None, i: ArmInterval | None, cost_unknown: bool = False) -> str:
    """Cost per correct with its interval; ∞ says why (nothing correct) and how low the
    data allow it to be; None why there is none (`no_cpc`)."""
    if value is None:
        return no_cpc(cost_unknown)
    if math.isinf(value):
        low = f" (nothing correct; ≥ {usd(i.cpc_low)})" if i and i.cpc_low is not None else \
            " (nothing correct)"
        return "∞" + low
    if i is not None and i.cpc_low is None:
        return f"{usd(value)} (one task: no interval)"
    rng = cpc_range(i)
    return f"{usd(value)} {rng}" if rng else usd(value)


def accuracy_text(value: float | None, i: ArmInterval | None) -> str:
    if value is None or i is None:
        return share(value)
    return f"{share(value)} [{i.accuracy_low:.0%}, {i.accuracy_high:.0%}]"


def interval_text(i: Interval | None, lines: Iterable[float] = (0.0,)) -> str:
    """`+12.3% [-4.5%, +30.1%]`, each number on its side of each of `lines` (`pct`)."""
    lines = tuple(lines)
    if i is None:
        return "n/a"
    if i.estimate is None:  # `undefined` says why (reports before it: one of two reasons)
        return ("n/a (no task ran in both arms)" if i.clusters == 0
                else f"undefined ({i.undefined or 'nothing correct in either arm'})")
    return f"{pct(i.estimate, lines)} [{pct(i.low, lines)}, {pct(i.high, lines)}]"


def headline_md(report: Report) -> str:
    """The verdict line plus, for the deciding comparison, delta, control and adopted-only."""
    mark = VERDICT_MARK[report.verdict]
    out = [f"### {mark} {report.verdict}: "
           + "; ".join(plain(r, 2000) for r in report.verdict_reasons)]
    c = report.headline_comparison
    if c is not None:
        level = level_text(c.delta.level)
        out.append("")
        lines = delta_lines(report.thresholds)
        out.append(f"**{plain(c.name)}**: cost per correct answer "
                   f"{interval_text(c.delta, lines)} "
                   f"({level} CI, {c.delta.clusters} tasks, intent-to-treat)")
        if report.look is not None:
            out.append(f"- {report.look_note}")
        if report.multiplicity is not None:
            out.append(f"- {report.multiplicity.note}")
        if c.adopted is not None:
            out.append(f"- runs where the tool was used ({share(c.adopted.adoption_rate)} "
                       "adoption over the tool arm's runs on these tasks, "
                       f"{c.adopted.runs} runs): {interval_text(c.adopted.delta, lines)}")
        if c.control_delta is not None:
            out.append(f"- control tasks: "
                       f"{interval_text(c.control_delta, control_lines(report.thresholds))} "
                       f"(tolerance ±{threshold_text(report.thresholds.control_tolerance)})")
    return "\n".join(out)


def simulated_md(report: Report) -> str:
    """The banner of a simulated report (scripted model or dry run); "" for a measurement."""
    if not report.simulated:
        return ""
    return f"> [!WARNING]\n> **Simulated.** {plain(report.simulation_note, 1000)}"


def _turns(v: float | None) -> str:
    return "n/a" if v is None else f"{v:.1f}"


def population_table(c: Comparison, cost_unknown: bool = False) -> str:
    """The compact table: each arm of a comparison on its `overall` line (the non-control
    tasks its delta compares); the comment, report.html and report.json show these numbers.
    "" for reports written before the line existed. `cost_unknown`: see `no_cpc`."""
    o = c.overall
    if o is None:
        return ""
    level = next((f" ({level_text(i.level)} CI)" for i in (o.interval_tool, o.interval_base)
                  if i is not None), "")
    rows = [f"| arm | cost per correct{level} | accuracy{level} | spend | correct | runs | "
            "turns per run |", "|---|---:|---:|---:|---:|---:|---:|"]
    for arm, cpc, i, acc, spend, correct, runs, turns in (
            (c.base, o.cpc_base, o.interval_base, o.accuracy_base, o.spend_base, o.correct_base,
             o.runs_base, o.mean_turns_base),
            (c.tool, o.cpc_tool, o.interval_tool, o.accuracy_tool, o.spend_tool, o.correct_tool,
             o.runs_tool, o.mean_turns_tool)):
        rows.append(f"| {plain(arm)} | {cpc_text(cpc, i, cost_unknown)} | "
                    f"{accuracy_text(acc, i)} | "
                    f"{usd(spend)} | "
                    f"{'n/a' if correct is None else correct} | {runs} | {_turns(turns)} |")
    tasks = f"{o.tasks} " if o.tasks is not None else ""
    plural = "" if o.tasks == 1 else "s"
    return (f"On the {tasks}non-control task{plural} both arms ran (the tasks the delta "
            "compares):"
            "\n\n" + "\n".join(rows))


def spend_text(report: Report) -> str:
    """The run's whole spend in one sentence: the arms' counted runs plus the attempts the
    statistics leave out (never hidden), and what is not in the total. "" for reports written
    before `Report.spend` existed."""
    sp = report.spend
    if sp is None:
        return ""
    text = f"**Spend**: {usd(sp.total_usd)} in all"
    if sp.excluded_attempts:
        text += (f": {usd(sp.counted_usd)} on the runs the arms count, "
                 f"{usd(sp.excluded_usd)} on {sp.excluded_attempts} excluded or retried "
                 "attempt(s) outside cost per correct")
    if sp.unknown_attempts:
        text += (f"; {sp.unknown_attempts} attempt(s) of unknown cost are not in it "
                 "(the total is a lower bound)")
    if stopped := sp.lower_bound_attempts - sp.died_lower_bound:
        text += (f"; {stopped} attempt(s) were stopped mid-run (timeout or interrupt), and a "
                 "request in flight then is billed but reported to no CLI (the total may be "
                 "low)")
    if sp.died_lower_bound:
        text += (f"; {sp.died_lower_bound} attempt(s) were running when the harness died "
                 "(SIGKILL, a crash or a lost machine; counted from their output and run "
                 "again), and a request in flight then is billed but reported to no CLI (the "
                 "total may be low)")
    if ungraded := sp.died_attempts - sp.died_lower_bound:
        text += (f"; {ungraded} attempt(s) had finished their agent but were not graded when "
                 "the harness died (their cost is exact, counted; run again)")
    basis = [f"{n} {_BASIS.get(source, source)}" for source, n in sorted(sp.cost_sources.items())
             if source != "none"]
    if basis:
        text += f". Cost of the counted runs: {', '.join(basis)}"
    return text + "."


_BASIS = {"computed": "priced from the runners' price tables (tokens × price)",
          "vendor": "as the CLI itself reported"}


def arms_table(arms: list[ArmSummary], cost_unknown: bool = False) -> str:
    """Per arm over every task it ran (control included); brackets: the arm's own interval
    (`ArmInterval`: its level, the tasks resampled). `cost_unknown`: see `no_cpc`."""
    level = next((f" ({level_text(a.interval.level)} CI)" for a in arms if a.interval), "")
    rows = [f"| arm | runs | spend | correct | accuracy{level} | cost per correct{level} | "
            "adoption | infra errors | not run |",
            "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for a in arms:
        rows.append(f"| {plain(a.arm)} | {a.runs} | {usd(a.spend_usd)} | {a.correct} | "
                    f"{accuracy_text(a.accuracy, a.interval)} | "
                    f"{cpc_text(a.cpc_usd, a.interval, cost_unknown)} | "
                    f"{share(a.adoption_rate)} | "
                    f"{a.infra_errors} | {a.not_run} |")
    return "\n".join(rows)


def comparisons_table(comparisons: list[Comparison], thresholds: Thresholds | None = None
                      ) -> str:
    """Every comparison's delta and control delta (printed against the verdict's lines when
    `thresholds` is given) and verdict."""
    t = thresholds or Thresholds()
    rows = ["| comparison | delta [CI] | control delta | verdict |", "|---|---|---|---|"]
    for c in comparisons:
        rows.append(f"| {plain(c.name)} | {interval_text(c.delta, delta_lines(t))} | "
                    f"{interval_text(c.control_delta, control_lines(t))} | "
                    f"{VERDICT_MARK[c.verdict]} {c.verdict} |")
    return "\n".join(rows)


def lines_table(title: str, lines: list[Line]) -> str:
    if not lines:
        return ""
    rows = [f"| {title} | runs (tool/base) | accuracy (tool/base) | cpc (tool/base) | "
            "delta [CI] |", "|---|---:|---:|---:|---|"]
    for ln in lines:
        delta = interval_text(ln.delta) if ln.delta else plain(ln.note)
        rows.append(f"| {plain(ln.key)} | {ln.runs_tool}/{ln.runs_base} | "
                    f"{share(ln.accuracy_tool)}/"
                    f"{share(ln.accuracy_base)} | {usd(ln.cpc_tool)}/{usd(ln.cpc_base)} | "
                    f"{delta} |")
    return "\n".join(rows)


def _value(v: float | None, metric: str) -> str:
    if v is None:
        return "n/a"
    return f"{v:.1f}" if metric == "steps" else f"{v:.2f}"


def _ratio(v: float | None) -> str:
    if v is None or math.isnan(v):
        return "n/a"
    return "∞" if math.isinf(v) else f"{v:.2f}"


def retrieval_table(c: RetrievalComparison, level: float) -> str:
    """Metric | base | tool | tool/base (CI): values on the tasks both arms have."""
    rows = [f"| metric | {plain(c.base)} | {plain(c.tool)} | ratio ({level_text(level)} CI) "
            "| tasks |",
            "|---|---:|---:|---|---:|"]
    for ln in c.lines:
        ratio = (f"{_ratio(ln.ratio)} ({_ratio(ln.low)}–{_ratio(ln.high)})"
                 if ln.ratio is not None else "n/a")
        rows.append(f"| {plain(ln.label)}, {plain(ln.aggregation)} | "
                    f"{_value(ln.base, ln.metric)} | "
                    f"{_value(ln.tool, ln.metric)} | {ratio} | {ln.tasks} |")
    return "\n".join(rows)


_ARM_FIELDS = (("auc", "AUC-coverage"), ("micro_coverage", "coverage"),
               ("micro_precision", "precision"), ("micro_f1", "F1"),
               ("redundancy", "redundancy"))


def retrieval_arms_table(section: RetrievalSection) -> str:
    """Per arm over all its scored runs: micro coverage/precision/F1, macro AUC, redundancy."""
    arms = section.arms
    rows = ["| metric | " + " | ".join(plain(a.arm) for a in arms) + " |",
            "|---|" + "---:|" * len(arms)]
    rows.append("| scored runs (unscored) | " + " | ".join(
        f"{a.metrics.runs} ({a.unscored_runs})" for a in arms) + " |")
    for g in ("span", "symbol", "file", "editloc"):
        parts = [getattr(a.metrics, g) for a in arms]
        if not any(p.runs for p in parts):
            continue
        for field, label in _ARM_FIELDS:
            values = [getattr(p, field) for p in parts]
            if any(v is not None for v in values):
                rows.append(f"| {label} ({g}) | " + " | ".join(_value(v, field) for v in values)
                            + " |")
    return "\n".join(rows)


def retrieval_md(section: RetrievalSection | None) -> str:
    """The sentences, one table per comparison, and the per-arm estimates folded away."""
    if section is None:
        return ""
    parts = [f"- {plain(c.summary, 2000)}" for c in section.comparisons]
    if section.comparisons:
        parts = ["\n".join(parts)]
    for c in section.comparisons:
        parts.append(f"**{plain(c.name)}** (micro: pooled sizes; macro: mean over runs)\n\n"
                     + retrieval_table(c, section.level))
    arms = retrieval_arms_table(section)
    parts.append(arms if not section.comparisons else
                 f"<details><summary>retrieval per arm</summary>\n\n{arms}\n\n</details>")
    if section.tasks_without_gold:
        n = len(section.tasks_without_gold)
        parts.append(f"{n} task(s) without gold context excluded: "
                     + ", ".join(plain(t) for t in section.tasks_without_gold[:10])
                     + (", …" if n > 10 else ""))
    return "\n\n".join(parts)


def warnings_md(report: Report) -> str:
    return "\n".join(f"- ⚠️ {plain(w, 2000)}" for w in report.warnings)


def method_md(report: Report) -> str:
    t = report.thresholds
    return (f"Paired cluster bootstrap over tasks ({report.resamples:,} resamples, seed "
            f"{report.seed}, {report.interval_method} interval, alpha {report.alpha:.4g}); "
            f"fail above {threshold_text(t.fail)}, alert above {threshold_text(t.alert)}, "
            f"control ±{threshold_text(t.control_tolerance)}, min {t.min_runs} runs, min "
            f"adoption {threshold_text(t.min_adoption)}. See docs/methodology.md.")


def render_markdown(report: Report, *, tasks: bool = True) -> str:
    """The full report as GitHub-flavoured markdown."""
    parts = [f"## copeca-action: {plain(report.scenario) if report.scenario else 'results'}"]
    if report.simulated:
        parts.append(simulated_md(report))
    parts.append(headline_md(report))
    head = report.headline_comparison
    unknown = bool(report.exclusions.unknown_cost_runs)
    table = population_table(head, unknown) if head is not None else ""
    if table:
        parts += ["#### Headline population", table,
                  "<details><summary>every task each arm ran, control tasks included"
                  f"</summary>\n\n{arms_table(report.arms, unknown)}\n\n</details>"]
    else:
        parts += ["#### Arms", arms_table(report.arms, unknown)]
    if spend := spend_text(report):
        parts.append(spend)
    if report.warnings:
        parts += ["#### Warnings", warnings_md(report)]
    if report.comparisons:
        parts += ["#### Comparisons", comparisons_table(report.comparisons, report.thresholds)]
    for c in report.comparisons:
        body = [lines_table("capability", c.capabilities), lines_table("language", c.languages)]
        if len(c.models) > 1:
            body.append(lines_table("model", c.models))
        if tasks:
            body.append(lines_table("task", c.tasks))
        text = "\n\n".join(b for b in body if b)
        if text:
            parts.append(f"<details><summary>{plain_html(c.name)}: breakdowns</summary>"
                         f"\n\n{text}\n\n</details>")
    if report.retrieval is not None:
        parts += ["#### Retrieval", retrieval_md(report.retrieval)]
    ex = report.exclusions
    if ex.infra_error_runs or ex.not_run:
        parts.append(f"Excluded: {len(ex.infra_error_runs)} infra-error run(s); not run "
                     f"(budget): {len(ex.not_run)}.")
    parts.append(f"<sub>{method_md(report)}</sub>")
    return "\n\n".join(parts) + "\n"
