"""Running one agent CLI: its own process group, no stdin, output to files, and a timeout or
a cancel that kills the whole group. Agent failures are results, never exceptions."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import threading
import time
from pathlib import Path

from copeca_action._util.model import RecordModel
from copeca_action.agent._invocation import AgentInvocation
from copeca_action.agent._watchdog import WATCHDOG
from copeca_action.errors import InfraError

GRACE_S = 2.0
"""After SIGTERM, how long the group may take to exit before SIGKILL."""
_POLL_S = 0.05


class AgentResult(RecordModel):
    """How the process ended. `exit_code` is None when it was killed by us."""

    exit_code: int | None
    pid: int | None = None
    """The CLI's process id, also its process group id (the group we kill)."""
    timed_out: bool = False
    cancelled: bool = False
    duration_s: float
    stdout_path: Path
    stderr_path: Path


def _kill_group(pgid: int, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)


def _stop(proc: subprocess.Popen[bytes]) -> None:
    """SIGTERM the group, then SIGKILL whatever is left after the grace period."""
    _kill_group(proc.pid, signal.SIGTERM)
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(timeout=GRACE_S)
    _kill_group(proc.pid, signal.SIGKILL)
    proc.wait()


def _wait(proc: subprocess.Popen[bytes], deadline: float,
          cancel: threading.Event | None) -> str | None:
    """Wait for the process; return "timeout" or "cancel" when we must stop it."""
    while True:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            return "timeout"
        if cancel is not None and cancel.is_set():
            return "cancel"
        step = remaining if cancel is None else min(remaining, _POLL_S)
        try:
            proc.wait(timeout=step)
            return None
        except subprocess.TimeoutExpired:
            continue


def run_agent(inv: AgentInvocation, timeout_s: float,
              cancel: threading.Event | None = None) -> AgentResult:
    """Run the CLI to completion, timeout or cancel.

    Raises:
        InfraError: the executable is missing or cannot be started.
    """
    if not inv.binary.is_file():
        raise InfraError(f"agent CLI {inv.binary} is missing; run `make node`")
    inv.stdout_path.parent.mkdir(parents=True, exist_ok=True)
    start = time.monotonic()
    with inv.stdout_path.open("wb") as out, inv.stderr_path.open("wb") as err:
        try:
            proc = subprocess.Popen(inv.argv, cwd=inv.cwd, env=inv.env,
                                    stdin=subprocess.DEVNULL, stdout=out, stderr=err,
                                    start_new_session=True)
        except OSError as exc:
            raise InfraError(f"cannot start {inv.argv[0]}: {exc}") from exc
        WATCHDOG.watch(proc.pid)  # killed with its group if the harness dies (even kill -9)
        try:
            why = _wait(proc, start + timeout_s, cancel)
        except BaseException:
            _stop(proc)
            WATCHDOG.forget(proc.pid)
            raise
        if why is not None:
            _stop(proc)
        else:
            # The CLI is done; anything it left behind in its group (MCP servers, shells) goes.
            _kill_group(proc.pid, signal.SIGKILL)
        WATCHDOG.forget(proc.pid)
    return AgentResult(exit_code=None if why else proc.returncode, pid=proc.pid,
                       timed_out=why == "timeout", cancelled=why == "cancel",
                       duration_s=round(time.monotonic() - start, 3),
                       stdout_path=inv.stdout_path, stderr_path=inv.stderr_path)
