"""`resample_counts` counts its draws a block of rows at a time: the matrix is the one
counting all the draws at once gives, and the generator ends where those draws leave it."""

from __future__ import annotations

import numpy as np
import pytest

from copeca_action.report._stats import _COUNT_CELLS, resample_counts


def test_the_larger_cases_span_several_blocks() -> None:
    assert 3 * _COUNT_CELLS < 500 * 1_000 and 2 * _COUNT_CELLS < 3_000 * 97


@pytest.mark.parametrize(("n", "resamples"), [(1, 5), (7, 3), (500, 1_000), (3_000, 97)])
def test_counts_equal_one_bincount_of_the_same_draws(n: int, resamples: int) -> None:
    rng, same = np.random.default_rng(11), np.random.default_rng(11)
    got = resample_counts(n, resamples, rng)
    idx = same.integers(0, n, size=(resamples, n), dtype=np.int32)
    flat = (idx + (np.arange(resamples, dtype=np.int64) * n)[:, None]).ravel()
    want = np.bincount(flat, minlength=resamples * n).reshape(resamples, n)
    assert got.dtype == np.float64 and got.shape == (resamples, n)
    assert np.array_equal(got, want)
    assert (got.sum(axis=1) == n).all()
    assert rng.bit_generator.state == same.bit_generator.state
