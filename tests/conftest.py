"""Shared fixtures: paths of the checkout's corpus and test data."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="session")
def root() -> Path:
    return ROOT


@pytest.fixture(scope="session")
def corpus_root() -> Path:
    return ROOT / "corpus"


@pytest.fixture
def fork_pids(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[int]]:
    """The pids of the children this process forks during the test, as they are forked;
    afterwards each must have been reaped (no such child any more)."""
    pids: list[int] = []
    real = os.fork

    def fork() -> int:
        pid = real()
        if pid:
            pids.append(pid)
        return pid

    monkeypatch.setattr(os, "fork", fork)
    yield pids
    for pid in pids:
        with pytest.raises(ChildProcessError):
            os.waitpid(pid, os.WNOHANG)
