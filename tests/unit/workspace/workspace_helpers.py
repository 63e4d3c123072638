"""Helpers shared by the workspace, engine and bench tests: git commands and pins."""

from __future__ import annotations

import subprocess
from pathlib import Path

from copeca_action.scenario import RepoSpec

FASTAPI_SNAPSHOT_COMMIT = "7e20269603620e7d014d2ff600bd584f577e8c83"
"""The commit the fastapi 0.115.6 sdist always unpacks to (fixed identity and date)."""


def sh(*args: str, cwd: Path | None = None) -> str:
    env = {"GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_NOSYSTEM": "1", "PATH": "/usr/bin:/bin",
           "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@e", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@e", "HOME": "/nonexistent"}
    return subprocess.run(args, cwd=cwd, env=env, check=True, capture_output=True,
                          text=True).stdout.strip()


def make_origin(repo: Path) -> list[str]:
    """A local git repo with two commits, used as a git pin's URL (github is unreachable)."""
    repo.mkdir(parents=True)
    sh("git", "init", "-q", "-b", "main", cwd=repo)
    (repo / "app.py").write_text("def answer():\n    return 41\n")
    sh("git", "add", ".", cwd=repo)
    sh("git", "commit", "-q", "-m", "first", cwd=repo)
    first = sh("git", "rev-parse", "HEAD", cwd=repo)
    (repo / "app.py").write_text("def answer():\n    return 42\n")
    (repo / "test_app.py").write_text("from app import answer\nassert answer() == 42\n")
    sh("git", "add", ".", cwd=repo)
    sh("git", "commit", "-q", "-m", "second", cwd=repo)
    return [first, sh("git", "rev-parse", "HEAD", cwd=repo)]


def git_spec(url: str, commit: str, **extra: object) -> RepoSpec:
    return RepoSpec.model_validate({"language": "python", "git": {"url": url, "commit": commit},
                                    **extra})
