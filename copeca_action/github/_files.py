"""The runner's file commands: step outputs ($GITHUB_OUTPUT), the job summary
($GITHUB_STEP_SUMMARY), log masking and annotations."""

from __future__ import annotations

import os
import re
import secrets
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TextIO

from copeca_action.errors import GitHubError
from copeca_action.github._markdown import cut_markdown

_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]*\Z")
MAX_SUMMARY_BYTES = 1024 * 1024
"""GitHub rejects a step summary above 1 MiB; we cut before that."""


def format_output(name: str, value: str) -> str:
    """One `name<<DELIM` block; the delimiter is random so a value cannot end it early."""
    if not _NAME.match(name):
        raise ValueError(f"not a valid output name: {name!r}")
    while True:
        delimiter = f"ghadelimiter_{secrets.token_hex(16)}"
        if delimiter not in value:
            break
    return f"{name}<<{delimiter}\n{value}\n{delimiter}\n"


def write_outputs(path: str | os.PathLike[str], outputs: Mapping[str, str]) -> None:
    """Append step outputs to the $GITHUB_OUTPUT file."""
    try:
        with open(path, "a", encoding="utf-8") as fh:
            for name, value in outputs.items():
                fh.write(format_output(name, value))
    except OSError as exc:
        raise GitHubError(f"cannot write step outputs to {path}: {exc}") from exc


def write_summary(path: str | os.PathLike[str], markdown: str) -> None:
    """Append markdown to the job summary, cut at a line to GitHub's size limit with what
    the cut leaves open closed (a code fence, a `<details>`, a table) and a note saying so."""
    markdown = cut_markdown(markdown, MAX_SUMMARY_BYTES - 1,
                            "*(summary truncated: the full report is in the bundle)*",
                            size=lambda text: len(text.encode("utf-8", "surrogatepass")))
    try:
        with open(path, "a", encoding="utf-8") as fh:
            fh.write(markdown if markdown.endswith("\n") else markdown + "\n")
    except OSError as exc:
        raise GitHubError(f"cannot write the step summary to {path}: {exc}") from exc


def escape_command(value: str) -> str:
    """Workflow command data escaping (%, CR, LF)."""
    return value.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def mask(values: Iterable[str], stream: TextIO | None = None) -> None:
    """Ask the runner to hide each secret (each line of a multi-line one) in all logs."""
    out = stream or sys.stdout
    for value in values:
        for line in value.splitlines():
            if line.strip():
                out.write(f"::add-mask::{escape_command(line)}\n")
    out.flush()


def annotate(level: str, message: str, stream: TextIO | None = None) -> None:
    (stream or sys.stdout).write(f"::{level}::{escape_command(message)}\n")


def outputs_path(env: Mapping[str, str]) -> Path | None:
    value = env.get("GITHUB_OUTPUT")
    return Path(value) if value else None


def summary_path(env: Mapping[str, str]) -> Path | None:
    value = env.get("GITHUB_STEP_SUMMARY")
    return Path(value) if value else None
