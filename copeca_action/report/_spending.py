"""Alpha spending for adaptive sampling: the looks and the alpha each one judges with.

Looks happen at min_repetitions, then every `step` repetitions, up to max_repetitions.
Look k gets the share alpha_k of the overall alpha from the spending function alpha·t^RHO
(t = repetitions / max_repetitions) and judges with a two-sided 1−alpha_k interval. Since the
shares sum to alpha, the union bound keeps the chance of any false decision over all looks at
most alpha (one-sided: alpha/2 each way), whatever the correlation between looks.

Every report of an adaptive scenario (the engine's stopping decision, `run`, `analyze`, the
bundle, the comment) resolves its alpha here, from the repetitions its records reached, so
they all publish the decision of the same look at the same alpha.
"""

from __future__ import annotations

from copeca_action.scenario import Adaptive

RHO = 2.0
"""Spending-function exponent: 1 spends evenly; larger saves alpha for later looks.
Chosen by bench/stats.py (power and runs to decision, see docs/methodology.md)."""


def schedule(adaptive: Adaptive) -> list[int]:
    """Repetition counts at which the analysis looks."""
    looks = list(range(adaptive.min_repetitions, adaptive.max_repetitions + 1, adaptive.step))
    if looks[-1] != adaptive.max_repetitions:
        looks.append(adaptive.max_repetitions)
    return looks


def spent(adaptive: Adaptive, repetitions: int) -> float:
    fraction = min(1.0, repetitions / adaptive.max_repetitions)
    return float(adaptive.alpha * fraction ** RHO)


def look_alpha(adaptive: Adaptive, look: int) -> float:
    """Alpha for the 1-based look `look`: its share of the spending function."""
    reps = schedule(adaptive)
    before = spent(adaptive, reps[look - 2]) if look > 1 else 0.0
    return spent(adaptive, reps[look - 1]) - before


def current_look(adaptive: Adaptive, repetitions: int) -> int:
    """The last scheduled look at or below `repetitions` (1 when below the first)."""
    reps = schedule(adaptive)
    return max(1, sum(1 for r in reps if r <= repetitions))
