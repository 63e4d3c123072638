"""Solo and coop evaluation: sanitised patches on a clean tree, hidden tests in a sandbox.

Who is at fault decides the outcome. The agent's fault is a failure: its patch is beyond the
bounds of `sanitize_patch` (not read), empty after sanitising, does not apply, conflicts beyond
repair, or the tests fail or time out. The
harness's fault is an error: the tests patch does not apply to the clean tree, the test
command cannot be started, the sandbox or git broke. Errors are excluded from pass rates.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import tempfile
import time
from collections.abc import Iterator, Sequence
from pathlib import Path

from copeca_action.errors import CopecaError, InfraError
from copeca_action.evaluate._apply import ApplyOptions, apply_patch
from copeca_action.evaluate._git import (
    BaseRepo,
    clone_tree,
    commit_all,
    git,
    reset_tree,
    union_attributes,
    verify_tree,
)
from copeca_action.evaluate._models import (
    EvalResult,
    FeatureResult,
    FeatureSpec,
    MergeResult,
    PatchReport,
)
from copeca_action.evaluate._patch import SanitizedPatch, normalize_patch, sanitize_patch
from copeca_action.evaluate._results import parse_test_output, verdict_of
from copeca_action.evaluate._sandbox import Sandbox, cap_output
from copeca_action.evaluate._testfiles import TestFileRules

NOT_RUNNABLE = {126: "command not executable", 127: "command not found"}
"""Exit codes that mean the test command never ran: a harness error, not a failure."""


def now_iso() -> str:
    return dt.datetime.now(dt.UTC).isoformat(timespec="seconds")


def evaluate_solo(base: BaseRepo, features: Sequence[FeatureSpec], patch: str, sandbox: Sandbox,
                  *, repo: str, task_id: str, rules: TestFileRules | None = None,
                  work_dir: Path | None = None,
                  options: ApplyOptions | None = None) -> EvalResult:
    """One patch against every feature's hidden tests, each on its own clean tree; `options`
    are the apply ladder's leniencies (default: `ApplyOptions()`), recorded per patch."""
    start = time.monotonic()
    clean = sanitize_patch(patch, rules)
    report = _report(clean)
    results: list[FeatureResult] = []
    error: str | None = None
    isolation: list[str] = []
    if clean.too_large is not None:
        return _result(repo, task_id, features, "solo", None,
                       [_not_run(f, clean.too_large, reason=clean.too_large) for f in features],
                       None, sandbox, isolation, {"solo": report}, start)
    with _scratch(work_dir) as scratch:
        try:
            tree = clone_tree(base, scratch)
            applied = apply_patch(tree, clean.text, options)
            report = _report(clean, applied.applied, applied.strategy, applied.log,
                             applied.options)
            if clean.empty:
                results = [_not_run(f, "empty patch after sanitising: nothing to test"
                                    + _dropped_note(clean)) for f in features]
            elif not applied.applied:
                results = [_not_run(f, "the patch does not apply:\n" + applied.log)
                           for f in features]
            else:
                head = commit_all(tree, "agent patch")
                for feature in features:
                    result, isolation = _run_feature(tree, head, base.commit, feature, sandbox)
                    results.append(result)
        except CopecaError as exc:
            error = str(exc)
    return _result(repo, task_id, features, "solo", None, results, error, sandbox, isolation,
                   {"solo": report}, start)


def evaluate_coop(base: BaseRepo, features: Sequence[FeatureSpec], patches: Sequence[str],
                  sandbox: Sandbox, *, repo: str, task_id: str,
                  rules: TestFileRules | None = None, work_dir: Path | None = None,
                  options: ApplyOptions | None = None) -> EvalResult:
    """Two agents' patches: each applied to the base and committed, then agent1's commit
    merged into agent2's, as CooperBench does (naive, union as the recorded fallback); both
    features' tests run on the merged tree."""
    start = time.monotonic()
    names = [f"agent{f.id}" for f in features]
    cleaned = [sanitize_patch(p, rules) for p in patches]
    reports = {n: _report(c) for n, c in zip(names, cleaned, strict=True)}
    results: list[FeatureResult] = []
    merge: MergeResult | None = None
    error: str | None = None
    isolation: list[str] = []
    large = [f"{n}'s patch: {c.too_large}" for n, c in zip(names, cleaned, strict=True)
             if c.too_large is not None]
    if large:
        why = "; ".join(large)
        return _result(repo, task_id, features, "coop", None,
                       [_not_run(f, why, reason=why) for f in features], None, sandbox,
                       isolation, reports, start)
    with _scratch(work_dir) as scratch:
        try:
            tree = clone_tree(base, scratch)
            heads: list[str] = []
            for name, clean in zip(names, cleaned, strict=True):
                reset_tree(tree, base.commit)
                applied = apply_patch(tree, clean.text, options)
                reports[name] = _report(clean, applied.applied, applied.strategy, applied.log,
                                        applied.options)
                if not applied.applied:
                    merge = MergeResult(status="failed", failed_patch=name)
                    break
                heads.append(commit_all(tree, name))
            if merge is None:
                # CooperBench's order: agent2's branch checked out, agent1's merged into it
                # (the order decides union merges and which side a clean merge keeps first).
                merge, merged = _merge(tree, base.commit, heads[1], heads[0])
                if merged is not None:
                    for feature in features:
                        result, isolation = _run_feature(tree, merged, base.commit, feature,
                                                         sandbox)
                        results.append(result)
            if not results:
                why = ("merge conflict not resolved by a union merge" if merge.status == "conflict"
                       else f"{merge.failed_patch}'s patch does not apply")
                results = [_not_run(f, why) for f in features]
        except CopecaError as exc:
            error = str(exc)
    return _result(repo, task_id, features, "coop", merge, results, error, sandbox, isolation,
                   reports, start)


def _merge(tree: Path, base: str, first: str, second: str) -> tuple[MergeResult, str | None]:
    """Merge `second` into `first` (checked out); on conflict record the files and retry as a
    union merge, whose result keeps `first`'s lines before `second`'s in each conflict."""
    git(tree, "checkout", "-q", "--detach", first)
    proc = git(tree, "merge", "--no-ff", "--no-edit", "-m", "merge", second, check=False)
    if proc.returncode == 0:
        merged = git(tree, "rev-parse", "HEAD").stdout.strip()
        return MergeResult(status="clean", strategy="naive", diff=_diff(tree, base, merged)), merged
    conflicted = sorted(git(tree, "diff", "--name-only", "--diff-filter=U",
                            check=False).stdout.split())
    git(tree, "merge", "--abort", check=False)
    reset_tree(tree, first)
    with union_attributes(tree):
        proc = git(tree, "merge", "--no-ff", "--no-edit", "-m", "union merge", second, check=False)
    if proc.returncode != 0:
        git(tree, "merge", "--abort", check=False)
        return MergeResult(status="conflict", conflicted_files=conflicted), None
    merged = git(tree, "rev-parse", "HEAD").stdout.strip()
    return MergeResult(status="conflict", strategy="union", conflicted_files=conflicted,
                       diff=_diff(tree, base, merged)), merged


def _diff(tree: Path, base: str, head: str) -> str:
    return git(tree, "diff", "--binary", base, head).stdout[:5000]


def _run_feature(tree: Path, head: str, base: str, feature: FeatureSpec,
                 sandbox: Sandbox) -> tuple[FeatureResult, list[str]]:
    """The feature's tests patch on `head`, then its command in the sandbox."""
    reset_tree(tree, head)
    tests_patch, _ = normalize_patch(feature.tests_patch)
    applied = apply_patch(tree, tests_patch)
    if not applied.applied:
        reset_tree(tree, base)
        on_base = apply_patch(tree, tests_patch)
        reset_tree(tree, head)
        if not on_base.applied:
            raise InfraError(f"feature {feature.id}: the tests patch does not apply to the "
                               f"clean tree:\n{applied.log}")
        return _not_run(feature, "the hidden tests patch conflicts with the agent's patch:\n"
                        + applied.log), []
    ran = sandbox.run(tree, feature.command, timeout_s=feature.timeout_s, env=feature.env,
                      collect=feature.junit)
    verify_tree(tree)  # the graded code ran there: its git data must be as it was
    if ran.exit_code in NOT_RUNNABLE:
        raise InfraError(f"feature {feature.id}: {NOT_RUNNABLE[ran.exit_code]}: "
                           f"{' '.join(feature.command)}\n{cap_output(ran.output, 2000)}")
    counts = parse_test_output(ran.output, list(ran.files.values()))
    passed, why = verdict_of(ran.exit_code, ran.timed_out, counts, ran.output, feature.tests)
    result = FeatureResult(
        feature_id=feature.id, passed=passed, reason=why,
        exit_code=ran.exit_code, tests_passed=counts.passed,
        tests_failed=counts.failed + counts.errors, tests_total=counts.total,
        test_output=cap_output(ran.output), timed_out=ran.timed_out, duration_s=ran.duration_s,
        framework=counts.framework, tests_patch_strategy=applied.strategy)
    return result, ran.isolation


def _not_run(feature: FeatureSpec, why: str, reason: str | None = None) -> FeatureResult:
    return FeatureResult(feature_id=feature.id, passed=False, test_output=why, reason=reason)


def _dropped_note(clean: SanitizedPatch) -> str:
    if not clean.dropped:
        return ""
    return " (test files dropped: " + ", ".join(d.path for d in clean.dropped) + ")"


def _report(clean: SanitizedPatch, applied: bool = False, strategy: str | None = None,
            log: str = "", options: dict[str, object] | None = None) -> PatchReport:
    return PatchReport.model_validate({
        "files": clean.files, "dropped": clean.dropped, "normalized": clean.normalized,
        "empty": clean.empty, "too_large": clean.too_large, "applied": applied,
        "strategy": strategy, "apply_log": log, "apply_options": options or {}})


def _result(repo: str, task_id: str, features: Sequence[FeatureSpec], setting: str,
            merge: MergeResult | None, results: list[FeatureResult], error: str | None,
            sandbox: Sandbox, isolation: list[str], reports: dict[str, PatchReport],
            start: float) -> EvalResult:
    if error:
        results = []
    return EvalResult.model_validate({
        "repo": repo, "task_id": task_id, "features": [f.id for f in features],
        "setting": setting, "merge": merge,
        "feature1": results[0] if results else None,
        "feature2": results[1] if len(results) > 1 else None,
        "both_passed": bool(results) and all(r.passed for r in results) and not error,
        "error": error, "evaluated_at": now_iso(), "backend": sandbox.name,
        "isolation": isolation, "patches": reports,
        "duration_s": round(time.monotonic() - start, 3)})


@contextlib.contextmanager
def _scratch(parent: Path | None) -> Iterator[Path]:
    """A temporary folder for one evaluation's trees, removed afterwards."""
    with tempfile.TemporaryDirectory(prefix="copeca-eval-", dir=parent,
                                     ignore_cleanup_errors=True) as tmp:
        yield Path(tmp)
