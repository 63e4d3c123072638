"""Record factories for the report tests (imported by name: tests are not packages)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from copeca_action.records import RunRecord
from copeca_action.report._simulate import Population, make_rows

Make = Callable[..., list[RunRecord]]


def record(**fields: Any) -> RunRecord:
    base: dict[str, Any] = {
        "run_id": f"{fields.get('task_id', 't')}-{fields.get('arm', 'a')}-"
                  f"{fields.get('repetition', 0)}",
        "scenario": "s", "task_id": "t", "task_hash": "h", "arm": "baseline", "model": "m",
        "runner": "claude", "repetition": 0, "outcome": "ok", "cost_usd": 1.0,
        "correct": True, "category": "locate", "language": "python"}
    base.update(fields)
    return RunRecord(**base)


def make_simulated(ratio: float = 1.0, tasks: int = 20, reps: int = 3, seed: int = 0,
                   **kwargs: Any) -> list[RunRecord]:
    rows = make_rows(Population(cost_ratio=ratio, **kwargs.pop("pop", {})), tasks, reps,
                     np.random.default_rng(seed), **kwargs)
    return [RunRecord(**r) for r in rows]


def several_tools(ratios: dict[str, float], tasks: int = 30, reps: int = 4, seed: int = 0,
                  **kwargs: Any) -> list[RunRecord]:
    """One baseline arm and a tool arm per entry of `ratios` (its true cost ratio): each
    tool's runs are the simulator's with the same seed, so they share the baseline's runs
    (and their noise) and differ only by their ratio."""
    rows: list[dict[str, object]] = []
    for tool, ratio in ratios.items():
        drawn = make_rows(Population(cost_ratio=ratio, **kwargs.pop("pop", {})), tasks, reps,
                          np.random.default_rng(seed), tool=tool, **kwargs)
        base = [r for r in drawn if r["arm"] == "baseline"]
        assert not rows or base == [r for r in rows if r["arm"] == "baseline"]
        rows += [r for r in drawn if r["arm"] != "baseline" or not any(
            x["arm"] == "baseline" for x in rows)]
    return [RunRecord(**r) for r in rows]
