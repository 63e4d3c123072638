"""The runner's file commands: step outputs ($GITHUB_OUTPUT), the job summary
($GITHUB_STEP_SUMMARY), log masking and annotations."""

from __future__ import annotations

import errno
import os
import re
import secrets
import stat
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


def _append(path: str | os.PathLike[str], what: str, text: str) -> None:
    """Append to a runner's file, which must be a regular file: never through a link (it
    could lead anywhere, and the runner reads the file back) and never to a FIFO (an open
    for writing blocks until someone reads, for good)."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW
                     | os.O_NONBLOCK | os.O_CLOEXEC, 0o644)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENXIO):
            raise GitHubError(f"cannot write {what} to {path}: not a regular file (a link "
                              f"or a pipe; the runner's file must be a plain file)") from exc
        raise GitHubError(f"cannot write {what} to {path}: {exc}") from exc
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise GitHubError(f"cannot write {what} to {path}: not a regular file (the "
                              f"runner's file must be a plain file)")
        os.set_blocking(fd, True)
        with open(fd, "a", encoding="utf-8", closefd=False) as fh:
            fh.write(text)
    except OSError as exc:
        raise GitHubError(f"cannot write {what} to {path}: {exc}") from exc
    finally:
        os.close(fd)


def write_outputs(path: str | os.PathLike[str], outputs: Mapping[str, str]) -> None:
    """Append step outputs to the $GITHUB_OUTPUT file."""
    _append(path, "step outputs",
            "".join(format_output(name, value) for name, value in outputs.items()))


def write_summary(path: str | os.PathLike[str], markdown: str) -> None:
    """Append markdown to the job summary, cut at a line to GitHub's size limit with what
    the cut leaves open closed (a code fence, a `<details>`, a table) and a note saying so."""
    markdown = cut_markdown(markdown, MAX_SUMMARY_BYTES - 1,
                            "*(summary truncated: the full report is in the bundle)*",
                            size=lambda text: len(text.encode("utf-8", "surrogatepass")))
    _append(path, "the step summary", markdown if markdown.endswith("\n") else markdown + "\n")


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


RUNNER_FILES = ("GITHUB_OUTPUT", "GITHUB_STEP_SUMMARY", "GITHUB_EVENT_PATH")
"""The runner's files the action reads or writes. The container step (action.yml) puts them
in a folder of the workspace and copies the two it writes back to the runner afterwards."""


def runner_file_dirs(env: Mapping[str, str], workspace: Path) -> list[Path]:
    """The folders holding the runner's files, which no code the harness starts (an agent,
    the tool under test, graded code) may reach: in the workspace they lay beside the
    tool's checkout, which agents may write, and a tool that planted a link there
    (`summary.md -> /proc/self/environ`) or a heredoc had the runner's step publish what it
    chose. A folder that holds the workspace is left out (blanking it would blank the tool);
    so is `/`."""
    found: list[Path] = []
    for name in RUNNER_FILES:
        if value := env.get(name):
            folder = Path(os.path.abspath(value)).parent
            if folder != Path("/") and not workspace.absolute().is_relative_to(folder):
                found.append(folder)
    return found


def outputs_path(env: Mapping[str, str]) -> Path | None:
    value = env.get("GITHUB_OUTPUT")
    return Path(value) if value else None


def summary_path(env: Mapping[str, str]) -> Path | None:
    value = env.get("GITHUB_STEP_SUMMARY")
    return Path(value) if value else None
