"""RunPlan: a scenario expanded into runs with stable ids, and its shards."""

from copeca_action.plan._plan import (
    BASE_SUFFIX,
    Compare,
    PlannedRun,
    RunPlan,
    Shard,
    arms_for,
    build_plan,
    parse_shard,
    run_id_for,
    shard_plan,
)

__all__ = [
    "BASE_SUFFIX",
    "Compare",
    "PlannedRun",
    "RunPlan",
    "Shard",
    "arms_for",
    "build_plan",
    "parse_shard",
    "run_id_for",
    "shard_plan",
]
