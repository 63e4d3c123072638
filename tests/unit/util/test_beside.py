"""`Beside`: work done in a forked child when one can be had, else here; the result is
the work's either way, and no child outlives it."""

from __future__ import annotations

import os
import signal
import threading
import time

import pytest

from copeca_action._util import forked
from copeca_action._util.forked import Beside, can_fork


@pytest.fixture
def forks(monkeypatch: pytest.MonkeyPatch, fork_pids: list[int]) -> list[int]:
    """Forking allowed despite numpy's BLAS threads in this test process (the child here
    touches neither them nor their locks); the children's pids as they are forked."""
    monkeypatch.setattr(forked, "can_fork", lambda: threading.active_count() == 1)
    return fork_pids


def test_the_work_runs_in_a_child_and_its_result_comes_back(forks: list[int]) -> None:
    with Beside(lambda: {"pid": os.getpid(), "values": [1.5, None, "x"]}) as job:
        assert job.forked
        got = job.result()
    assert got == {"pid": forks[0], "values": [1.5, None, "x"]}
    assert got["pid"] != os.getpid()


def test_without_fork_the_work_runs_here_when_asked(forks: list[int]) -> None:
    calls: list[int] = []

    def work() -> int:
        calls.append(os.getpid())
        return 7

    with Beside(work, fork=False) as job:
        assert not job.forked and not calls  # not before it is asked for
        assert job.result() == 7
    assert calls == [os.getpid()] and not forks


def test_a_child_that_fails_has_its_work_done_here(forks: list[int]) -> None:
    parent = os.getpid()

    def work() -> int:
        if os.getpid() != parent:
            raise RuntimeError("only in the child")
        return 3

    with Beside(work) as job:
        assert job.forked
        assert job.result() == 3  # computed again here
    assert len(forks) == 1


def test_a_child_killed_by_a_signal_has_its_work_done_here(forks: list[int]) -> None:
    parent = os.getpid()

    def work() -> str:
        if os.getpid() != parent:
            os.kill(os.getpid(), signal.SIGKILL)
        return "here"

    with Beside(work) as job:
        assert job.result() == "here"


def test_leaving_early_kills_and_reaps_a_running_child(forks: list[int]) -> None:
    start = time.monotonic()
    with pytest.raises(KeyboardInterrupt), Beside(lambda: time.sleep(60)) as job:
        assert job.forked
        raise KeyboardInterrupt
    assert time.monotonic() - start < 30  # not waited for; `forks` checks it was reaped


def test_no_process_to_be_had_means_the_work_runs_here(
        forks: list[int], monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse() -> int:
        raise OSError(11, "Resource temporarily unavailable")

    monkeypatch.setattr(os, "fork", refuse)
    with Beside(lambda: os.getpid()) as job:
        assert not job.forked
        assert job.result() == os.getpid()


def test_no_fork_while_another_thread_runs() -> None:
    """The real check, native threads included: a child forked now would inherit locks
    that thread may hold. The work then runs here."""
    stop = threading.Event()
    other = threading.Thread(target=stop.wait)
    other.start()
    try:
        assert not can_fork()
        with Beside(lambda: os.getpid()) as job:
            assert not job.forked
            assert job.result() == os.getpid()
    finally:
        stop.set()
        other.join()
