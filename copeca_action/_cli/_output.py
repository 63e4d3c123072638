"""How the CLI shows errors: one line per problem, and GitHub annotations in Actions."""

from __future__ import annotations

import os
import sys

from rich.console import Console

from copeca_action._util.scrub import Scrubber
from copeca_action._util.text import log_safe
from copeca_action.errors import ConfigError, CopecaError, Problem


def _escape(value: str) -> str:
    return value.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def annotate(problem: Problem, level: str = "error") -> None:
    """A workflow command so the problem shows on the file in the GitHub UI."""
    if os.environ.get("GITHUB_ACTIONS") != "true":
        return
    props = f"file={problem.file}" + (f",line={problem.line}" if problem.line else "")
    message = (f"{problem.field}: " if problem.field else "") + problem.message
    message = Scrubber.from_env().scrub_text(message)  # a problem may quote a value
    print(f"::{level} {props}::{_escape(log_safe(message))}")


def print_problems(problems: list[Problem], level: str = "error") -> None:
    scrubber = Scrubber.from_env()
    for problem in problems:
        print(f"{level}: {log_safe(scrubber.scrub_text(str(problem)))}", file=sys.stderr)
        annotate(problem, level)


def report_error(exc: CopecaError) -> None:
    if isinstance(exc, ConfigError):
        print_problems(exc.problems)
    else:
        # errors may quote a secret, or a bundle's text (escape sequences, a line that is a
        # workflow command): scrubbed, then made safe to print
        message = log_safe(Scrubber.from_env().scrub_text(str(exc)))
        print(f"error: {message}", file=sys.stderr)
        if os.environ.get("GITHUB_ACTIONS") == "true":
            print(f"::error::{_escape(message)}")


LOG_WIDTH = 1000
"""Columns of output that goes to a log, not a terminal: wide enough that no line wraps and
no table cell is cut."""


def console() -> Console:
    """A terminal's console, or, for a log (CI, a pipe), one that never wraps at 80 columns
    nor truncates a table."""
    out = Console()
    return out if out.is_terminal else Console(width=LOG_WIDTH, soft_wrap=True)
