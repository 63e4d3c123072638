"""A tiny real git repository with a bug, and helpers that make real patches against it."""

from __future__ import annotations

import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from copeca_action.evaluate import FeatureSpec

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


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """calc.py with a wrong `add`, a visible test folder, committed."""
    root = tmp_path / "repo"
    root.mkdir()
    run_git(root, "init", "-q", "-b", "main")
    write(root, {"calc.py": CALC, "README.md": "calc\n", "tests/__init__.py": "",
                 "tests/test_visible.py": TEST_MUL, "conftest.py": ""})
    run_git(root, "add", "-A")
    run_git(root, "commit", "-q", "-m", "base")
    return root


@pytest.fixture
def make_diff(repo: Path, tmp_path: Path) -> MakeDiff:
    """A real `git diff --binary` of some edits against the repo's HEAD."""
    counter = iter(range(1000))

    def diff(edits: Edits) -> str:
        work = tmp_path / f"edit{next(counter)}"
        shutil.copytree(repo, work)
        write(work, edits)
        run_git(work, "add", "-A")
        return run_git(work, "diff", "--cached", "--binary", "-M", "HEAD")

    return diff


@pytest.fixture
def feature_add(make_diff: MakeDiff) -> FeatureSpec:
    return FeatureSpec(id=1, tests_patch=make_diff({"tests/test_add.py": TEST_ADD}),
                       command=[*PYTEST, "tests/test_add.py"], timeout_s=60, env=QUIET)


@pytest.fixture
def feature_mul(make_diff: MakeDiff) -> FeatureSpec:
    return FeatureSpec(id=2, tests_patch=make_diff({"tests/test_mul.py": TEST_MUL}),
                       command=[*PYTEST, "tests/test_mul.py"], timeout_s=60, env=QUIET)
