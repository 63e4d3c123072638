"""The `test` grader: the task's tests on a clean tree plus the agent's sanitised change.

Nothing the agent's diff controls decides the grade: its changes to test files and protected
runner configuration are dropped (and flagged `tests_modified`), the rest is applied to a fresh
checkout of the start commit (planted bugs included), and a pass needs the runner's own report
of passing tests, not only exit code 0.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import tempfile
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

from copeca_action.agent import WATCHDOG
from copeca_action.evaluate import (
    ApplyOptions,
    BaseRepo,
    Sandbox,
    TestFileRules,
    apply_patch,
    clone_tree,
    parse_test_output,
    sanitize_patch,
    verdict_of,
)
from copeca_action.grade._result import GradeResult
from copeca_action.scenario import TestGrading

OUTPUT_CAP = 16_000
"""Characters of test output kept in the record (head and tail, the middle elided)."""


def cap(text: str, limit: int = OUTPUT_CAP) -> str:
    """Keep the first and last halves of `limit`: the command line and the failure summary."""
    if len(text) <= limit:
        return text
    half = limit // 2
    return f"{text[:half]}\n[... {len(text) - limit} characters elided ...]\n{text[-half:]}"


def expand(argv: list[str], placeholders: Mapping[str, str]) -> list[str]:
    out = []
    for arg in argv:
        for key, value in placeholders.items():
            arg = arg.replace("{" + key + "}", value)
        out.append(arg)
    return out


def grade_test_clean(base: BaseRepo, patch_text: str, spec: TestGrading,
                     env: Mapping[str, str], placeholders: Mapping[str, str] | None = None, *,
                     rules: TestFileRules, scratch: Path, sandbox: Sandbox | None = None,
                     writable: Sequence[Path] = ()) -> GradeResult:
    """Grade an edit run from its diff alone: `patch_text` (the agent's change against
    `base.commit`, the start commit with its planted bugs) is sanitised by `rules` (test files
    and protected files dropped), applied exactly to a fresh clone of `base.commit` made under
    `scratch`, and the task's tests run there (`{workdir}` is that clone). The clone is removed
    afterwards. `detail.tests_modified` says whether anything was dropped. A change beyond the
    bounds of `sanitize_patch` is graded incorrect unread (`detail.patch_too_large`): the
    agent's output, not the harness's failure.

    Raises:
        CopecaError: the clean tree could not be made (git broke: the harness's fault).
    """
    clean = sanitize_patch(patch_text, rules)
    dropped = [d.model_dump() for d in clean.dropped]
    sanitised: dict[str, object] = {"files": clean.files, "dropped": dropped,
                                    "ignored": [d.path for d in clean.ignored][:50],
                                    "normalized": clean.normalized, "empty": clean.empty}
    extra: dict[str, object] = {"tests_modified": bool(clean.dropped), "sanitised": sanitised}
    if clean.too_large is not None:  # the agent's change, not the harness: a wrong answer
        return GradeResult(kind="test", correct=False, detail={
            **extra, "patch_too_large": True,
            "reason": f"the agent's change was not graded: {clean.too_large}; nothing of it "
            "was applied (no answer to a task comes near the bound)"})
    if clean.empty:
        return GradeResult(kind="test", correct=False, detail={
            **extra, "reason": "no change left to test after sanitising"
            + (" (only test or protected files were changed)" if clean.dropped else "")})
    scratch.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="copeca-grade-", dir=scratch,
                                     ignore_cleanup_errors=True) as tmp:
        tree = clone_tree(base, Path(tmp))
        applied = apply_patch(tree, clean.text, ApplyOptions.strict())
        extra["apply"] = {"strategy": applied.strategy, "options": applied.options}
        if not applied.applied:
            return GradeResult(kind="test", correct=False, detail={
                **extra, "reason": "the agent's change does not apply to a clean checkout of "
                "the start commit:\n" + applied.log[-2000:]})
        values = {**(placeholders or {}), "workdir": str(tree)}
        graded = grade_test(tree, spec, env, values, sandbox=sandbox, writable=writable)
    return graded.model_copy(update={"detail": {**graded.detail, **extra}})


def _verdict(spec: TestGrading, exit_code: int | None, timed_out: bool,
             output: str) -> tuple[bool, dict[str, object]]:
    counts = parse_test_output(output)
    ok, why = verdict_of(exit_code, timed_out, counts, output, spec.tests)
    detail: dict[str, object] = {"tests_passed": counts.passed,
                                 "tests_failed": counts.failed + counts.errors,
                                 "framework": counts.framework}
    if why is not None:
        detail["reason"] = why
    return ok, detail


def grade_test(workdir: Path, spec: TestGrading, env: Mapping[str, str],
               placeholders: Mapping[str, str] | None = None, *,
               sandbox: Sandbox | None = None, writable: Sequence[Path] = ()) -> GradeResult:
    """Run the command over `workdir` as it is (the engine grades on a clean tree with
    `grade_test_clean`). Correct when it exits 0 within its timeout and its output shows at
    least one test passed, none failed, and every test in `spec.tests` passed. The command
    runs the agent's code, so the engine runs it in a `sandbox` (no network, read-only host
    but for the tree and `writable`); without one, on the host in its own process group,
    killed on timeout. Output is captured and capped."""
    argv = expand(list(spec.command), placeholders or {})
    if sandbox is not None:
        res = sandbox.run(workdir, argv, timeout_s=spec.timeout_s, env=env, writable=writable)
        ok, verdict = _verdict(spec, res.exit_code, res.timed_out, res.output)
        return GradeResult(kind="test", correct=ok,
                           detail={"argv": argv,
                                   "exit_code": None if res.timed_out else res.exit_code,
                                   "timed_out": res.timed_out, "duration_s": res.duration_s,
                                   **verdict, "output": cap(res.output),
                                   "isolation": res.isolation})
    started = time.monotonic()
    try:
        proc = subprocess.Popen(argv, cwd=workdir, env=dict(env), stdin=subprocess.DEVNULL,
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                start_new_session=True)
    except OSError as exc:
        return GradeResult(kind="test", correct=False, detail={
            "argv": argv, "exit_code": None, "timed_out": False,
            "error": f"cannot start the test command: {exc}"})
    timed_out = False
    WATCHDOG.watch(proc.pid)  # the group dies with the harness, even on kill -9
    try:
        raw, _ = proc.communicate(timeout=spec.timeout_s)
    except subprocess.TimeoutExpired:
        timed_out = True
        _kill_group(proc)
        raw, _ = proc.communicate()
    finally:
        WATCHDOG.forget(proc.pid)
    output = raw.decode("utf-8", "replace")
    code = proc.returncode
    ok, verdict = _verdict(spec, None if timed_out else code, timed_out, output)
    return GradeResult(kind="test", correct=ok, detail={
        "argv": argv, "exit_code": None if timed_out else code, "timed_out": timed_out,
        "duration_s": round(time.monotonic() - started, 3), **verdict, "output": cap(output)})


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)
