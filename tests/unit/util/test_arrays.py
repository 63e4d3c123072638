"""`distinct` is `np.unique` for the non-negative integer columns the report reads."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from copeca_action._util.arrays import distinct


@given(st.lists(st.integers(min_value=0, max_value=300), max_size=200))
def test_distinct_equals_unique(values: list[int]) -> None:
    codes = np.asarray(values, dtype=np.int64)
    assert distinct(codes).tolist() == np.unique(codes).tolist()


def test_distinct_of_a_masked_selection() -> None:
    codes = np.array([3, 0, 3, 7, 0])
    assert distinct(codes[codes > 0]).tolist() == [3, 7]
    assert distinct(codes[codes > 9]).tolist() == []
