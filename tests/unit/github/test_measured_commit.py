"""The comment names the commit that was measured: on a `pull_request` event the workflow
checks out GitHub's merge commit (refs/pull/N/merge), not the PR head the payload names."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from gh_support import payload

from copeca_action.github import ActionContext
from copeca_action.github._comment_data import RunFacts
from copeca_action.github._engine import measured_commits
from copeca_action.github._event import parse_event
from copeca_action.github._from_report import Measured
from copeca_action.github._inputs import ActionInputs
from copeca_action.github._render import commits_text


def _git(cwd: Path, *args: str) -> str:
    env = {**os.environ, "GIT_AUTHOR_DATE": "2026-01-01T00:00:00Z",
           "GIT_COMMITTER_DATE": "2026-01-01T00:00:00Z"}
    return subprocess.run(["git", "-C", str(cwd), "-c", "user.name=t", "-c",
                           "user.email=t@example.com", "-c", "protocol.file.allow=always",
                           *args], check=True, text=True, capture_output=True,
                          env=env).stdout.strip()


def _pr_repo(root: Path) -> tuple[Path, str, str, str]:
    """A repository as GitHub holds a PR: base (main moved on after the branch), the PR
    head, and the merge commit refs/pull/2/merge with parents (main's tip, head)."""
    repo = root / "origin"
    repo.mkdir()
    _git(repo, "init", "-q", "-b", "master")
    (repo / "server.py").write_text("v1\n")
    _git(repo, "add", ".")
    _git(repo, "commit", "-qm", "fork point")
    _git(repo, "checkout", "-qb", "changes")
    (repo / "server.py").write_text("v2\n")
    _git(repo, "commit", "-qam", "the PR")
    head = _git(repo, "rev-parse", "HEAD")
    _git(repo, "checkout", "-q", "master")
    (repo / "README").write_text("main moved on\n")
    _git(repo, "add", ".")
    _git(repo, "commit", "-qm", "main moved on")
    base = _git(repo, "rev-parse", "HEAD")
    _git(repo, "merge", "-q", "--no-ff", "-m", "Merge into master", "changes")
    merge = _git(repo, "rev-parse", "HEAD")
    _git(repo, "update-ref", "refs/pull/2/merge", merge)
    _git(repo, "reset", "-q", "--hard", base)
    return repo, base, head, merge


def _ctx(ws: Path, head: str, base: str, compare: str = "baseline") -> ActionContext:
    data = payload("pull_request.synchronize")
    data["pull_request"]["head"]["sha"] = head
    data["pull_request"]["base"]["sha"] = base
    event = parse_event("pull_request", data, {"GITHUB_SHA": "0" * 40})
    inputs = ActionInputs(scenario="demo", tool_dir="tool", compare=compare)  # type: ignore[arg-type]
    return ActionContext(inputs, event, ws, ws / ".copeca")


def _text(m: Measured) -> str:
    return commits_text(RunFacts(spend_usd=0.0, duration_s=None, runs=0, commits=m.commits,
                                 merged_from=m.merged_from, pr_head=m.pr_head))


@pytest.mark.parametrize("compare", ["baseline", "base-ref"])
def test_a_pull_request_job_measures_the_merge_commit_and_says_so(tmp_path: Path,
                                                                 compare: str) -> None:
    """actions/checkout's default for pull_request: refs/pull/N/merge at depth 1. The comment
    named the payload's PR head as what was measured; it now names the merge commit, the PR
    head it merged and the base commit it was merged into (read from the commit object,
    which a shallow clone holds without its parents)."""
    origin, base, head, merge = _pr_repo(tmp_path)
    ws = tmp_path / "ws"
    _git(tmp_path, "clone", "-q", "--depth=1", "--no-local", f"file://{origin}", str(ws))
    _git(ws, "fetch", "-q", "--depth=1", "origin", "refs/pull/2/merge")
    _git(ws, "checkout", "-q", "--detach", "FETCH_HEAD")
    (ws / "tool").mkdir()
    measured = measured_commits(_ctx(ws, head, base, compare))
    assert measured.commits[0] == ("merge commit", merge)
    assert measured.merged_from == (head, base)
    text = _text(measured)
    assert text.startswith(f"measured merge commit <code>{merge[:12]}</code> (the PR head "
                           f"<code>{head[:12]}</code> merged into <code>{base[:12]}</code>)")
    assert (f"against base <code>{base[:12]}</code>" in text) == (compare == "base-ref")


def test_a_checkout_of_the_pr_head_is_named_the_pr_head(tmp_path: Path) -> None:
    origin, base, head, _ = _pr_repo(tmp_path)
    _git(origin, "checkout", "-q", "--detach", head)
    (origin / "tool").mkdir()
    measured = measured_commits(_ctx(origin, head, base))
    assert measured == Measured([("PR head", head)])
    assert _text(measured) == f"measured PR head <code>{head[:12]}</code>"


def test_a_checkout_of_something_else_says_it_is_not_the_pr_head(tmp_path: Path) -> None:
    origin, base, head, _ = _pr_repo(tmp_path)  # left at base: neither head nor its merge
    (origin / "tool").mkdir()
    text = _text(measured_commits(_ctx(origin, head, base)))
    assert text == (f"measured commit <code>{base[:12]}</code> (not the PR head "
                    f"<code>{head[:12]}</code>)")


def test_without_a_git_checkout_no_pr_commit_is_claimed(tmp_path: Path) -> None:
    (tmp_path / "tool").mkdir()
    assert measured_commits(_ctx(tmp_path, "a" * 40, "b" * 40)) == Measured([])


def test_a_config_planted_in_the_tools_checkout_runs_nothing(tmp_path: Path) -> None:
    """The tool's set-up commands may write its checkout's `.git/config`, and the harness's
    git runs outside every sandbox: the commit is read through a view whose config is the
    harness's own, so nothing planted there is obeyed (here an unknown extension, which makes
    git refuse the repository, so the comment would name no commit)."""
    origin, base, head, _ = _pr_repo(tmp_path)
    _git(origin, "checkout", "-q", "--detach", head)
    (origin / "tool").mkdir()
    ran = tmp_path / "ran"
    hook = tmp_path / "planted.sh"
    hook.write_text(f"#!/bin/sh\ntouch {ran}\n")
    hook.chmod(0o755)
    with (origin / ".git" / "config").open("a") as fh:
        fh.write(f"[core]\n\tfsmonitor = {hook}\n\thooksPath = {tmp_path}\n"
                 "\trepositoryformatversion = 1\n[extensions]\n\tplanted = yes\n")
    assert measured_commits(_ctx(origin, head, base)) == Measured([("PR head", head)])
    assert not ran.exists()


def test_head_vs_base_on_a_merge_commit_takes_the_base_it_was_merged_into(
        tmp_path: Path) -> None:
    """The head arm is the merge commit, built on the base branch's tip of the moment; the
    payload's base.sha may be older (the branch moved on since the event). The base arm is
    then the merge commit's first parent, so the delta is the PR's change alone, and the
    comment names that base."""
    from copeca_action.github._engine import base_worktree

    origin, base, head, merge = _pr_repo(tmp_path)
    older = _git(origin, "rev-parse", f"{base}~1")  # the payload's stale base.sha
    ws = tmp_path / "ws"
    _git(tmp_path, "clone", "-q", "--no-local", f"file://{origin}", str(ws))
    _git(ws, "fetch", "-q", "origin", "refs/pull/2/merge")
    _git(ws, "checkout", "-q", "--detach", "FETCH_HEAD")
    (ws / "tool").mkdir()
    ctx = _ctx(ws, head, older, "base-ref")
    measured = measured_commits(ctx)
    assert measured.commits == [("merge commit", merge), ("base", base)]
    with base_worktree(ctx, measured) as where:
        assert where is not None
        assert _git(where.parent, "rev-parse", "HEAD") == base
        assert (where.parent / "README").read_text() == "main moved on\n"
