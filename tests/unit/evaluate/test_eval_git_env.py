"""Evaluation's git (private clones, commits, resets, the patch of a tree) gets the
allow-listed environment: a program git starts (here a `filter` driver the tree's config
names, as an LFS checkout's does) never sees the harness's API keys or tokens."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from evalrepo import run_git, write

from copeca_action.evaluate import base_repo, clone_tree, extract_patch
from copeca_action.evaluate._git import commit_all, reset_tree

SECRETS = {"ANTHROPIC_API_KEY": "sk-ant-test-evaluate-git-0123456789",
           "GITHUB_TOKEN": "ghp_evaluategit0123456789abcdefABCDEF0123",
           "MY_DEPLOY_SECRET": "deploy-secret-value-0123456789"}


def _dump_env_filter(tree: Path, dump: Path) -> None:
    """A clean/smudge filter that appends its environment to `dump` and passes bytes on."""
    script = tree.parent / "dump_env.py"
    script.write_text("import json, os, sys\n"
                      f"with open({str(dump)!r}, 'a') as fh:\n"
                      "    fh.write(json.dumps(dict(os.environ)) + '\\n')\n"
                      "sys.stdout.buffer.write(sys.stdin.buffer.read())\n")
    for kind in ("clean", "smudge"):
        run_git(tree, "config", f"filter.probe.{kind}", f"{sys.executable} {script}")
    (tree / ".git" / "info").mkdir(exist_ok=True)
    (tree / ".git" / "info" / "attributes").write_text("*.py filter=probe\n")


def test_programs_evaluation_git_starts_see_no_secret(
        repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name, value in SECRETS.items():
        monkeypatch.setenv(name, value)
    base = base_repo(repo)
    tree = clone_tree(base, tmp_path / "scratch")
    dump = tmp_path / "env.jsonl"
    _dump_env_filter(tree, dump)
    write(tree, {"calc.py": "def add(a, b):\n    return a + b\n"})
    commit_all(tree, "agent patch")
    reset_tree(tree, base.commit)
    write(tree, {"calc.py": "changed = True\n"})
    assert "changed = True" in extract_patch(tree, base.commit)
    seen = [json.loads(line) for line in dump.read_text().splitlines()]
    assert seen, "the filter never ran: the test checks nothing"
    for env in seen:
        assert not set(SECRETS) & set(env), sorted(set(SECRETS) & set(env))
        assert not any(v in json.dumps(env) for v in SECRETS.values())
