"""The Report: a finished analysis, the only thing renderers and the GitHub layer read."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, SerializerFunctionWrapHandler, model_serializer

from copeca_action._util.percent import level_text
from copeca_action.records import simulation_note
from copeca_action.retrieval import ArmRetrieval
from copeca_action.scenario._settings import Thresholds

Verdict = Literal["improvement", "regression", "inconclusive", "invalid", "skipped"]
VERDICTS: tuple[Verdict, ...] = ("improvement", "regression", "inconclusive", "invalid",
                                 "skipped")
WORST_FIRST: tuple[Verdict, ...] = ("regression", "invalid", "inconclusive", "skipped",
                                    "improvement")
"""How the report's verdict summarises several tools' comparisons: the worst of them, in
this order. A regression of any tool is the report's regression (it fails the gate); an
improvement only when every tool improved."""
ComparisonKind = Literal["head_vs_base", "tool_vs_baseline"]


class ReportModel(BaseModel):
    """Frozen, documented; ±inf (a cost per correct with nothing correct) is written to JSON
    as the strings "Infinity"/"-Infinity" and read back as floats."""

    model_config = ConfigDict(extra="forbid", frozen=True, ser_json_inf_nan="strings")


class Interval(ReportModel):
    """delta = cpc(tool)/cpc(base) − 1 with its bootstrap interval."""

    estimate: float | None
    """None when no ratio exists: no cluster both arms ran, nothing correct in either arm,
    or no spend in either arm (cost per correct $0 in both); `undefined` says which."""
    low: float | None
    high: float | None
    level: float
    """Confidence level of [low, high] (0.95, or less after adaptive alpha spending)."""
    undefined: str = ""
    """Why `estimate` is None ("" when it is not, or in older reports): "no task ran in both
    arms", "nothing correct in either arm", or "no spend in either arm"."""
    method: str
    clusters: int
    """Resampled units (tasks; repetitions in a per-task line)."""
    unit: Literal["task", "repetition"] = "task"
    resamples: int
    effective_clusters: float | None = None
    """Kish's effective number of clusters: how many equally weighted tasks carry the same
    information as these (fewer when a few tasks hold most of the spend or of the correct
    answers); None with no paired cluster or in older reports."""


class ArmInterval(ReportModel):
    """One arm's cost per correct and accuracy with their intervals: a cluster bootstrap over
    tasks for cost per correct (the method and seed of the deltas), a Wilson interval on the
    design-effect sample size for accuracy (docs/methodology.md)."""

    cpc_low: float | None
    """None with no interval (one task): the spread between tasks is unknown."""
    cpc_high: float | None
    """Infinity when nothing was correct: the data bound the cost per correct only from
    below."""
    accuracy_low: float
    accuracy_high: float
    design_effect: float
    """Variance of the accuracy over the binomial variance (≥ 1): how much answers cluster
    by task."""
    level: float
    method: str
    clusters: int
    """Tasks this arm ran (the resampled units)."""
    resamples: int


class ArmSummary(ReportModel):
    arm: str
    records: int
    """Run ids seen for this arm (after retries superseded their infra errors)."""
    runs: int
    """Runs that reached the agent: these are counted in spend, failed or not."""
    infra_errors: int
    """Excluded: the harness failed, not the agent."""
    not_run: int
    """budget_stop: never started because the scenario budget was spent."""
    spend_usd: float
    correct: int
    accuracy: float | None
    cpc_usd: float | None
    """Spend per correct answer; inf when nothing was correct; None when no run of the arm
    reached the agent (every run an infra error or not run: the harness failed, and the
    agent answered nothing, right or wrong)."""
    outcomes: dict[str, int]
    tokens: dict[str, int]
    """Sums: input, output, cache_write, cache_read."""
    mean_turns: float | None
    """None with no run, or when a counted run did not report its turns (records without
    `turns`: copeca's without `num_turns`, hand-written ones): unknown, never a mean of 0s."""
    mean_tool_calls: float | None
    """As `mean_turns`."""
    duration_s: float | None
    """Agent time summed over the counted runs; None when one did not report it."""
    adoption_rate: float | None
    """Share of runs (that reached the agent and have a validity rule) where the tool was
    really used; None when the arm has no rule."""
    flags: dict[str, int]
    models: list[str]
    cli_versions: list[str]
    interval: ArmInterval | None = None
    """Intervals for `cpc_usd` and `accuracy` (all tasks this arm ran, control included);
    None when the arm has no run that reached the agent, or in reports written before it
    existed."""


class Line(ReportModel):
    """One row of a breakdown: a capability, a language, or a task."""

    key: str
    runs_tool: int
    runs_base: int
    accuracy_tool: float | None
    accuracy_base: float | None
    cpc_tool: float | None
    """Inf when the arm answered nothing correctly on the line's tasks; None when it has no
    run there that reached the agent (it did not run them, or the harness failed)."""
    cpc_base: float | None
    delta: Interval | None
    """None: too few clusters for an interval (see `note`)."""
    note: str = ""
    interval_tool: ArmInterval | None = None
    """`cpc_tool` and `accuracy_tool` with their intervals: on the `overall` and `control`
    lines only (None on breakdown lines, with no run, or in older reports)."""
    interval_base: ArmInterval | None = None
    spend_tool: float | None = None
    """USD spent by the runs this line counts (None in older reports)."""
    spend_base: float | None = None
    correct_tool: int | None = None
    correct_base: int | None = None
    mean_turns_tool: float | None = None
    """Mean turns per run (None on task lines, with no run, when a run did not report its
    turns, or in older reports)."""
    mean_turns_base: float | None = None
    tasks: int | None = None
    """Tasks run by both arms (the paired clusters); None in older reports."""
    category: str = ""
    """On task lines: the task's category (it travels with the records, so `merge` keeps it)."""
    control: bool | None = None
    """On task lines: whether it is a control task; None on other lines and older reports."""
    effect: float | None = None
    """On task lines of non-control tasks both arms ran: the task's first-order share in
    log(cpc_tool / cpc_base) of the headline (positive pushes it up); the comment lists tasks
    by its size, largest first. None elsewhere."""


class AdoptedLine(ReportModel):
    """The per-protocol second line: only tool runs where the tool was really used."""

    adoption_rate: float
    runs: int
    delta: Interval


class Power(ReportModel):
    """What this comparison's design could detect (docs/methodology.md, "Power before
    spend"): the report's own base-arm runs resampled as the population, the same tasks,
    repetitions, interval, alpha (or adaptive schedule) and fail threshold."""

    improvement: float | None
    """Smallest true reduction of cost per correct (negative) called an improvement in 80% of
    experiments; None when none is."""
    regression: float | None
    """Smallest true increase called a regression in 80% of experiments; None when none is."""
    tasks: int
    repetitions: int
    """Runs per task and arm in the simulated design (the median of this comparison's; under
    adaptive sampling the schedule's maximum, every look up to it simulated, × models)."""
    experiments: int
    power: float = 0.8


class Comparison(ReportModel):
    name: str
    kind: ComparisonKind
    tool: str
    base: str
    delta: Interval
    """Intent-to-treat: every run that reached the agent, on non-control tasks."""
    control_delta: Interval | None
    """The same statistic on control tasks; None when there are none."""
    adopted: AdoptedLine | None
    verdict: Verdict
    reasons: list[str]
    alert: bool
    """The point estimate is above the alert threshold."""
    capabilities: list[Line]
    languages: list[Line]
    models: list[Line]
    """Per model (the headline pools models: a task's runs across models form one cluster)."""
    tasks: list[Line]
    overall: Line | None = None
    """Runs, accuracy and cost per correct per arm on the headline's tasks (non-control), so a
    table can show the values `delta` compares; None in reports written before it existed."""
    control: Line | None = None
    """The same on control tasks; None when there are none."""
    power: Power | None = None
    """Minimum detectable effects of this design at 80% power; None with fewer than 2 paired
    tasks, when the report was built without it (`Settings.power_experiments` 0, e.g. the
    engine's stopping looks), or in older reports."""


class Exclusions(ReportModel):
    infra_error_runs: list[str]
    """Run ids excluded because the harness failed (retried; the last attempt is shown)."""
    not_run: list[str]
    """Run ids stopped by the budget before they started."""
    superseded_attempts: int
    """Earlier records of a run id replaced by a later attempt."""
    spend_usd: float = 0.0
    """Known spend of attempts outside the statistics (infra errors after the agent ran,
    interrupted runs, attempts a retry superseded): spent, but not in any arm's spend."""
    spend_attempts: int = 0
    """Attempts behind `spend_usd` (including those whose cost is unknown)."""
    spend_unknown_attempts: int = 0
    """Of `spend_attempts`, those whose cost is unknown (not in `spend_usd`)."""
    unknown_cost_runs: list[str] = []
    """Counted runs whose cost is unknown: left out of the statistics (never counted as 0);
    the verdict is `invalid` while there are any."""
    unknown_cost_models: list[str] = []
    """The models (served, else requested) of those runs."""


class Spend(ReportModel):
    """Every dollar the records account for, in one line: the arms' counted runs plus the
    attempts outside the statistics. This is what the run cost, whatever happened to it."""

    total_usd: float
    """`counted_usd` + `excluded_usd`."""
    counted_usd: float
    """The arms' spend (runs that reached the agent and count, their cost known)."""
    excluded_usd: float
    """Known spend of attempts outside the statistics (`Exclusions.spend_usd`)."""
    excluded_attempts: int
    unknown_attempts: int
    """Attempts that spent an unknown amount (counted runs with no known cost plus excluded
    attempts with none): not in `total_usd`, which is then a lower bound."""
    cost_sources: dict[str, int] = {}
    """Counted runs by where their cost came from: `computed` (tokens × the runner's price
    table), `vendor` (the CLI's own figure), `none` (nothing spent, e.g. no usage)."""
    lower_bound_attempts: int = 0
    """Attempts (counted or not) the harness stopped mid-run (a timeout or an interrupt) or
    died during while their agent ran (flag `cost_lower_bound`). A model request in flight
    then is billed by the vendor but reported to no CLI, so `total_usd` may be lower than
    what was billed."""
    died_attempts: int = 0
    """Attempts the harness died during (SIGKILL, a crash, a lost machine; flag
    `harness_died`): recorded on resume from their output, run again."""
    died_lower_bound: int = 0
    """Of `died_attempts`, those whose agent was still running (in `lower_bound_attempts`
    too); the others had finished their agent (exact cost) and were not graded."""


class RetrievalArm(ReportModel):
    """Retrieval point estimates of one arm over all its scored runs (docs/retrieval.md)."""

    arm: str
    unscored_runs: int
    """Runs that reached the agent without retrieval data (their task has no gold)."""
    metrics: ArmRetrieval
    """Micro coverage/precision/F1 and macro means per granularity, macro AUC-coverage and
    redundancy; `runs` = scored runs."""


class RetrievalLine(ReportModel):
    """One metric compared between two arms on the tasks where both have a value."""

    metric: str
    """Key as in `retrieval_arrays`: `span.coverage`, `trajectory.span.auc`, `steps`, …"""
    label: str
    aggregation: Literal["micro", "macro"]
    tool: float | None
    """The tool arm's statistic on the paired tasks."""
    base: float | None
    ratio: float | None
    """tool / base (None when undefined: no gold at this granularity, or both 0/0)."""
    low: float | None
    high: float | None
    tasks: int
    """Paired tasks (the resampled clusters)."""


class RetrievalComparison(ReportModel):
    name: str
    kind: ComparisonKind
    tool: str
    base: str
    lines: list[RetrievalLine]
    summary: str
    """One plain sentence on how early the tool arm reached the gold context."""


class RetrievalSection(ReportModel):
    """Retrieval metrics per arm and per comparison, with the same paired cluster bootstrap
    (seed, resamples, interval method, level) as cost per correct."""

    arms: list[RetrievalArm]
    comparisons: list[RetrievalComparison]
    tasks_without_gold: list[str]
    """Tasks whose runs carry no retrieval data: excluded from this section."""
    level: float
    method: str
    resamples: int


class Look(ReportModel):
    """Under adaptive sampling, the look whose decision this report publishes: the engine's
    stopping decision at the same records (OUT/adaptive.json), judged at the same alpha."""

    look: int
    """1-based index of the look in the schedule (the last look at or below `repetitions`)."""
    looks: int
    repetitions: int
    """Repetitions the records reached (the highest repetition index seen + 1)."""
    alpha_look: float
    """Two-sided alpha this report judges with (its intervals are 1 − alpha_look)."""
    alpha_spent: float
    """Alpha spent by this and earlier looks (≤ the scenario's `adaptive.alpha`)."""
    alpha: float
    """The scenario's overall `adaptive.alpha`: the error bound over all looks (one-sided:
    half of it for a false improvement, half for a false regression)."""

    @property
    def note(self) -> str:
        """Which look this verdict is, and at which alpha: said by every renderer beside the
        verdict, since the level of its intervals alone does not say it."""
        return self.split_note(1)

    def split_note(self, tools: int) -> str:
        """`note`, when the look's alpha is split between `tools` comparisons
        (`Multiplicity`): then each is judged at alpha_look / tools (`Report.look_note`)."""
        judged = self.alpha_look / tools
        split = (f"the look's alpha {self.alpha_look:.4g} split between {tools} tools: "
                 if tools > 1 else "")
        return (f"adaptive sampling, look {self.look} of {self.looks} ({self.repetitions} "
                f"repetition{'' if self.repetitions == 1 else 's'}): {split}judged at alpha "
                f"{judged:.4g} ({level_text(1 - judged)} intervals); "
                f"{self.alpha_spent:.4g} of the overall alpha {self.alpha:.4g} spent")


class Multiplicity(ReportModel):
    """Several tool arms compared with one base: the alpha is split between the comparisons
    of each kind (Bonferroni), so the chance of any false verdict among them stays at most
    `alpha_family`. Every interval and verdict of the report is at `alpha` (`Report.alpha`);
    docs/methodology.md, "Several tools"."""

    method: Literal["bonferroni"] = "bonferroni"
    comparisons: int
    """Comparisons that share the alpha: one per tool arm (of the deciding kind; with
    `compare: both` the tool-vs-baseline comparisons are split the same way)."""
    alpha_family: float
    """The alpha before the split (0.05, or the adaptive look's share)."""
    alpha: float
    """`alpha_family / comparisons`: what each comparison is judged at."""

    @property
    def note(self) -> str:
        """Said beside the verdict by every renderer, as `Look.note` is."""
        return (f"{self.comparisons} tool comparisons: the alpha {self.alpha_family:.4g} is "
                f"split between them (Bonferroni), each judged at alpha {self.alpha:.4g} "
                f"({level_text(1 - self.alpha)} intervals), so the chance of any false "
                f"verdict among them stays at most {self.alpha_family:.4g}")


class Report(ReportModel):
    """Field order is the on-disk order; the schema version comes first."""

    schema_version: Literal[1] = 1
    scenario: str
    records: int
    verdict: Verdict
    verdict_reasons: list[str]
    headline: int | None
    """Index into `comparisons` of the comparison that decides the verdict: with several tool
    arms, the worst of the deciding comparisons (`WORST_FIRST`; the first of equals)."""
    comparisons: list[Comparison]
    arms: list[ArmSummary]
    warnings: list[str]
    exclusions: Exclusions
    spend: Spend | None = None
    """What the run cost in all (None in reports written before it existed)."""
    thresholds: Thresholds
    seed: int
    resamples: int
    alpha: float
    """Two-sided alpha of every interval and verdict in the report (a look's share under
    adaptive sampling, see `look`)."""
    interval_method: str
    source_format: Literal["copeca-action", "copeca"] = "copeca-action"
    retrieval: RetrievalSection | None = None
    """None when no run carries retrieval data."""
    look: Look | None = None
    """The adaptive look this report's verdict belongs to; None without adaptive sampling."""
    multiplicity: Multiplicity | None = None
    """With several tool arms, how the alpha was split between their comparisons; None
    (and left out of report.json) with one."""
    endpoints: dict[str, int] = {}
    """Runs (one per run id) by what answered the agent: `real`, `scripted`, `dry_run`, and
    `unknown` for records written before RunRecord had `endpoint`."""
    simulated: bool = False
    """Some run was answered by the scripted model (`scripted` or `dry_run`): the numbers are
    a simulation, not a measurement; every renderer says so (`simulation_note`)."""

    redactions: int = 0
    """Secret values (or their encodings) redacted from the files the run left: the run
    folders, results.jsonl, logs. Counts only, never values (docs/security.md)."""

    @model_serializer(mode="wrap")
    def _without_absent_multiplicity(self, handler: SerializerFunctionWrapHandler
                                     ) -> dict[str, Any]:
        """A report of one tool is written as it was before `multiplicity` existed."""
        out: dict[str, Any] = handler(self)
        if self.multiplicity is None:
            out.pop("multiplicity", None)
        return out

    @property
    def simulation_note(self) -> str:
        """One sentence for the banner every renderer shows after the word "Simulated";
        "" when nothing is simulated."""
        return simulation_note(self.endpoints) if self.simulated else ""

    @property
    def look_note(self) -> str:
        """`Look.note` with the alpha this report judged at (the look's, split between the
        tools when there are several); "" without adaptive sampling."""
        if self.look is None:
            return ""
        return self.look.split_note(self.multiplicity.comparisons if self.multiplicity else 1)

    @property
    def headline_comparison(self) -> Comparison | None:
        return None if self.headline is None else self.comparisons[self.headline]
