"""Parsers by name: a runner YAML names one (`parser:`), and the names are the contract."""

from __future__ import annotations

from pathlib import Path
from typing import Protocol

from copeca_action.errors import ConfigError
from copeca_action.transcript._codex_json import parse_codex_json
from copeca_action.transcript._gemini_json import parse_gemini_json
from copeca_action.transcript._model import Transcript
from copeca_action.transcript._opencode_json import parse_opencode_json
from copeca_action.transcript._qwen_json import parse_qwen_json
from copeca_action.transcript._stream_json import parse_stream_json


class Parser(Protocol):
    """Turns one run's raw stdout (and, for some CLIs, files in its config dir) into a
    Transcript. Never raises on bad output: problems go into `Transcript.problems`."""

    def __call__(self, stdout_path: Path, config_dir: Path | None = None) -> Transcript: ...


PARSERS: dict[str, Parser] = {
    "stream_json": parse_stream_json,
    "codex_json": parse_codex_json,
    "gemini_json": parse_gemini_json,
    "qwen_json": parse_qwen_json,
    "opencode_json": parse_opencode_json,
}


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
