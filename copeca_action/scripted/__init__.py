"""The scripted model server: real agent CLIs, no key, no network, known truth.

A loopback HTTP server speaking the Anthropic Messages and OpenAI Responses APIs that plays
per-task scripts (`Script`), records every request, and reports exactly what it served
(`ServedConversation`) so parsed transcripts can be checked against it."""

import importlib as _importlib
import typing as _typing

if _typing.TYPE_CHECKING:
    from copeca_action.scripted._script import (
        SCRIPT_FORMAT_VERSION,
        Action,
        Fault,
        Match,
        Script,
        ScriptFile,
        Step,
        Usage,
        Variation,
        load_script_file,
        load_scripts,
    )
    from copeca_action.scripted._served import ServedConversation, ServedStep, ServedToolCall
    from copeca_action.scripted._server import VARIANT_HEADER, ScriptedServer

__all__ = [
    "SCRIPT_FORMAT_VERSION",
    "VARIANT_HEADER",
    "Action",
    "Fault",
    "Match",
    "Script",
    "ScriptFile",
    "ScriptedServer",
    "ServedConversation",
    "ServedStep",
    "ServedToolCall",
    "Step",
    "Usage",
    "Variation",
    "load_script_file",
    "load_scripts",
]

_LAZY: dict[str, str] = {
    "Action": "copeca_action.scripted._script",
    "Fault": "copeca_action.scripted._script",
    "Match": "copeca_action.scripted._script",
    "SCRIPT_FORMAT_VERSION": "copeca_action.scripted._script",
    "Script": "copeca_action.scripted._script",
    "ScriptFile": "copeca_action.scripted._script",
    "ScriptedServer": "copeca_action.scripted._server",
    "ServedConversation": "copeca_action.scripted._served",
    "ServedStep": "copeca_action.scripted._served",
    "ServedToolCall": "copeca_action.scripted._served",
    "Step": "copeca_action.scripted._script",
    "Usage": "copeca_action.scripted._script",
    "VARIANT_HEADER": "copeca_action.scripted._server",
    "Variation": "copeca_action.scripted._script",
    "load_script_file": "copeca_action.scripted._script",
    "load_scripts": "copeca_action.scripted._script",
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
