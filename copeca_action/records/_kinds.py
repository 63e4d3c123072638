"""The record's small vocabularies (outcomes, cost sources, endpoints), apart from the
pydantic model: the fast results reader and `analyze` use them without loading RunRecord."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

Outcome = Literal["ok", "agent_error", "timeout", "budget_stop", "infra_error"]
OUTCOMES: tuple[Outcome, ...] = ("ok", "agent_error", "timeout", "budget_stop", "infra_error")
MAX_COUNT = 10**12
"""The largest token count, turn or tool-call count or repetition number a record may
carry: more is no measurement (and sums of such numbers overflow 64-bit integers)."""
MAX_RUN_COST_USD = 1e9
"""A run's cost above this is no price (no agent run costs a billion dollars), and the
statistics on it would rest on sums and squares that overflow the largest float (squares
from about 1e154): an arm with such a run has no spend or cost per correct to judge, and an
attempt outside the statistics with one has an unknown cost (its figure is no spend)."""
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
AGENT_FILES_VISIBLE = "agent_files_visible"
"""A run's flag when the agent's view hid nothing (no working bubblewrap: `unshare` makes
a pid namespace but cannot blank folders)."""
HARNESS_DIED = "harness_died"
"""Flag of an attempt the harness died during (recorded on resume from its output)."""
KILLED = ("the harness died while the agent ran (SIGKILL, a crash or a lost machine); the "
          "spend its output shows is counted (a lower bound); --resume repeats the run")
"""The error of an attempt a dead harness left unrecorded, whose agent was running (found on
resume). Records of an older copeca-action's resume carry it without `HARNESS_DIED` (their
only flag was cost_lower_bound): `died_flags` names them as what they are."""


def died_flags(outcome: str, error: str | None, flags: list[str]) -> list[str]:
    """`flags`, with `HARNESS_DIED` for an attempt the harness died during that an older
    resume recorded without it (its error is `KILLED`): so no reader of the records calls
    it 'stopped mid-run (timeout or interrupt)'. The stored record is left as written."""
    if error == KILLED and outcome == "infra_error" and HARNESS_DIED not in flags:
        return [*flags, HARNESS_DIED]
    return flags


SIMULATED: tuple[Endpoint, ...] = ("scripted", "dry_run")
"""The endpoints that make a record, and whatever is computed from it, simulated."""


def simulation_note(endpoints: Mapping[str, int]) -> str:
    """One sentence for the banner shown after the word "Simulated", from the runs' count per
    endpoint; "" when none is simulated."""
    fake = sum(endpoints.get(kind, 0) for kind in SIMULATED)
    if not fake:
        return ""
    total = sum(endpoints.values())
    what = ("the scripted model answered instead of the vendors (a dry run)"
            if endpoints.get("dry_run") else "the scripted model answered, not a vendor's API")
    if fake < total:
        return (f"In part: in {fake} of {total} runs {what}. These numbers mix simulation "
                "with measurement: read none of them as a measurement.")
    return (f"In every run {what}. These numbers show how the report reads; they measure "
            "no agent and no tool.")


def missing_cost(record: Mapping[str, Any]) -> dict[str, Any]:
    """The fields a record without `cost_usd` gets: none when its run never reached the
    agent (the default 0 holds), else an unknown cost with `NO_COST_FIELD` (unless it gives
    a reason of its own): never the $0 a default would make of it."""
    if "cost_usd" in record or record.get("outcome") in NOT_REACHED:
        return {}
    return {"cost_usd": None,
            "cost_unknown_reason": record.get("cost_unknown_reason") or NO_COST_FIELD}


UNGRADED = ("a run that ended ok must say whether its answer was right (correct: true or "
            "false); left out, it would count as wrong")
"""Why a stored record of an `ok` run without `correct` is refused, by every reader."""
STORED = {"stored": True}
"""The validation context of a RunRecord read back from a file (results, a bundle): there a
missing `correct` is refused (`UNGRADED`); the engine builds its records before grading."""


def ungraded(record: Mapping[str, Any]) -> bool:
    """An `ok` run whose record leaves out `correct`."""
    return "correct" not in record and record.get("outcome") == "ok"

