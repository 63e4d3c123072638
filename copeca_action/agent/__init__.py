"""Agent run: a runner YAML, a model, a prompt and a mode become one CLI process in a fresh
config dir and HOME, with an allow-listed environment, killed as a group on timeout."""

import importlib as _importlib
import typing as _typing

if _typing.TYPE_CHECKING:
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

_LAZY: dict[str, str] = {
    "AgentInvocation": "copeca_action.agent._invocation",
    "AgentResult": "copeca_action.agent._process",
    "BASE_ENV": "copeca_action.agent._invocation",
    "BIN_DIR_ENV": "copeca_action.agent._binary",
    "PLACEHOLDER_KEY": "copeca_action.agent._invocation",
    "PROXY_ENV": "copeca_action.agent._invocation",
    "WATCHDOG": "copeca_action.agent._watchdog",
    "Watchdog": "copeca_action.agent._watchdog",
    "cli_version": "copeca_action.agent._binary",
    "prepare_run": "copeca_action.agent._invocation",
    "resolve_binary": "copeca_action.agent._binary",
    "run_agent": "copeca_action.agent._process",
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
