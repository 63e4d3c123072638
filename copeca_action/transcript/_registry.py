"""Parsers by name: a runner YAML names one (`parser:`), and the names are the contract."""

from __future__ import annotations

from pathlib import Path
from typing import Protocol

from copeca_action.errors import ConfigError
from copeca_action.transcript._codex_json import parse_codex_json
from copeca_action.transcript._gemini_json import parse_gemini_json
from copeca_action.transcript._lines import unbelievable_counts
from copeca_action.transcript._model import Transcript
from copeca_action.transcript._opencode_json import parse_opencode_json
from copeca_action.transcript._qwen_json import parse_qwen_json
from copeca_action.transcript._stream_json import parse_stream_json


class Parser(Protocol):
    """Turns one run's raw stdout (and, for some CLIs, files in its config dir) into a
    Transcript. Never raises on bad output: problems go into `Transcript.problems`."""

    def __call__(self, stdout_path: Path, config_dir: Path | None = None) -> Transcript: ...


def _believable(parse: Parser) -> Parser:
    """`parse`, whose transcript has its usage unknown (`usage_complete` False, a problem
    naming the values) when the CLI's output gave a count no run reaches: the cost is then
    unknown, never priced from a number the output made up (nor a validation error)."""
    def checked(stdout_path: Path, config_dir: Path | None = None) -> Transcript:
        with unbelievable_counts() as seen:
            transcript = parse(stdout_path, config_dir)
        if not seen:
            return transcript
        shown = ", ".join(repr(v) for v in seen[:3]) + (" ..." if len(seen) > 3 else "")
        return transcript.model_copy(update={
            "usage_complete": False,
            "problems": [*transcript.problems, f"usage counts no run reaches ({shown}): the "
                         "usage, and so the computed cost, is unknown"]})
    return checked


PARSERS: dict[str, Parser] = {
    name: _believable(parse) for name, parse in (
        ("stream_json", parse_stream_json),
        ("codex_json", parse_codex_json),
        ("gemini_json", parse_gemini_json),
        ("qwen_json", parse_qwen_json),
        ("opencode_json", parse_opencode_json))}
"""Each parser as `_believable` wraps it."""


def parse_transcript(parser: str, stdout_path: Path,
                     config_dir: Path | None = None) -> Transcript:
    """Parse one run's output with the named parser.

    Raises:
        ConfigError: the parser name is unknown (the message lists the known ones).
    """
    try:
        parse = PARSERS[parser]
    except KeyError:
        raise ConfigError(f"unknown transcript parser {parser!r}; known: "
                          f"{', '.join(sorted(PARSERS))}") from None
    return parse(stdout_path, config_dir)
