"""The run engine: a scenario's plan run on pinned snapshots with real agent CLIs, each run
isolated, every cent accounted for, resumable."""

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
from copeca_action.engine._outdir import FINISHED, OutputDir
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
