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
from collections.abc import Callable, Iterator
from typing import ParamSpec, TypeVar

P = ParamSpec("P")
R = TypeVar("R")

_depth = 0
_pinned = False


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
