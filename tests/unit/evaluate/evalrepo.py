"""Helpers for the evaluate tests: a tiny calc module with a bug, and file writers."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

CALC = "def add(a, b):\n    return a - b\n\n\ndef mul(a, b):\n    return a * b\n"
FIXED_ADD = CALC.replace("a - b", "a + b")
TEST_ADD = ("from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n\n\n"
            "def test_add_zero():\n    assert add(0, 4) == 4\n")
TEST_MUL = "from calc import mul\n\n\ndef test_mul():\n    assert mul(2, 3) == 6\n"
PYTEST = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--rootdir=."]
QUIET = {"PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}
"""The dev venv's pytest plugins (hypothesis...) only slow the toy suites down."""

Edits = dict[str, str | bytes | None]
MakeDiff = Callable[[Edits], str]


def run_git(cwd: Path, *argv: str) -> str:
    env = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@t", "PATH": "/usr/bin:/bin", "HOME": str(cwd)}
    return subprocess.run(["git", *argv], cwd=cwd, env=env, check=True, capture_output=True,
                          text=True).stdout


def write(root: Path, edits: Edits) -> None:
    for rel, content in edits.items():
        path = root / rel
        if content is None:
            path.unlink()
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content)


