"""A tiny real git repository with a bug, and helpers that make real patches against it."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from evalrepo import CALC, PYTEST, QUIET, TEST_ADD, TEST_MUL, Edits, MakeDiff, run_git, write

from copeca_action.evaluate import FeatureSpec


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
