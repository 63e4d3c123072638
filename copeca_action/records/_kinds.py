"""The record's small vocabularies (outcomes, cost sources, endpoints), apart from the
pydantic model: the fast results reader and `analyze` use them without loading RunRecord."""

from __future__ import annotations

from typing import Literal

Outcome = Literal["ok", "agent_error", "timeout", "budget_stop", "infra_error"]
OUTCOMES: tuple[Outcome, ...] = ("ok", "agent_error", "timeout", "budget_stop", "infra_error")
MAX_COUNT = 10**12
"""The largest token count, turn or tool-call count or repetition number a record may
carry: more is no measurement (and sums of such numbers overflow 64-bit integers)."""
NOT_REACHED: tuple[Outcome, ...] = ("infra_error", "budget_stop")
"""Outcomes of runs that never reached the agent: they spent nothing (cost 0 unless said)."""
CostSource = Literal["vendor", "computed", "none"]
NO_COST_FIELD = ("the record has no cost_usd (a run that reached the agent spent something: "
                 "unknown, not $0)")
"""The unknown-cost reason of a record, of a run that reached the agent, that carries no
`cost_usd` (a record written by hand or by another tool): its cost is unknown, never $0."""
Endpoint = Literal["real", "scripted", "dry_run"]
"""What answered the agent: `real` a vendor API or a custom base URL, `scripted` the bundled
scripted model server, `dry_run` the scripted server standing in for a real run (the
action's `dry-run`). Anything but `real` is a simulation: its numbers measure nothing."""
