"""The record's small vocabularies (outcomes, cost sources, endpoints), apart from the
pydantic model: the fast results reader and `analyze` use them without loading RunRecord."""

from __future__ import annotations

from typing import Literal

Outcome = Literal["ok", "agent_error", "timeout", "budget_stop", "infra_error"]
OUTCOMES: tuple[Outcome, ...] = ("ok", "agent_error", "timeout", "budget_stop", "infra_error")
CostSource = Literal["vendor", "computed", "none"]
Endpoint = Literal["real", "scripted", "dry_run"]
"""What answered the agent: `real` a vendor API or a custom base URL, `scripted` the bundled
scripted model server, `dry_run` the scripted server standing in for a real run (the
action's `dry-run`). Anything but `real` is a simulation: its numbers measure nothing."""
