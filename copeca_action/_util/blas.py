"""The statistics' matrix products on one BLAS thread, whatever the machine.

BLAS splits a large matrix product between its threads, and the split decides the order of
the sums: the same records gave bounds differing in their last bits between one and two
threads (`analyze` of 10k records, 2026-11-27). A published report must be the one anyone
recomputes from the bundle on any machine, so every report, decision and power figure is
computed with one thread (`one_blas_thread`), through threadpoolctl, which sets the count of
whichever BLAS numpy loaded (OpenBLAS, MKL, BLIS, Accelerate) and puts it back after.
"""

from __future__ import annotations

import contextlib
import functools
import os
import sys
from collections.abc import Callable, Iterator
from typing import ParamSpec, TypeVar

P = ParamSpec("P")
R = TypeVar("R")

_depth = 0
_pinned = False


BLAS_THREADS = ("OPENBLAS_NUM_THREADS", "GOTO_NUM_THREADS", "OMP_NUM_THREADS",
                "MKL_NUM_THREADS", "VECLIB_MAXIMUM_THREADS", "BLIS_NUM_THREADS")
"""What the BLAS libraries numpy may load read for their thread count when they load
(OpenBLAS the first three, in that order; MKL, Accelerate, BLIS one each)."""


def pin_before_load() -> None:
    """numpy's BLAS to run one thread, unless the user chose a count (in a command that
    starts no program, which would inherit it: `analyze`, `verify`): its thread pool would
    otherwise stop the report's power simulation from running in a forked child (fork only
    where one thread runs: `can_fork`), and on two CPUs it spent 0.4 s of CPU to save
    0.05 s of a 100k-record report. The numbers are then the same on any number of CPUs
    (the matrix products' summation order no longer follows the thread count). Without
    effect once numpy is loaded. With the count pinned before numpy loads, the report's own
    limit (`one_blas_thread`) has nothing to do; a count the user chose is limited there,
    so the numbers never follow it."""
    if "numpy" not in sys.modules and not any(os.environ.get(k) for k in BLAS_THREADS):
        os.environ.update(dict.fromkeys(BLAS_THREADS, "1"))
        pinned_before_load()


def pinned_before_load() -> None:
    """Says that the process pinned every BLAS to one thread through its environment before
    numpy loaded (`analyze`): then there is nothing to limit, and threadpoolctl is not even
    imported."""
    global _pinned
    _pinned = True


@contextlib.contextmanager
def one_blas_thread() -> Iterator[None]:
    """BLAS on one thread inside; nested uses cost nothing."""
    global _depth
    if _depth or _pinned:
        yield
        return
    from threadpoolctl import threadpool_limits

    _depth += 1
    try:
        with threadpool_limits(limits=1, user_api="blas"):
            yield
    finally:
        _depth -= 1


def on_one_blas_thread(func: Callable[P, R]) -> Callable[P, R]:
    """`func` run inside `one_blas_thread`."""
    @functools.wraps(func)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        with one_blas_thread():
            return func(*args, **kwargs)
    return wrapper
