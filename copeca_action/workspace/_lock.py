"""Locks that hold across threads and processes (fcntl), so two harnesses share a cache."""

from __future__ import annotations

import fcntl
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

_THREAD_LOCKS: dict[str, threading.Lock] = {}
_GUARD = threading.Lock()


def _thread_lock(path: Path) -> threading.Lock:
    with _GUARD:
        return _THREAD_LOCKS.setdefault(str(path), threading.Lock())


@contextmanager
def file_lock(path: Path) -> Iterator[None]:
    """Exclusive lock on `path` (created if absent) for this thread and other processes."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with _thread_lock(path), path.open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)
