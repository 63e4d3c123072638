"""Agent processes must not outlive the harness, even a `kill -9` of it.

Agents run in their own process groups (so a timeout kills MCP servers and shells too), which
also means nothing kills them when the harness dies. One watchdog process per harness holds a
pipe from it: the harness writes `+PGID` when an agent starts and `-PGID` when its group is
gone. When the pipe reaches end-of-file (the harness exited, however it died), the watchdog
SIGKILLs every group still registered. A pipe works where PR_SET_PDEATHSIG does not: that
signal follows the *thread* that forked (the scheduler's worker threads come and go), reaches
only the direct child, and needs `preexec_fn`, which is unsafe with threads.
"""

from __future__ import annotations

import atexit
import contextlib
import subprocess
import sys
import threading

_SCRIPT = r"""
import os, signal, sys
groups = set()
for line in sys.stdin:
    line = line.strip()
    if line.startswith("+"):
        groups.add(int(line[1:]))
    elif line.startswith("-"):
        groups.discard(int(line[1:]))
for pgid in groups:
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
"""


class Watchdog:
    """The harness's end of the pipe; started on first use, shared by every thread."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._proc: subprocess.Popen[str] | None = None

    def _ensure(self) -> subprocess.Popen[str] | None:
        if self._proc is None or self._proc.poll() is not None:
            try:
                self._proc = subprocess.Popen(
                    [sys.executable, "-I", "-c", _SCRIPT], stdin=subprocess.PIPE,
                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, text=True,
                    start_new_session=True, close_fds=True)
            except OSError:
                self._proc = None
        return self._proc

    def _send(self, line: str) -> None:
        with self._lock:
            proc = self._ensure()
            if proc is None or proc.stdin is None:
                return
            with contextlib.suppress(OSError, ValueError):
                proc.stdin.write(line + "\n")
                proc.stdin.flush()

    def watch(self, pgid: int) -> None:
        self._send(f"+{pgid}")

    def forget(self, pgid: int) -> None:
        self._send(f"-{pgid}")

    @property
    def pid(self) -> int | None:
        with self._lock:
            proc = self._ensure()
            return proc.pid if proc else None

    def close(self) -> None:
        with self._lock:
            if self._proc is not None and self._proc.stdin is not None:
                with contextlib.suppress(OSError, ValueError):
                    self._proc.stdin.close()
                with contextlib.suppress(subprocess.TimeoutExpired):
                    self._proc.wait(timeout=5)
            self._proc = None


WATCHDOG = Watchdog()
atexit.register(WATCHDOG.close)
