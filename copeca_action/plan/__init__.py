"""RunPlan: a scenario expanded into runs with stable ids, and its shards."""

import importlib as _importlib
import typing as _typing

if _typing.TYPE_CHECKING:
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
        shard_of,
        shard_plan,
        unreachable_min_runs,
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
    "shard_of",
    "shard_plan",
    "unreachable_min_runs",
]

_LAZY: dict[str, str] = {
    "BASE_SUFFIX": "copeca_action.plan._plan",
    "Compare": "copeca_action.plan._plan",
    "PlannedRun": "copeca_action.plan._plan",
    "RunPlan": "copeca_action.plan._plan",
    "Shard": "copeca_action.plan._plan",
    "arms_for": "copeca_action.plan._plan",
    "build_plan": "copeca_action.plan._plan",
    "parse_shard": "copeca_action.plan._plan",
    "run_id_for": "copeca_action.plan._plan",
    "shard_of": "copeca_action.plan._plan",
    "shard_plan": "copeca_action.plan._plan",
    "unreachable_min_runs": "copeca_action.plan._plan",
}
"""Each public name and its module, imported on first use (PEP 562): importing one
submodule of this package does not load the others."""


def __getattr__(name: str) -> _typing.Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(_importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))
