"""The `test` grader: run a command in the agent's worktree after the agent finished."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

from copeca_action.agent import WATCHDOG
from copeca_action.evaluate import Sandbox
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


def grade_test(workdir: Path, spec: TestGrading, env: Mapping[str, str],
               placeholders: Mapping[str, str] | None = None, *,
               sandbox: Sandbox | None = None, writable: Sequence[Path] = ()) -> GradeResult:
    """Correct when the command exits 0 within its timeout. The command runs the agent's code,
    so the engine runs it in a `sandbox` (no network, read-only host but for the worktree and
    `writable`); without one, on the host in its own process group, killed on timeout.
    Output is captured and capped."""
    argv = expand(list(spec.command), placeholders or {})
    if sandbox is not None:
        res = sandbox.run(workdir, argv, timeout_s=spec.timeout_s, env=env, writable=writable)
        return GradeResult(kind="test", correct=res.exit_code == 0 and not res.timed_out,
                           detail={"argv": argv,
                                   "exit_code": None if res.timed_out else res.exit_code,
                                   "timed_out": res.timed_out, "duration_s": res.duration_s,
                                   "output": cap(res.output), "isolation": res.isolation})
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
    return GradeResult(kind="test", correct=code == 0 and not timed_out, detail={
        "argv": argv, "exit_code": None if timed_out else code, "timed_out": timed_out,
        "duration_s": round(time.monotonic() - started, 3), "output": cap(output)})


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)
