"""Small numpy helpers the report uses on its integer columns."""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray


def distinct(codes: NDArray[np.integer]) -> NDArray[np.intp]:
    """The distinct values of non-negative integers (category codes, counts), ascending.

    `np.unique` gives the same, but sorts, and its first call imports `numpy.ma` (about
    10 ms of a one-record `analyze`); a count per value is linear in the values."""
    return np.flatnonzero(np.bincount(codes.ravel()))
