"""What the scrubber's tests through real tools share: the planted value, the marker its
redaction leaves, and a pipeline of real tools (the clean secret registry: conftest.py)."""

from __future__ import annotations

import shutil
import subprocess

import pytest

VALUE = b"pl4nted-S3cret/value+with=odd&chars!"
"""A value of no token shape: found only by value."""
RULE = b"[REDACTED:env:K]"


def tool(command: str, data: bytes) -> bytes:
    """`data` through `command` (a shell pipeline of real tools); skipped where the first
    tool is not installed."""
    if shutil.which(command.split()[0]) is None:
        pytest.skip(f"{command.split()[0]} is not installed")
    return subprocess.run(command, shell=True, input=data, capture_output=True,
                          check=True).stdout
