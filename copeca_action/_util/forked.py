"""Work done in a forked child process, its answer sent back through a pipe: the child holds
its own interpreter lock, so the parent's imports and parsing run beside it. Fork copies
only the calling thread, so start one only where no other thread (native ones included) runs
yet (`one_thread`); the child never returns into its parent's frames, runs no exit handler
and flushes no buffer of the parent's.
"""

from __future__ import annotations

import contextlib
import os
import pickle
import signal
import sys
from collections.abc import Callable
from types import TracebackType
from typing import Generic, NoReturn, TypeVar

T = TypeVar("T")


class Forked:
    """A child computing `work()` (bytes); `output` waits for them, `stop` ends it early."""

    def __init__(self, work: Callable[[], bytes]) -> None:
        """Forks the child; raises OSError when no pipe or process can be had."""
        read_end, write_end = os.pipe()
        try:
            pid = os.fork()
        except OSError:
            os.close(read_end)
            os.close(write_end)
            raise
        if pid == 0:
            _child(work, read_end, write_end)
        os.close(write_end)
        self.pid = pid
        self._read: int | None = read_end
        self._reaped = False

    def output(self) -> bytes | None:
        """What the child wrote; None when it failed (an exception, a signal) or wrote
        nothing. A child that something else reaped first (a SIGCHLD handler of the
        program) counts as done: its bytes say whether it finished."""
        assert self._read is not None, "output() once"
        with os.fdopen(self._read, "rb") as pipe:
            self._read = None
            data = pipe.read()
        status = self._reap()
        return data if data and status in (0, None) else None

    def stop(self) -> None:
        """Kills the child if it still runs and reaps it; nothing when already done."""
        if self._read is not None:
            os.close(self._read)
            self._read = None
        if not self._reaped:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, signal.SIGKILL)
            self._reap()

    def _reap(self) -> int | None:
        self._reaped = True
        try:
            return os.waitpid(self.pid, 0)[1]
        except ChildProcessError:
            return None


def _child(work: Callable[[], bytes], unused: int, out: int) -> NoReturn:
    """The child's whole life: exits 0 once its answer is written, 1 on any failure."""
    code = 1
    try:
        os.close(unused)
        data = work()
        with open(out, "wb") as pipe:
            pipe.write(data)
        code = 0
    finally:
        os._exit(code)


class Beside(Generic[T]):
    """`work()` computed beside this process: in a forked child when `fork` is asked for and
    one can be had safely (`can_fork`), else here when `result` is first asked for. Either
    way `result` is what `work()` returns: a child that fails (an exception, a signal, an
    answer that does not unpickle) has its work done again here. Use it as a context
    manager, so a child still running when this process gives up is killed and reaped."""

    def __init__(self, work: Callable[[], T], *, fork: bool = True) -> None:
        self._work = work
        self._child: Forked | None = None
        if fork and can_fork():
            with contextlib.suppress(OSError):  # no process or pipe: computed here
                self._child = Forked(lambda: pickle.dumps(work(),
                                                          protocol=pickle.HIGHEST_PROTOCOL))

    @property
    def forked(self) -> bool:
        return self._child is not None

    def result(self) -> T:
        child, self._child = self._child, None
        if child is not None:
            try:
                data = child.output()
            finally:
                child.stop()
            if data is not None:
                try:
                    return pickle.loads(data)  # type: ignore[no-any-return]
                except Exception:  # cut short: computed again below
                    pass
        return self._work()

    def close(self) -> None:
        child, self._child = self._child, None
        if child is not None:
            child.stop()

    def __enter__(self) -> Beside[T]:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()


def can_fork() -> bool:
    """A child can be forked safely and run beside this process: on Linux (elsewhere fork
    is unsafe or absent), with two CPUs or more to run on, and one thread running here."""
    return (sys.platform == "linux" and len(os.sched_getaffinity(0)) >= 2
            and one_thread())


def one_thread() -> bool:
    """This process runs one thread, native ones included (numpy's BLAS starts some when it
    is imported); False where that cannot be told (no /proc)."""
    try:
        return len(os.listdir("/proc/self/task")) == 1
    except OSError:
        return False
