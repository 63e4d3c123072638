"""The input of the PR comment: plain numbers and strings, no statistics.

The report stage fills it (see `copeca_action.github.render_comment`); the comment template
only formats. Ratios are fractions (0.182 = 18.2%), money is USD, None means "not available".
Text that may come from an agent or a task (ids, flags, warnings, notes) is escaped when
rendered, never here.
"""

from __future__ import annotations

import re
from typing import Literal

from pydantic import Field, field_validator

from copeca_action._util.model import RecordModel

_CHART = re.compile(r'```mermaid\nxychart-beta\n(    [^`<&\n]*\n){1,8}```\n')
"""The only chart accepted: a mermaid xychart whose lines hold no backtick, `<` or `&`,
so it cannot close its fence or smuggle HTML into the comment."""

Verdict = Literal["improvement", "regression", "inconclusive", "invalid", "skipped"]
Unit = Literal["usd", "fraction", "count", "seconds", "tokens", "number", "mean"]
"""`mean`: a mean count (turns per run), one decimal."""
Versus = Literal["baseline", "base"]
"""What a delta is against: the two kinds of comparison a headline can be."""


class Estimate(RecordModel):
    """A relative change with its confidence interval (fractions: −0.182 = −18.2%)."""

    delta: float | None
    ci_low: float | None = None
    ci_high: float | None = None


class Headline(RecordModel):
    """The verdict line: the statistic, its change and interval, and what it is against."""

    metric: str = "Cost per correct"
    estimate: Estimate
    versus: Versus = "baseline"
    """`baseline` (the agent without the tool) or `base` (the PR's base branch)."""
    comparison: str = ""
    """Which comparison the line is (`codesearch vs baseline`), named when the report has
    several tools (the worst of them decides the verdict); "" with one."""


class ComparisonRow(RecordModel):
    """One tool's comparison and its own verdict, listed when the report has several tools
    (the report's verdict is the worst of them)."""

    name: str
    verdict: Verdict
    estimate: Estimate
    """Its delta of cost per correct with its interval (at the footer's confidence)."""
    deciding: bool = True
    """Among the comparisons the verdict summarises (head vs base with `compare: both`)."""


class AdoptionLine(RecordModel):
    """The second line: only runs where the tool was really used."""

    adoption: float
    """Share of tool-arm runs that used the tool (0..1)."""
    estimate: Estimate


class Bounds(RecordModel):
    """One arm's own interval for a row's value, at the table's confidence level."""

    low: float
    high: float | None
    """None: unbounded above (a cost per correct when nothing was correct)."""


class MetricRow(RecordModel):
    """One row of Metric | Baseline | Tool | Δ (95% CI)."""

    metric: str
    unit: Unit
    baseline: float | None
    tool: float | None
    estimate: Estimate | None = None
    delta_kind: Literal["relative", "points"] = "relative"
    """`points`: the delta of two fractions in percentage points (accuracy), not a ratio."""
    control: bool = False
    """The control row: tasks the tool cannot help with; its delta should be ~0."""
    baseline_ci: Bounds | None = None
    """The base arm's interval for `baseline` (cost per correct, accuracy); a None value with
    an unbounded interval is a cost per correct of ∞ (nothing correct)."""
    tool_ci: Bounds | None = None


class CapabilityRow(RecordModel):
    """Accuracy per task category (locate, trace, fix, …) in each arm, on non-control tasks."""

    category: str
    tasks: int
    """Non-control tasks of this category both arms ran."""
    baseline_accuracy: float | None
    tool_accuracy: float | None
    estimate: Estimate | None = None
    """The category's delta of cost per correct with its interval (None: too few tasks)."""


class RetrievalRow(RecordModel):
    """A retrieval metric (precision/recall of viewed lines against gold context)."""

    metric: str
    baseline: float | None
    tool: float | None
    unit: Unit = "fraction"


class FlagRow(RecordModel):
    """A run flag (e.g. `answer_in_prompt`, `tool_not_used`) and how often it was raised."""

    flag: str
    baseline: int = 0
    tool: int = 0
    detail: str = ""


class TaskRow(RecordModel):
    """One task's results, shown folded."""

    task_id: str
    category: str = ""
    control: bool = False
    baseline_correct: int = 0
    baseline_runs: int = 0
    tool_correct: int = 0
    tool_runs: int = 0
    baseline_cost_usd: float | None = None
    """Cost per correct on the task: inf when the arm ran it and answered nothing correctly,
    None when the arm has no run of it."""
    tool_cost_usd: float | None = None
    note: str = ""
    effect: float | None = None
    """The task's first-order share in the headline (report `Line.effect`); rows are listed
    by its size, largest first, so truncation drops the least important."""


class RunFacts(RecordModel):
    """What this run was: its cost, time, models and CLIs, and the commits it compared."""

    spend_usd: float
    """Every attempt that reached the agent, all arms and tasks (control included), excluded
    and retried attempts too (the report's `spend.total_usd`)."""
    excluded_usd: float = 0.0
    """Of `spend_usd`, what attempts outside cost per correct spent."""
    excluded_attempts: int = 0
    unknown_attempts: int = 0
    """Attempts of unknown cost, not in `spend_usd` (then a lower bound)."""
    lower_bound_attempts: int = 0
    """Attempts stopped mid-run (timeout, interrupt) or running when the harness died:
    `spend_usd` may be low."""
    died_attempts: int = 0
    """Attempts the harness died during (flag `harness_died`), counted from their output."""
    died_lower_bound: int = 0
    """Of `died_attempts`, those whose agent was still running (in `lower_bound_attempts`)."""
    duration_s: float | None
    """Agent time summed over runs; None when a run did not report its duration."""
    runs: int
    models: list[str] = []
    cli_versions: list[str] = []
    commits: list[tuple[str, str]] = []
    """(label, sha) pairs: first the commit the tool was measured at, as checked out in
    tool-dir (`PR head`, `merge commit` or `commit`), then for head vs base the base's."""
    merged_from: tuple[str, str] | None = None
    """When the measured commit is GitHub's merge commit of a pull request (what a
    `pull_request` workflow checks out, refs/pull/N/merge): (the PR head, the base commit it
    was merged into), its two parents."""
    pr_head: str | None = None
    """The PR head, when the measured commit is neither it nor its merge commit."""


class HistoryLine(RecordModel):
    """This run against the last runs on the default branch (github/_history.py)."""

    runs: int
    """How many earlier runs the median is over."""
    branch: str
    median_cpc_tool: float | None
    """The tool arm's median cost per correct over those runs."""
    cpc_tool: float | None
    """This run's tool-arm cost per correct (the headline population)."""


class Footer(RecordModel):
    """How the numbers were made, so a reader can reproduce and verify them."""

    alert_threshold: float
    fail_threshold: float
    control_tolerance: float
    seed: int
    resamples: int
    confidence: float = 0.95
    scenario: str = ""
    bundle_name: str | None = None
    bundle_sha256: str | None = None
    key_id: str | None = None
    """Ed25519 key id of the bundle signature; None: the bundle is unsigned."""
    run_url: str | None = None
    version: str = ""


class CommentData(RecordModel):
    """Everything the PR comment shows."""

    schema_version: Literal[1] = 1
    comment_id: str = "copeca"
    verdict: Verdict
    verdict_reason: str = ""
    headline: Headline | None = None
    adoption: AdoptionLine | None = None
    metrics: list[MetricRow] = []
    capabilities: list[CapabilityRow] = []
    retrieval: list[RetrievalRow] = []
    flags: list[FlagRow] = []
    warnings: list[str] = []
    tasks: list[TaskRow] = []
    footer: Footer | None = None
    skipped_reason: str = ""
    """Why nothing ran (fork without secrets, no key): shown instead of the results."""
    simulated: str = ""
    """The banner of a simulated run (`Report.simulation_note`); "" for a measurement."""
    look: str = ""
    """Under adaptive sampling, which look the verdict is and at which alpha
    (`Look.note`); "" without adaptive sampling."""
    multiplicity: str = ""
    """With several tools, how the alpha was split between their comparisons
    (`Multiplicity.note`); "" with one."""
    comparisons: list[ComparisonRow] = []
    """With several tools, every comparison and its verdict, the deciding ones worst first;
    empty with one (the headline says it all)."""
    population: str = ""
    """What the table's numbers are over, e.g. "18 non-control tasks both arms ran"."""
    run: RunFacts | None = None
    task_note: str = ""
    """A note shared by every task row, said once under the table instead of per row."""
    history: HistoryLine | None = None
    chart: str = Field(default="", max_length=4000)
    """A fenced mermaid xychart (`copeca_action.render.mermaid_chart`); shown as is, so it
    must match the chart's strict shape."""
    full_report: str = Field(default="", max_length=500)
    """Where the full report is, for the truncated view (e.g. the artifact's name)."""

    @field_validator("chart")
    @classmethod
    def _chart_shape(cls, value: str) -> str:
        if value and not _CHART.fullmatch(value):
            raise ValueError("chart must be a mermaid xychart as mermaid_chart writes it")
        return value
