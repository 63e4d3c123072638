"""The interval methods' names, apart from the statistics: the CLI offers them as choices
without importing numpy."""

from __future__ import annotations

from typing import Literal

IntervalMethod = Literal["hybrid", "expanded", "studentized", "percentile"]
INTERVAL_METHODS: tuple[IntervalMethod, ...] = ("hybrid", "expanded", "studentized", "percentile")
