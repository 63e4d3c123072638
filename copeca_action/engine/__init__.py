"""The run engine: a scenario's plan run on pinned snapshots with real agent CLIs, each run
isolated, every cent accounted for, resumable."""

import importlib as _importlib
import typing as _typing

if _typing.TYPE_CHECKING:
    from copeca_action.engine._budget import Budget
    from copeca_action.engine._context import (
        MAX_ATTEMPTS,
        EngineConfig,
        Resolved,
        expand_mode,
        resolve,
    )
    from copeca_action.engine._execute import Prepared, finish, provision, start_agent
    from copeca_action.engine._fingerprint import endpoint_id, fingerprints, scripts_id
    from copeca_action.engine._flags import (
        DEFAULT_RULES,
        FlagRules,
        budget_exhausted,
        flags_for,
        talkative_failure,
        token_snowball,
        tool_storm,
    )
    from copeca_action.engine._outdir import FINISHED, OutputDir, StaleResults
    from copeca_action.engine._progress import (
        NullProgress,
        PlainProgress,
        ProgressSink,
        RichProgress,
        make_progress,
    )
    from copeca_action.engine._reuse import ReuseOffer, ReuseResult, adopt
    from copeca_action.engine._scheduler import RunStats, run_plan
    from copeca_action.engine._validity import proxy_count, tool_adopted

__all__ = [
    "DEFAULT_RULES",
    "FINISHED",
    "MAX_ATTEMPTS",
    "Budget",
    "EngineConfig",
    "FlagRules",
    "NullProgress",
    "OutputDir",
    "PlainProgress",
    "Prepared",
    "ProgressSink",
    "Resolved",
    "ReuseOffer",
    "ReuseResult",
    "RichProgress",
    "RunStats",
    "StaleResults",
    "adopt",
    "budget_exhausted",
    "endpoint_id",
    "expand_mode",
    "fingerprints",
    "finish",
    "flags_for",
    "make_progress",
    "provision",
    "proxy_count",
    "resolve",
    "run_plan",
    "scripts_id",
    "start_agent",
    "talkative_failure",
    "token_snowball",
    "tool_adopted",
    "tool_storm",
]

_LAZY: dict[str, str] = {
    "Budget": "copeca_action.engine._budget",
    "DEFAULT_RULES": "copeca_action.engine._flags",
    "EngineConfig": "copeca_action.engine._context",
    "FINISHED": "copeca_action.engine._outdir",
    "FlagRules": "copeca_action.engine._flags",
    "MAX_ATTEMPTS": "copeca_action.engine._context",
    "NullProgress": "copeca_action.engine._progress",
    "OutputDir": "copeca_action.engine._outdir",
    "PlainProgress": "copeca_action.engine._progress",
    "Prepared": "copeca_action.engine._execute",
    "ProgressSink": "copeca_action.engine._progress",
    "Resolved": "copeca_action.engine._context",
    "ReuseOffer": "copeca_action.engine._reuse",
    "ReuseResult": "copeca_action.engine._reuse",
    "RichProgress": "copeca_action.engine._progress",
    "RunStats": "copeca_action.engine._scheduler",
    "StaleResults": "copeca_action.engine._outdir",
    "adopt": "copeca_action.engine._reuse",
    "budget_exhausted": "copeca_action.engine._flags",
    "endpoint_id": "copeca_action.engine._fingerprint",
    "expand_mode": "copeca_action.engine._context",
    "fingerprints": "copeca_action.engine._fingerprint",
    "finish": "copeca_action.engine._execute",
    "flags_for": "copeca_action.engine._flags",
    "make_progress": "copeca_action.engine._progress",
    "provision": "copeca_action.engine._execute",
    "proxy_count": "copeca_action.engine._validity",
    "resolve": "copeca_action.engine._context",
    "run_plan": "copeca_action.engine._scheduler",
    "scripts_id": "copeca_action.engine._fingerprint",
    "start_agent": "copeca_action.engine._execute",
    "talkative_failure": "copeca_action.engine._flags",
    "token_snowball": "copeca_action.engine._flags",
    "tool_adopted": "copeca_action.engine._validity",
    "tool_storm": "copeca_action.engine._flags",
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
