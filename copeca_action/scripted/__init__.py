"""The scripted model server: real agent CLIs, no key, no network, known truth.

A loopback HTTP server speaking the Anthropic Messages and OpenAI Responses APIs that plays
per-task scripts (`Script`), records every request, and reports exactly what it served
(`ServedConversation`) so parsed transcripts can be checked against it.
"""

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
