"""The RunRecord: one JSON line per agent run, the unit every report is computed from."""

from __future__ import annotations

import datetime as dt
from typing import Annotated, Any, Literal

from pydantic import Field, ValidationInfo, model_validator

from copeca_action._util.model import RecordModel
from copeca_action.records._design import DIGEST_PATTERN
from copeca_action.records._kinds import (
    MAX_COUNT,
    NOT_REACHED,
    UNGRADED,
    missing_cost,
    ungraded,
)
from copeca_action.records._kinds import OUTCOMES as OUTCOMES
from copeca_action.records._kinds import CostSource as CostSource
from copeca_action.records._kinds import Endpoint as Endpoint
from copeca_action.records._kinds import Outcome as Outcome
from copeca_action.records._retrieval import RetrievalSummary

NonNeg = Annotated[int, Field(ge=0, le=MAX_COUNT)]


class Tokens(RecordModel):
    """Tokens summed over every model request of the run; each message counted once."""

    input: NonNeg = 0
    """Uncached input tokens."""
    output: NonNeg = 0
    """Output tokens (reasoning included)."""
    cache_write: NonNeg = 0
    """Input tokens written to the prompt cache (every lifetime)."""
    cache_read: NonNeg = 0
    cache_write_1h: NonNeg = 0
    """Of `cache_write`, the tokens written with a 1-hour lifetime (priced apart); the rest
    of `cache_write` is priced as 5-minute writes. 0 when the CLI reports no split."""

    @property
    def total(self) -> int:
        return self.input + self.output + self.cache_write + self.cache_read


class ViewedSpan(RecordModel):
    """Code the agent looked at in one step (for retrieval metrics)."""

    step: NonNeg
    file: str
    """Repository-relative path."""
    lines: tuple[int, int] | None = None
    """1-based inclusive range; None = the whole file (or only the file name was seen)."""


Digest = Annotated[str, Field(pattern=DIGEST_PATTERN)]


class Design(RecordModel):
    """The statistical design the run was planned under (`records._design`): what decides a
    verdict beyond the records. A report judges these records as the run decided only with
    a scenario of the same design; `analyze` of records of a run with adaptive sampling or
    its own thresholds, without that scenario (or with another), is `invalid`."""

    thresholds: Digest
    """sha256 (first 16 hex digits) of the scenario's thresholds as the run used them (with
    any override, e.g. the action's `fail-threshold`), their fields at defaults left out;
    `44136fa355b3678a` is the built-in thresholds."""
    adaptive: Digest | None = None
    """sha256 (first 16 hex digits) of the adaptive schedule, its fields at defaults left out;
    None: adaptive sampling off (one look at alpha 0.05)."""


class RunRecord(RecordModel):
    """Everything measured about one run. Field order is the on-disk order."""

    schema_version: Literal[1] = 1
    run_id: str
    """Stable: hash of task id + task content hash, arm, model, repetition."""
    scenario: str
    task_id: str
    task_hash: str
    arm: str
    """The mode name (`<mode>@base` for the base-ref checkout of the tool)."""
    model: str
    runner: str
    cli_version: str | None = None
    pricing_updated: dt.date | None = None
    """When the runner's price table was last checked (its `pricing_updated`), kept so a
    report can judge staleness against the run's date for any runner, bundled or custom."""
    repetition: NonNeg
    attempt: Annotated[int, Field(ge=1, le=MAX_COUNT)] = 1
    """1 + the number of infra-error retries before this record."""
    snapshot_commit: str | None = None
    """The commit really checked out for the run."""
    control: bool = False
    category: str = ""
    language: str = ""
    outcome: Outcome
    correct: bool = False
    """Whether the answer was right. A stored record (results, a bundle, a file `analyze`
    reads) of a run that ended `ok` must carry it: left out, the record is refused, never
    counted wrong. On a run that did not end ok, left out is false; an `agent_error` run
    counts as wrong whatever it says."""
    grading: dict[str, Any] = {}
    """Grader detail: matched terms, completeness, test exit code, eval summary."""
    tokens: Tokens = Tokens()
    vendor_cost_usd: Annotated[float, Field(ge=0, allow_inf_nan=False)] | None = None
    """What the CLI reported, when it reports a cost."""
    computed_cost_usd: Annotated[float, Field(ge=0, allow_inf_nan=False)] | None = None
    """Σ tokens × the runner's pricing."""
    cost_usd: Annotated[float, Field(ge=0, allow_inf_nan=False)] | None = 0.0
    """The cost counted in spend (see cost_source). None: unknown (never 0), with
    `cost_unknown_reason`; a report that counts such a run is `invalid`. 0 for a run that
    never reached the agent; a record of a run that reached it without this field has an
    unknown cost (`NO_COST_FIELD`), never 0."""
    cost_source: CostSource = "none"
    cost_unknown_reason: str | None = None
    """Why `cost_usd` is None: the models without a price, a token class the price table
    leaves null, or usage the CLI did not report."""
    served_model: str | None = None
    """The model the endpoint said it served (`model` is the one requested); the cost follows
    it. None: the CLI's output does not say. Differs from `model` → flag `model_remapped`."""
    subagent_sessions: NonNeg = 0
    """Sub-agent sessions the CLI wrote beside the main one (Codex); their usage is in
    `tokens` and the cost."""
    duration_s: Annotated[float, Field(ge=0, allow_inf_nan=False)] = 0.0
    turns: NonNeg = 0
    tool_calls: NonNeg = 0
    tool_adopted: bool | None = None
    """Whether the mode's validity rule saw the tool used (None: no rule)."""
    viewed_spans: list[ViewedSpan] = []
    flags: list[str] = []
    """Behaviour flags: token_snowball, talkative_failure, tool_storm, budget_exhausted,
    timeout, cost_divergence, cost_lower_bound (stopped by the harness mid-run, or running
    when it died: a request in flight may be billed beyond the counted cost), harness_died
    (the harness died during the attempt; recorded on resume from its output),
    instruction_files, tool_failed (every call to the tool under test errored), ..."""
    error: str | None = None
    started_at: dt.datetime | None = None
    run_dir: str | None = None
    """Relative path of the run's directory (transcript, patch, eval) in the output."""
    retrieval: RetrievalSummary | None = None
    """Retrieval metrics against the task's gold (None: the task has no gold, or the run was
    not scored); see docs/retrieval.md."""
    fingerprint: str | None = None
    """Digest of everything that, changed, makes this result stale (runner definition, CLI
    version, model, mode, task, repository pin, run settings, tool content); see
    docs/reuse.md. None: not computed (older records, or a CLI that reports no version)."""
    reused_from: str | None = None
    """sha256 of the verified bundle this record was copied from by `reuse`, unchanged but
    for this field; None: measured by this run."""
    endpoint: Endpoint | None = None
    """What answered the agent (see `Endpoint`); None: not recorded (older records)."""
    design: Design | None = None
    """The statistical design the run was planned under (see `Design`); None: not recorded
    (older records): `analyze` then takes the design from the scenario beside the results,
    or `--scenario`, and judges with the defaults without one."""

    @model_validator(mode="before")
    @classmethod
    def _nothing_by_default(cls, data: Any, info: ValidationInfo) -> Any:
        """A run that reached the agent with no `cost_usd` has an unknown cost
        (`missing_cost`), not the default 0: the default is for runs that never reached
        it. Read back from a file (context `STORED`), an `ok` run with no `correct` is
        refused (`UNGRADED`), not counted wrong by the default: the engine, which builds
        its records before grading them, writes `correct` in every one."""
        if not isinstance(data, dict):
            return data
        if info.context is not None and info.context.get("stored") and ungraded(data):
            raise ValueError(UNGRADED)
        unknown = missing_cost(data)
        return {**data, **unknown} if unknown else data

    @property
    def reached_agent(self) -> bool:
        """Runs that reached the agent are counted in spend, failed or not."""
        return self.outcome not in NOT_REACHED
