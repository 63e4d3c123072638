"""Agent run: a runner YAML, a model, a prompt and a mode become one CLI process in a fresh
config dir and HOME, with an allow-listed environment, killed as a group on timeout."""

from copeca_action.agent._binary import BIN_DIR_ENV, cli_version, resolve_binary
from copeca_action.agent._invocation import (
    BASE_ENV,
    PLACEHOLDER_KEY,
    PROXY_ENV,
    AgentInvocation,
    prepare_run,
)
from copeca_action.agent._process import AgentResult, run_agent
from copeca_action.agent._watchdog import WATCHDOG, Watchdog

__all__ = [
    "BASE_ENV",
    "BIN_DIR_ENV",
    "PLACEHOLDER_KEY",
    "PROXY_ENV",
    "WATCHDOG",
    "AgentInvocation",
    "AgentResult",
    "Watchdog",
    "cli_version",
    "prepare_run",
    "resolve_binary",
    "run_agent",
]
