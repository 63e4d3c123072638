"""Evaluation's git (private clones, commits, resets) gets the allow-listed environment: a
program git starts (here an alias run by git's shell) never sees the harness's API keys or
tokens."""

from __future__ import annotations

from pathlib import Path

import pytest
from evalrepo import FIXED_ADD, write

from copeca_action.evaluate import base_repo, clone_tree
from copeca_action.evaluate._git import commit_all, git

SECRETS = {"ANTHROPIC_API_KEY": "sk-ant-test-evaluate-git-0123456789",
           "GITHUB_TOKEN": "ghp_evaluategit0123456789abcdefABCDEF0123",
           "MY_DEPLOY_SECRET": "deploy-secret-value-0123456789"}


def test_programs_evaluation_git_starts_see_no_secret(
        repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name, value in SECRETS.items():
        monkeypatch.setenv(name, value)
    tree = clone_tree(base_repo(repo), tmp_path / "scratch")
    write(tree, {"calc.py": FIXED_ADD})
    commit_all(tree, "agent patch")
    seen = git(tree, "-c", "alias.probe=!env", "probe").stdout
    assert "GIT_DIR=" in seen and "PATH=" in seen, "the alias never ran: the test checks nothing"
    assert not [n for n in SECRETS if f"{n}=" in seen]
    assert not [v for v in SECRETS.values() if v in seen]
