"""eval.json and eval_summary.json: CooperBench's field names first, our additions after.

Field order is the file format (models dump in declaration order).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from pydantic import Field

from copeca_action._util.model import RecordModel
from copeca_action.evaluate._apply import Strategy
from copeca_action.evaluate._patch import DroppedFile

Setting = Literal["solo", "coop"]
MergeStatus = Literal["clean", "conflict", "failed"]
RunStatus = Literal["pass", "fail", "error"]


@dataclass(frozen=True)
class FeatureSpec:
    """One feature's hidden tests: a tests patch and the command that runs them."""

    id: int
    tests_patch: str
    command: list[str]
    timeout_s: float = 600.0
    junit: tuple[str, ...] = ()
    """Tree-relative JUnit XML files the command writes (read back for counts)."""
    env: dict[str, str] = field(default_factory=dict)
    tests: tuple[str, ...] = ()
    """Tests that must be reported passed (names or node ids); empty: any passing run."""


class FeatureResult(RecordModel):
    """One feature's hidden tests on the evaluated tree."""

    feature_id: int
    passed: bool
    """The command exited 0 within its timeout, its output showed at least one test passed
    and none failed, and every required test passed (see `reason` otherwise)."""
    exit_code: int | None = None
    tests_passed: int = 0
    tests_failed: int = 0
    tests_total: int = 0
    test_output: str = ""
    """Command output (head and tail kept), or why the command did not run."""
    timed_out: bool = False
    duration_s: float = 0.0
    framework: str | None = None
    """The output format the counts came from (pytest, go, cargo, jest, vitest, node, junit)."""
    tests_patch_strategy: Strategy | None = None
    """How the hidden tests patch applied."""
    reason: str | None = None
    """Why the feature did not pass (None when it passed, or when the tests never ran and
    `test_output` says why; but a patch too large to read is named here too)."""


class MergeResult(RecordModel):
    """How two agents' patches combined (coop only)."""

    status: MergeStatus
    """`clean`; `conflict` (see conflicted_files; strategy says whether union resolved it);
    `failed` (a patch did not apply to the base)."""
    strategy: Literal["naive", "union"] | None = None
    """The merge whose tree was tested; None when no tree was tested."""
    conflicted_files: list[str] = Field(default_factory=list)
    failed_patch: str | None = None
    """Which patch did not apply, when status is failed."""
    diff: str = ""
    """The merged change against the base (first 5,000 characters)."""


class PatchReport(RecordModel):
    """What sanitising and applying did to one agent patch."""

    files: list[str] = Field(default_factory=list)
    dropped: list[DroppedFile] = Field(default_factory=list)
    normalized: list[str] = Field(default_factory=list)
    empty: bool = False
    too_large: str | None = None
    """Why the patch was not read (beyond the bounds of `sanitize_patch`): a failure of the
    agent's, nothing applied."""
    applied: bool = False
    strategy: Strategy | None = None
    apply_log: str = ""
    apply_options: dict[str, object] = Field(default_factory=dict)
    """The leniencies the apply ladder was allowed (`ignore_whitespace`, `fuzz`)."""


class EvalResult(RecordModel):
    """eval.json: one run's evaluation."""

    repo: str
    task_id: str
    features: list[int]
    setting: Setting
    merge: MergeResult | None = None
    feature1: FeatureResult | None = None
    feature2: FeatureResult | None = None
    both_passed: bool = False
    """Every feature's tests passed (the run is correct)."""
    error: str | None = None
    """The harness failed (not the agent): excluded from pass rates."""
    evaluated_at: str
    backend: str = ""
    isolation: list[str] = Field(default_factory=list)
    patches: dict[str, PatchReport] = Field(default_factory=dict)
    duration_s: float = 0.0

    @property
    def status(self) -> RunStatus:
        if self.error:
            return "error"
        return "pass" if self.both_passed else "fail"


class RunSummary(RecordModel):
    run: str
    """`setting/repo/task/fA_fB`."""
    status: RunStatus | Literal["pending"]
    error: str | None = None


class EvalSummary(RecordModel):
    """eval_summary.json: every run of the experiment, evaluated now or before."""

    run_name: str
    evaluated_at: str
    total_runs: int
    """Runs in the experiment's log tree (whatever the filters of this invocation)."""
    passed: int
    failed: int
    errors: int
    skipped: int
    """Runs with no eval.json yet (filtered out, or never evaluated)."""
    pass_rate: float | None
    """passed / (passed + failed): errors and skipped runs are excluded; None with no data."""
    results: list[RunSummary] = Field(default_factory=list)
