"""The pilot experiments of `power` keep only the per-look sums; they must be the sums of the
full (experiments, tasks, repetitions) draw that the simple way builds, bit for bit, so the
report's minimum detectable effects did not move when the draw stopped materialising runs."""

from __future__ import annotations

import numpy as np
import pytest

from copeca_action.report._power import Pilot, _pilot_sums
from copeca_action.report._stats import FloatArray


def full_draw(pilot: Pilot, effect_sd: float, tasks: int, reps: int, experiments: int,
              rng: np.random.Generator) -> list[FloatArray]:
    """Every run of every experiment, drawn task by task with a boolean mask (the
    reference: the same random calls in the same order)."""
    n_pilot = len(pilot.cost)
    picked = rng.integers(0, n_pilot, size=(experiments, tasks))
    effect = np.exp(effect_sd * rng.standard_normal((experiments, tasks, 1)) - effect_sd ** 2 / 2)
    out: list[FloatArray] = []
    for arm in range(2):
        spend = np.empty((experiments, tasks, reps))
        correct = np.empty((experiments, tasks, reps))
        for i in range(n_pilot):
            where = picked == i
            count = int(where.sum())
            if not count:
                continue
            j = rng.integers(0, len(pilot.cost[i]), size=(count, reps))
            spend[where] = pilot.cost[i][j]
            correct[where] = pilot.correct[i][j]
        out += [spend * (effect if arm == 0 else 1.0), correct]
    return out


@pytest.mark.parametrize(("tasks", "looks", "experiments"),
                         [(20, [3], 40), (9, [2, 4, 8], 25), (12, [130], 7)])
def test_look_sums_equal_the_sums_of_the_full_draw(tasks: int, looks: list[int],
                                                   experiments: int) -> None:
    gen = np.random.default_rng(11)
    cost = [gen.lognormal(size=int(gen.integers(1, 9))) for _ in range(15)]
    pilot = Pilot(cost=cost, correct=[(gen.random(len(c)) < 0.6).astype(np.float64)
                                      for c in cost], source="test")
    got = _pilot_sums(pilot, 0.2, tasks, looks, experiments, np.random.default_rng(3))
    full = full_draw(pilot, 0.2, tasks, looks[-1], experiments, np.random.default_rng(3))
    assert len(got) == len(looks)
    for sums, reps in zip(got, looks, strict=True):
        for value, runs in zip(sums, full, strict=True):
            assert value.shape == (experiments, tasks)
            assert np.array_equal(value, runs[..., :reps].sum(axis=-1))
    # the tool arm's costs are scaled, the base arm's are not: the two differ
    assert not np.array_equal(got[-1][0], got[-1][2])


@pytest.mark.parametrize("scores", [(0.0, 1.0), (0.0, 0.5, 1.0)])
def test_right_or_wrong_is_counted_and_any_other_score_is_summed(scores: tuple[float, ...]
                                                                 ) -> None:
    """0/1 answers are counted as bytes; a pilot with any other score keeps its floats: the
    sums are those of the full draw either way."""
    gen = np.random.default_rng(5)
    cost = [gen.lognormal(size=6) for _ in range(7)]
    pilot = Pilot(cost=cost, correct=[gen.choice(scores, size=6) for _ in cost], source="t")
    got = _pilot_sums(pilot, 0.3, 10, [4], 30, np.random.default_rng(8))
    full = full_draw(pilot, 0.3, 10, 4, 30, np.random.default_rng(8))
    for value, runs in zip(got[0], full, strict=True):
        assert np.array_equal(value, runs.sum(axis=-1))
    assert (got[0][1] % 1 != 0).any() == (0.5 in scores)
