"""check-task: proof that a task's grading can tell right from wrong on a real checkout.

`test` tasks: the command fails once the mutations are in, and passes when the real fix (the
mutations undone, as a diff) goes through the grader's path: sanitised by the test-file and
protected-file rules (a fix the sanitiser would drop cannot be graded) and applied exactly to
the mutated tree. A pass is a pass as grading sees it: exit 0, at least one test reported
passed, none failed, every required test passed.
`patch` tasks: the hidden tests fail without the reference fix and pass with it.
"""

from __future__ import annotations

import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from pydantic import Field

from copeca_action._util.model import RecordModel
from copeca_action.errors import ConfigError, CopecaError
from copeca_action.evaluate._apply import ApplyOptions, apply_patch
from copeca_action.evaluate._evaluate import NOT_RUNNABLE
from copeca_action.evaluate._git import base_repo, clone_tree, commit_all, git, reset_tree
from copeca_action.evaluate._patch import sanitize_patch
from copeca_action.evaluate._results import parse_test_output, verdict_of
from copeca_action.evaluate._sandbox import Sandbox, cap_output
from copeca_action.evaluate._taskfiles import beside_task
from copeca_action.evaluate._testfiles import TestFileRules
from copeca_action.scenario import Mutation, Task, TestGrading
from copeca_action.workspace import copy_build_cache


class CheckStep(RecordModel):
    name: str
    expect: Literal["pass", "fail"]
    exit_code: int | None = None
    timed_out: bool = False
    ok: bool
    detail: str = ""
    """Why the step is not ok, or the tail of the command's output."""


class CheckResult(RecordModel):
    task_id: str
    kind: Literal["answer", "test", "patch"]
    ok: bool
    steps: list[CheckStep] = Field(default_factory=list)
    note: str = ""


@dataclass(frozen=True)
class CacheUse:
    """A warm build cache the test commands get a private copy of, in `env`."""

    env: str
    warm: Path


def check_task(task: Task, task_file: Path, checkout: Path, sandbox: Sandbox,
               build_cache: CacheUse | None = None,
               rules: TestFileRules | None = None) -> CheckResult:
    """Run the task's grading both ways on a clean tree made from `checkout`. With
    `build_cache`, every step gets its own copy of the warm cache (as grading does); `rules`
    are the repository's test-file rules (default: the built-in ones plus the task's
    `protected` globs).

    Raises:
        ConfigError: the task cannot be checked as written (missing patch files, a mutation
            whose search text is not found exactly once).
    """
    kind = task.grading.kind
    if kind == "answer":
        return CheckResult(task_id=task.id, kind=kind, ok=True,
                           note="answer tasks have no command to check")
    base = base_repo(checkout, task.commit)
    scratch = Path(tempfile.mkdtemp(prefix="copeca-check-"))
    try:
        tree = clone_tree(base, scratch)
        if task.grading.test is not None:
            test = task.grading.test
            rules = rules or TestFileRules.from_patterns([], test.protected)
            _mutate(tree, task_file, test.mutations)
            mutated = commit_all(tree, "mutated")
            steps = [_step(sandbox, tree, "mutated snapshot", "fail", test.command,
                           test.timeout_s, build_cache, test.tests)]
            reset_tree(tree, mutated)
            steps.append(_fixed_step(sandbox, tree, base.commit, mutated, test, rules,
                                     build_cache))
        else:
            steps = _check_patch(task, task_file, tree, base.commit, sandbox, build_cache)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return CheckResult(task_id=task.id, kind=kind, ok=all(s.ok for s in steps), steps=steps)


def _fixed_step(sandbox: Sandbox, tree: Path, clean: str, mutated: str, test: TestGrading,
                rules: TestFileRules, build_cache: CacheUse | None) -> CheckStep:
    """The real fix as a run's diff: sanitised and applied as grading does, then tested."""
    name = "real fix, sanitised and applied"
    fix = git(tree, "diff", "--binary", "--no-color", mutated, clean).stdout
    sanitised = sanitize_patch(fix, rules)
    if sanitised.too_large is not None:
        return CheckStep(name=name, expect="pass", ok=False, detail=(
            "the fix is beyond what grading reads, so no run could pass: "
            + sanitised.too_large))
    if sanitised.dropped or sanitised.empty:
        dropped = ", ".join(f"{d.path} ({d.rule})" for d in sanitised.dropped)
        return CheckStep(name=name, expect="pass", ok=False, detail=(
            "the fix changes files the grader never applies: " + (dropped or "nothing left")))
    applied = apply_patch(tree, sanitised.text, ApplyOptions.strict())
    if not applied.applied:
        return CheckStep(name=name, expect="pass", ok=False,
                         detail="the fix does not apply to the mutated tree:\n" + applied.log)
    return _step(sandbox, tree, name, "pass", test.command, test.timeout_s, build_cache,
                 test.tests)


def _check_patch(task: Task, task_file: Path, tree: Path, commit: str,
                 sandbox: Sandbox, build_cache: CacheUse | None) -> list[CheckStep]:
    spec = task.grading.patch
    assert spec is not None
    if spec.reference_patch is None:
        raise ConfigError(f"{task_file}: grading.patch.reference_patch: check-task needs a "
                          "known-good fix to prove the hidden tests can pass")
    tests = _read(task_file, spec.tests_patch, "grading.patch.tests_patch")
    fix = _read(task_file, spec.reference_patch, "grading.patch.reference_patch")
    steps: list[CheckStep] = []
    plan: list[tuple[str, Literal["pass", "fail"], list[str]]] = [
        ("hidden tests without the fix", "fail", [tests]),
        ("hidden tests with the reference fix", "pass", [fix, tests])]
    for name, expect, patches in plan:
        reset_tree(tree, commit)
        failed = next((p for p in patches if not apply_patch(tree, p).applied), None)
        if failed is not None:
            which = "tests_patch" if failed is tests else "reference_patch"
            steps.append(CheckStep(name=name, expect=expect, ok=False,
                                   detail=f"{which} does not apply to the clean snapshot"))
            continue
        steps.append(_step(sandbox, tree, name, expect, spec.command, spec.timeout_s,
                           build_cache, spec.tests))
    return steps


def _read(task_file: Path, rel: str, field: str) -> str:
    return beside_task(task_file, rel, field).read_bytes().decode("utf-8", "surrogateescape")


def _mutate(tree: Path, task_file: Path, mutations: list[Mutation]) -> None:
    for i, mutation in enumerate(mutations):
        target = tree / mutation.file
        text = target.read_text() if target.is_file() else ""
        count = text.count(mutation.search)
        if count != 1:
            raise ConfigError(f"{task_file}: grading.test.mutations[{i}].search: found {count} "
                              f"times in {mutation.file}; it must occur exactly once")
        target.write_text(text.replace(mutation.search, mutation.replace))


def _step(sandbox: Sandbox, tree: Path, name: str, expect: Literal["pass", "fail"],
          command: list[str], timeout_s: float, build_cache: CacheUse | None,
          tests: list[str]) -> CheckStep:
    copy_root = Path(tempfile.mkdtemp(prefix="copeca-build-cache-")) if build_cache else None
    try:
        if build_cache is not None and copy_root is not None:
            copy = copy_build_cache(build_cache.warm, copy_root / "cache")
            ran = sandbox.run(tree, command, timeout_s=timeout_s,
                              env={build_cache.env: str(copy)}, writable=[copy])
        else:
            ran = sandbox.run(tree, command, timeout_s=timeout_s)
    except CopecaError as exc:
        return CheckStep(name=name, expect=expect, ok=False, detail=f"sandbox error: {exc}")
    finally:
        if copy_root is not None:
            shutil.rmtree(copy_root, ignore_errors=True)
    if ran.exit_code in NOT_RUNNABLE:
        return CheckStep(name=name, expect=expect, exit_code=ran.exit_code, ok=False,
                         detail=f"{NOT_RUNNABLE[ran.exit_code]}: {' '.join(command)}")
    passed, why = verdict_of(ran.exit_code, ran.timed_out, parse_test_output(ran.output),
                             ran.output, tests)
    ok = passed == (expect == "pass")
    detail = cap_output(ran.output, 1500)
    if why is not None and not ok:
        detail = f"{why}\n{detail}"
    return CheckStep(name=name, expect=expect, exit_code=ran.exit_code, timed_out=ran.timed_out,
                     ok=ok, detail=detail)
