"""A bootstrap that redraws resamples it drew before (same generator state, clusters and
count) takes them from the cache: the same bounds, and the generator left where drawing
again would leave it."""

from __future__ import annotations

import numpy as np
import pytest

from copeca_action.report import _stats
from copeca_action.report._stats import paired_bootstrap


def data(seed: int) -> tuple[np.ndarray, ...]:
    gen = np.random.default_rng(seed)
    n = 23
    return (gen.lognormal(size=n), gen.integers(0, 4, n).astype(float),
            gen.lognormal(size=n), gen.integers(0, 4, n).astype(float))


def bounds(seed: int, rng: np.random.Generator) -> tuple[np.ndarray, ...]:
    b = paired_bootstrap(*data(seed), resamples=3000, seed=rng, method="hybrid")
    return b.estimate, b.low, b.high, b.defined


def test_a_cached_draw_gives_the_bounds_and_generator_state_of_a_fresh_one() -> None:
    _stats._DRAWN.clear()
    first = np.random.default_rng(9)
    fresh = bounds(1, first)
    assert len(_stats._DRAWN) == 1
    second = np.random.default_rng(9)
    cached = bounds(2, second)  # other data, same draws: served from the cache
    _stats._DRAWN.clear()
    third = np.random.default_rng(9)
    uncached = bounds(2, third)
    assert all(np.array_equal(x, y, equal_nan=True) for x, y in zip(cached, uncached,
                                                                      strict=True))
    assert not np.array_equal(fresh[1], cached[1])  # the data matter, not only the draws
    after = [g.integers(0, 1 << 40, 4) for g in (first, second, third)]
    assert np.array_equal(after[0], after[1]) and np.array_equal(after[1], after[2])


def test_the_cache_keeps_at_most_its_budget(monkeypatch: pytest.MonkeyPatch) -> None:
    _stats._DRAWN.clear()
    monkeypatch.setattr(_stats, "_KEEP_CELLS", 23 * 3000 * 2)
    for seed in range(4):
        bounds(0, np.random.default_rng(seed))
    assert len(_stats._DRAWN) == 2
    assert sum(r * n for n, r, _, _ in _stats._DRAWN) <= _stats._KEEP_CELLS
    _stats._DRAWN.clear()
