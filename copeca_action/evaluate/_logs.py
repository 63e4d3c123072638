"""An experiment's log tree: `logs/NAME/{solo,coop}/REPO/TASK/fA_fB/` with `solo.patch` or
`agentA.patch` + `agentB.patch` (A, B the feature numbers), and `eval.json` written beside them.
"""

from __future__ import annotations

import contextlib
import fnmatch
import json
import os
import re
import tempfile
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass
from pathlib import Path

from pydantic import ValidationError

from copeca_action.errors import CopecaError, InfraError
from copeca_action.evaluate._apply import ApplyOptions
from copeca_action.evaluate._evaluate import evaluate_coop, evaluate_solo, now_iso
from copeca_action.evaluate._git import BaseRepo
from copeca_action.evaluate._models import EvalResult, EvalSummary, FeatureSpec, RunSummary
from copeca_action.evaluate._sandbox import Sandbox
from copeca_action.evaluate._testfiles import TestFileRules

SETTINGS = ("solo", "coop")
PAIR_RE = re.compile(r"^f(\d+)_f(\d+)\Z")
EVAL_FILE = "eval.json"
SUMMARY_FILE = "eval_summary.json"


@dataclass(frozen=True)
class LoggedRun:
    """One run folder of the tree."""

    setting: str
    repo: str
    task: str
    features: tuple[int, int]
    path: Path

    @property
    def name(self) -> str:
        a, b = self.features
        return f"{self.setting}/{self.repo}/{self.task}/f{a}_f{b}"

    def patch_files(self) -> list[Path]:
        """solo.patch; or agent{A}.patch and agent{B}.patch (agentA/agentB.patch accepted)."""
        if self.setting == "solo":
            return [self.path / "solo.patch"]
        found = []
        for number, letter in zip(self.features, "AB", strict=True):
            by_letter = self.path / f"agent{letter}.patch"
            by_number = self.path / f"agent{number}.patch"
            found.append(by_letter if by_letter.exists() and not by_number.exists()
                         else by_number)
        return found


@dataclass(frozen=True)
class Resolved:
    """What evaluating a run needs, found by the caller (corpus, checkout, sandbox)."""

    base: BaseRepo
    features: list[FeatureSpec]
    sandbox: Sandbox
    rules: TestFileRules
    options: ApplyOptions | None = None
    """The apply ladder's leniencies (recorded in each eval.json); None: the defaults."""


Resolver = Callable[[LoggedRun], Resolved]


def discover_runs(logs_root: Path, name: str, *, subset: Iterable[str] = (),
                  repo: str | None = None, task: str | None = None,
                  features: Sequence[int] | None = None) -> list[LoggedRun]:
    """Run folders of experiment `name`, filtered; `subset` holds `repo/task` globs."""
    root = logs_root / name
    patterns = list(subset)
    runs: list[LoggedRun] = []
    for setting in SETTINGS:
        for run_dir in sorted((root / setting).glob("*/*/*")):
            match = PAIR_RE.match(run_dir.name)
            if not (run_dir.is_dir() and match):
                continue
            pair = (int(match.group(1)), int(match.group(2)))
            run = LoggedRun(setting, run_dir.parent.parent.name, run_dir.parent.name, pair,
                            run_dir)
            if (repo and run.repo != repo) or (task and run.task != task):
                continue
            if features and sorted(features) != sorted(pair):
                continue
            if patterns and not any(fnmatch.fnmatchcase(f"{run.repo}/{run.task}", p)
                                    for p in patterns):
                continue
            runs.append(run)
    return runs


def read_patch(path: Path) -> str:
    """A patch file as text with every byte kept (CRs included, undecodable bytes escaped)."""
    return path.read_bytes().decode("utf-8", "surrogateescape")


def read_eval(path: Path) -> EvalResult | None:
    """A run's eval.json, or None when absent or unreadable (it will be evaluated again)."""
    try:
        return EvalResult.model_validate_json(path.read_text())
    except (OSError, ValidationError):
        return None


def write_json_atomic(path: Path, text: str) -> None:
    fd, tmp = tempfile.mkstemp(prefix=".tmp-", dir=path.parent)
    with os.fdopen(fd, "w") as fh:
        fh.write(text)
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)


def write_eval(run_dir: Path, result: EvalResult) -> Path:
    path = run_dir / EVAL_FILE
    write_json_atomic(path, result.model_dump_json(indent=2) + "\n")
    return path


def evaluate_run(run: LoggedRun, resolve: Resolver) -> EvalResult:
    """Evaluate one run folder; anything the harness cannot do becomes the result's error."""
    try:
        patches = []
        for patch_file in run.patch_files():
            if not patch_file.is_file():
                raise InfraError(f"{patch_file.name} missing in {run.path}")
            patches.append(read_patch(patch_file))
        got = resolve(run)
        if run.setting == "solo":
            return evaluate_solo(got.base, got.features, patches[0], got.sandbox,
                                 repo=run.repo, task_id=run.task, rules=got.rules,
                                 options=got.options)
        return evaluate_coop(got.base, got.features, patches, got.sandbox, repo=run.repo,
                             task_id=run.task, rules=got.rules, options=got.options)
    except CopecaError as exc:
        return EvalResult(repo=run.repo, task_id=run.task, features=list(run.features),
                          setting=run.setting,
                          error=str(exc), evaluated_at=now_iso())


@dataclass(frozen=True)
class Outcome:
    run: LoggedRun
    result: EvalResult
    reused: bool


def evaluate_experiment(runs: Sequence[LoggedRun], resolve: Resolver, *, concurrency: int = 1,
                        force: bool = False,
                        on_done: Callable[[Outcome], None] | None = None) -> list[Outcome]:
    """Evaluate runs in parallel, reusing eval.json files unless `force`; writes each
    eval.json as soon as it is known."""
    outcomes: list[Outcome] = []

    def one(run: LoggedRun) -> Outcome:
        existing = None if force else read_eval(run.path / EVAL_FILE)
        if existing is not None:
            return Outcome(run, existing, True)
        result = evaluate_run(run, resolve)
        write_eval(run.path, result)
        return Outcome(run, result, False)

    with ThreadPoolExecutor(max_workers=max(1, concurrency)) as pool:
        futures = [pool.submit(one, run) for run in runs]
        for future in as_completed(futures):
            outcome = future.result()
            outcomes.append(outcome)
            if on_done:
                on_done(outcome)
    order = {run.path: i for i, run in enumerate(runs)}
    return sorted(outcomes, key=lambda o: order[o.run.path])


def summarize_experiment(logs_root: Path, name: str) -> EvalSummary:
    """The summary of the whole experiment: every run folder, evaluated now or earlier."""
    passed = failed = errors = skipped = 0
    rows: list[RunSummary] = []
    for run in discover_runs(logs_root, name):
        result = read_eval(run.path / EVAL_FILE)
        if result is None:
            skipped += 1
            rows.append(RunSummary(run=run.name, status="pending"))
            continue
        status = result.status
        passed += status == "pass"
        failed += status == "fail"
        errors += status == "error"
        rows.append(RunSummary(run=run.name, status=status, error=result.error))
    decided = passed + failed
    return EvalSummary(run_name=name, evaluated_at=now_iso(), total_runs=len(rows),
                       passed=passed, failed=failed, errors=errors, skipped=skipped,
                       pass_rate=round(passed / decided, 6) if decided else None, results=rows)


def write_summary(logs_root: Path, summary: EvalSummary) -> Path:
    path = logs_root / summary.run_name / SUMMARY_FILE
    with contextlib.suppress(FileExistsError):
        path.parent.mkdir(parents=True, exist_ok=True)
    write_json_atomic(path, json.dumps(summary.model_dump(mode="json"), indent=2) + "\n")
    return path
