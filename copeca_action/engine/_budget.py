"""The scenario-wide budget: no run starts when spend so far, plus what the runs in flight
are expected to cost, plus what the next one is expected to cost, would pass the cap."""

from __future__ import annotations

import threading
from collections import defaultdict


class Budget:
    """Thread-safe. The expected cost of a run is the mean cost of finished runs of the same
    arm and model, else of all finished runs, else zero (the first runs always start)."""

    def __init__(self, cap_usd: float | None, spent_usd: float = 0.0,
                 history: list[tuple[str, float]] | None = None) -> None:
        self.cap = cap_usd
        self.spent = spent_usd
        self._lock = threading.Lock()
        self._costs: dict[str, list[float]] = defaultdict(list)
        self._in_flight: dict[str, float] = {}
        self.stopped = False
        self._settled: set[str] = set()
        self.unknown = 0
        """Attempts whose cost is unknown (counted at their expected cost)."""
        for key, cost in history or []:
            self._costs[key].append(cost)

    def expected(self, key: str) -> float:
        with self._lock:
            return self._expected(key)

    def _expected(self, key: str) -> float:
        same = self._costs.get(key)
        if same:
            return sum(same) / len(same)
        every = [c for costs in self._costs.values() for c in costs]
        return sum(every) / len(every) if every else 0.0

    def try_start(self, run_id: str, key: str) -> bool:
        """Reserve the expected cost of `run_id`, or refuse (and stay stopped from then on)."""
        with self._lock:
            if self.stopped:
                return False
            expected = self._expected(key)
            committed = self.spent + sum(self._in_flight.values())
            if self.cap is not None and committed + expected > self.cap:
                self.stopped = True
                return False
            self._in_flight[run_id] = expected
            return True

    def settle(self, run_id: str, key: str, cost_usd: float | None) -> None:
        """The run reached the agent and cost this much: count it once, free its reservation.
        Called as soon as the cost is known (before grading), so the next decision sees it.
        `run_id` names one attempt (a retry is a new attempt and is counted again). An
        unknown cost (None) keeps its reservation counted as spent: never 0."""
        with self._lock:
            if run_id in self._settled:
                return
            self._settled.add(run_id)
            reserved = self._in_flight.pop(run_id, 0.0)
            if cost_usd is None:
                self.spent += reserved
                self.unknown += 1
                return
            self.spent += cost_usd
            self._costs[key].append(cost_usd)

    def count_unknown(self, key: str) -> None:
        """An earlier attempt (a resumed run's records) reached the agent at an unknown
        cost: counted at the expected cost of its arm and model, as a live one keeps its
        reservation; never 0."""
        with self._lock:
            self.spent += self._expected(key)
            self.unknown += 1

    def release(self, run_id: str) -> None:
        """The run never reached the agent (or was already settled): drop its reservation."""
        with self._lock:
            self._in_flight.pop(run_id, None)
