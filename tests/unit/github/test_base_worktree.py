"""`compare: base-ref`: the tool at the PR's base is a real git worktree of its checkout."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from copeca_action.errors import ConfigError
from copeca_action.github import ActionContext, EventContext
from copeca_action.github._engine import base_worktree, effective_compare, prepare_ctx
from copeca_action.github._inputs import ActionInputs


def _git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(cwd), "-c", "user.name=t", "-c",
                           "user.email=t@example.com", *args], check=True, text=True,
                          capture_output=True).stdout.strip()


def _ctx(ws: Path, compare: str, base_sha: str | None) -> ActionContext:
    inputs = ActionInputs(scenario="demo", tool_dir="tool", compare=compare)  # type: ignore[arg-type]
    event = EventContext(name="pull_request", repository="o/r", pr_number=1,
                         base_sha=base_sha)
    return ActionContext(inputs, event, ws, ws / ".copeca")


def test_base_ref_is_checked_out_beside_the_head_and_removed_after(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    tool = ws / "tool"
    tool.mkdir(parents=True)
    _git(ws, "init", "-q")
    (tool / "server.py").write_text("OLD\n")
    _git(ws, "add", ".")
    _git(ws, "commit", "-qm", "base")
    base = _git(ws, "rev-parse", "HEAD")
    (tool / "server.py").write_text("NEW\n")
    _git(ws, "commit", "-qam", "head")
    with base_worktree(_ctx(ws, "base-ref", base)) as where:
        assert where is not None and where.name == "tool"
        assert (where / "server.py").read_text() == "OLD\n"
        assert (tool / "server.py").read_text() == "NEW\n"
    assert not where.exists()
    assert len(_git(ws, "worktree", "list").splitlines()) == 1


def test_baseline_needs_no_worktree_and_base_ref_needs_a_base(tmp_path: Path) -> None:
    (tmp_path / "tool").mkdir()
    with base_worktree(_ctx(tmp_path, "baseline", None)) as where:
        assert where is None
    with pytest.raises(ConfigError, match="compare"), \
            base_worktree(_ctx(tmp_path, "both", None)):
        pass


@pytest.mark.parametrize("event", ["push", "workflow_dispatch", "release", "schedule"])
@pytest.mark.parametrize("compare", ["base-ref", "both"])
def test_an_event_without_a_base_compares_with_the_baseline_and_says_so(
        tmp_path: Path, event: str, compare: str) -> None:
    """One workflow on `pull_request` and `push` (the push to main records the history):
    `compare: base-ref|both` stopped every push with exit 2 ("the push event names none"),
    though the docs' trigger table says such events compare with the baseline."""
    (tmp_path / "tool").mkdir()
    inputs = ActionInputs(scenario="demo", tool_dir="tool", compare=compare,  # type: ignore[arg-type]
                          dry_run=True)
    ev = EventContext(name=event, repository="o/r", ref="refs/heads/main",  # type: ignore[arg-type]
                      default_branch="main", head_sha="a" * 40)
    ctx, note = effective_compare(ActionContext(inputs, ev, tmp_path, tmp_path / ".copeca"))
    assert ctx.inputs.compare == "baseline"
    assert note is not None and f"compare: {compare}" in note and event in note
    with base_worktree(ctx) as where:  # no worktree, no error
        assert where is None
    arms = prepare_ctx(ctx).plan.arms
    assert "baseline" in arms and not any(a.endswith("@base") for a in arms)


def test_a_pull_request_keeps_its_comparison_and_one_without_a_base_still_fails(
        tmp_path: Path) -> None:
    ctx = _ctx(tmp_path, "both", "b" * 40)
    assert effective_compare(ctx) == (ctx, None)
    (tmp_path / "tool").mkdir()
    broken = _ctx(tmp_path, "base-ref", None)  # a pull_request payload without base.sha
    assert effective_compare(broken) == (broken, None)
    with pytest.raises(ConfigError, match="compare"), base_worktree(broken):
        pass


def test_a_checkout_made_as_actions_checkout_makes_it_gets_its_base_fetched(
        tmp_path: Path) -> None:
    """actions/checkout on `pull_request` by default: a fresh repository that fetched only
    the PR's merge commit at depth 1 and checked it out detached. The base commit is not
    there and is fetched by its SHA."""
    origin = tmp_path / "origin"
    (origin / "tool").mkdir(parents=True)
    _git(origin, "init", "-q", "-b", "trunk")  # a default branch not named main
    (origin / "tool" / "server.py").write_text("OLD\n")
    _git(origin, "add", ".")
    _git(origin, "commit", "-qm", "base")
    base = _git(origin, "rev-parse", "HEAD")
    _git(origin, "checkout", "-qb", "feature")
    (origin / "tool" / "server.py").write_text("NEW\n")
    _git(origin, "commit", "-qam", "head")
    _git(origin, "checkout", "-q", "trunk")
    _git(origin, "merge", "-q", "--no-ff", "-m", "merge", "feature")
    merge = _git(origin, "rev-parse", "HEAD")
    _git(origin, "reset", "-q", "--hard", base)  # the merge commit lives only under refs/pull
    _git(origin, "update-ref", "refs/pull/1/merge", merge)
    ws = tmp_path / "ws"
    ws.mkdir()
    _git(ws, "init", "-q")
    _git(ws, "remote", "add", "origin", origin.as_uri())
    _git(ws, "fetch", "-q", "--no-tags", "--depth=1", "origin",
         f"+{merge}:refs/remotes/pull/1/merge")
    _git(ws, "checkout", "-q", "--detach", "refs/remotes/pull/1/merge")
    assert _git(ws, "rev-parse", "--is-shallow-repository") == "true"
    with base_worktree(_ctx(ws, "base-ref", base)) as where:
        assert where is not None and (where / "server.py").read_text() == "OLD\n"
    assert (ws / "tool" / "server.py").read_text() == "NEW\n"
