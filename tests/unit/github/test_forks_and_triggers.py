"""Forks a maintainer approves, the privileged half's PR binding, and the other triggers
(schedule, merge_group, issue_comment), against the fake GitHub API (every request and
response checked against GitHub's OpenAPI description)."""

from __future__ import annotations

import copy
import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from fake_github import FakeGitHub
from gh_support import fork_payload, parse_outputs, payload
from sample import sample_comment

from copeca_action.github import ActionContext, Outcome, RetryPolicy, main
from copeca_action.github._engine import run_engine

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "github"
OWNER, REPO, PR = "Codertocat", "Hello-World", 2
KEY = (OWNER, REPO, PR)


def fixture(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((FIXTURES / f"{name}.json").read_text())
    return data


def recording_engine(seen: list[ActionContext], verdict: str = "improvement") -> Any:
    def run(ctx: ActionContext) -> Outcome:
        seen.append(ctx)
        return Outcome(comment=sample_comment(ctx.inputs.comment_id, verdict=verdict))
    return run


def run_main(env: dict[str, str], eng: Any) -> int:
    return main(env, eng, policy=RetryPolicy(attempts=2, backoff_s=0.01), sleep=lambda s: None)


def comment_event(body: str, user: str = "maintainer") -> dict[str, Any]:
    """octokit's issue_comment.created example, on a pull request (issue.pull_request set),
    in the repository the other payloads use."""
    data = copy.deepcopy(fixture("issue_comment.created"))
    data["repository"] = payload("pull_request.opened")["repository"]
    data["issue"]["number"] = PR
    data["issue"]["pull_request"] = {
        "url": f"https://api.github.com/repos/{OWNER}/{REPO}/pulls/{PR}",
        "html_url": f"https://github.com/{OWNER}/{REPO}/pull/{PR}",
        "diff_url": f"https://github.com/{OWNER}/{REPO}/pull/{PR}.diff",
        "patch_url": f"https://github.com/{OWNER}/{REPO}/pull/{PR}.patch"}
    data["comment"]["body"] = body
    data["comment"]["user"]["login"] = user
    data["comment"]["author_association"] = "CONTRIBUTOR"  # never trusted: the API decides
    return data


def git_checkout(where: Path) -> str:
    """The workspace as `actions/checkout` with `ref: refs/pull/N/head` leaves it."""
    where.mkdir(parents=True, exist_ok=True)
    run = lambda *a: subprocess.run(["git", "-C", str(where), *a], check=True,  # noqa: E731
                                    capture_output=True, text=True)
    run("init", "-q")
    (where / "tool.py").write_text("print('my tool')\n")
    run("add", ".")
    run("-c", "user.name=f", "-c", "user.email=f@x", "commit", "-qm", "fork change")
    return run("rev-parse", "HEAD").stdout.strip()


# ------------------------------------------------------------------ the fork flow, end to end

def test_a_fork_pr_approved_by_a_maintainer_end_to_end(
        fake_github: FakeGitHub, actions_env: Any, capsys: pytest.CaptureFixture[str]) -> None:
    # 1. The fork's pull_request run: no key reaches it; skipped, saying how to approve.
    env = actions_env("pull_request", fork_payload(), fake_github.url, anthropic_api_key="",
                      comment="never")
    assert run_main(env, recording_engine([])) == 0
    head = fork_payload()["pull_request"]["head"]["sha"]
    said = capsys.readouterr().out
    assert f"`/copeca run {head[:12]}` on https://github.com/{OWNER}/{REPO}/pull/{PR}" in said
    assert "https://github.com/copeca-action/copeca-action/blob/v" in said
    summary = Path(env["GITHUB_STEP_SUMMARY"]).read_text()  # rendered (links defused)
    assert f"<code>/copeca run {head[:12]}</code>" in summary

    # 2. A maintainer reviews and comments `/copeca run SHA`; the workflow checked out the
    #    PR head; the action checks the commenter's access and the head, then runs.
    workspace = Path(env["GITHUB_WORKSPACE"])
    sha = git_checkout(workspace)
    fake_github.add_pull(PR, sha, "mallory/Hello-World")
    fake_github.permissions["maintainer"] = "maintain"
    seen: list[ActionContext] = []
    env = actions_env("issue_comment", comment_event(f"/copeca run {sha[:10]}"),
                      fake_github.url, check_run="true")
    assert run_main(env, recording_engine(seen)) == 0
    [ctx] = seen
    assert ctx.event.pr_number == PR and ctx.event.head_sha == sha
    assert ctx.event.head_repository == "mallory/Hello-World" and ctx.event.is_fork
    assert len(fake_github.comments[KEY]) == 1  # the verdict, on the fork's PR
    [check] = fake_github.check_runs
    assert check["head_sha"] == sha and check["history"] == ["in_progress", "completed"]
    calls = [c.method + " " + c.path for c in fake_github.calls]
    assert calls[:2] == [f"GET /repos/{OWNER}/{REPO}/collaborators/maintainer/permission",
                         f"GET /repos/{OWNER}/{REPO}/pulls/{PR}"]


@pytest.mark.parametrize(("level", "body", "why"), [
    ("read", "/copeca run", "has read access"),
    ("triage", "/copeca run", "has triage access"),
    ("write", "/copeca run 0000000", "head moved to"),
    ("write", "looks good to me", "not a `/copeca run` command"),
])
def test_a_comment_that_does_not_approve_runs_nothing_and_posts_nothing(
        fake_github: FakeGitHub, actions_env: Any, level: str, body: str, why: str,
        capsys: pytest.CaptureFixture[str]) -> None:
    fake_github.add_pull(PR, "f" * 40, "mallory/Hello-World")
    fake_github.permissions["someone"] = level
    seen: list[ActionContext] = []
    env = actions_env("issue_comment", comment_event(body, "someone"), fake_github.url,
                      check_run="true")
    assert run_main(env, recording_engine(seen)) == 0
    assert seen == [] and fake_github.comments.get(KEY) is None
    assert fake_github.check_runs == []
    assert why in capsys.readouterr().out
    assert parse_outputs(Path(env["GITHUB_OUTPUT"]))["verdict"] == "skipped"


def test_a_hostile_command_is_quoted_inert_in_the_summary(
        fake_github: FakeGitHub, actions_env: Any, capsys: pytest.CaptureFixture[str]) -> None:
    """Anyone can comment: the word after `/copeca run` is theirs, and the reason quoting it
    goes to the job summary, which renders markdown and HTML. It shows as text there (no
    image, no mention, no link, no cross-reference), and is cut to a readable length."""
    pin = "<img/src=x/onerror=alert(1)>@org/team#123[x](https://evil.example)" + "a" * 5000
    env = actions_env("issue_comment", comment_event(f"/copeca run {pin}", "someone"),
                      fake_github.url)
    assert run_main(env, recording_engine([])) == 0
    summary = Path(env["GITHUB_STEP_SUMMARY"]).read_text()
    assert "expected a commit SHA" in summary
    for bad in ("<img", "@org", "#123", "](", "https://"):
        assert bad not in summary, bad
    assert len(summary) < 1500
    assert "expected a commit SHA" in capsys.readouterr().out


def test_an_approved_run_needs_the_approved_commit_checked_out(
        fake_github: FakeGitHub, actions_env: Any, capsys: pytest.CaptureFixture[str]) -> None:
    env = actions_env("issue_comment", comment_event("/copeca run"), fake_github.url)
    git_checkout(Path(env["GITHUB_WORKSPACE"]))
    fake_github.add_pull(PR, "e" * 40, "mallory/Hello-World")  # the PR moved on
    fake_github.permissions["maintainer"] = "admin"
    seen: list[ActionContext] = []
    assert run_main(env, recording_engine(seen)) == 2
    assert seen == [] and "approved pull request head is " + "e" * 40 in capsys.readouterr().err


# ------------------------------------------------------------------ the privileged half

def workflow_run_event(head_sha: str) -> dict[str, Any]:
    """octokit's workflow_run.completed example, as the fork PR's run: no pull_requests."""
    data = copy.deepcopy(fixture("workflow_run.completed"))
    data["repository"] = payload("pull_request.opened")["repository"]
    run = data["workflow_run"]
    run.update({"event": "pull_request", "head_sha": head_sha, "head_branch": "changes",
                "pull_requests": []})
    run["head_repository"]["full_name"] = "mallory/Hello-World"
    return data


def test_a_forged_pr_number_in_the_artifact_is_refused(
        fake_github: FakeGitHub, actions_env: Any, capsys: pytest.CaptureFixture[str]) -> None:
    """The fork's run wrote `7` (someone else's PR) into the artifact: #7's head is not the
    commit the run ran on, so nothing is posted anywhere."""
    fake_github.add_pull(7, "b" * 40, f"{OWNER}/{REPO}")
    env = actions_env("workflow_run", workflow_run_event("a" * 40), fake_github.url,
                      merge="from-pr/*.copeca", pull_request="7", anthropic_api_key="")
    seen: list[ActionContext] = []
    assert run_main(env, recording_engine(seen)) == 2
    assert seen == [] and fake_github.comments == {}
    err = capsys.readouterr().err
    assert "refusing to comment on pull request #7" in err and "untrusted" in err


@pytest.mark.parametrize("dry_run", ["false", "true"])
def test_a_workflow_run_from_a_fork_never_runs_a_scenario(
        fake_github: FakeGitHub, actions_env: Any, capsys: pytest.CaptureFixture[str],
        tmp_path: Path, dry_run: str) -> None:
    """A privileged workflow_run (the repository's key, a write token) after a fork's run,
    whose workflow checked out the fork's head and runs a scenario instead of `merge:`: the
    fork's tool would run with the secrets (or, had it checked out the base, the base's
    numbers would be posted as the fork's). Refused before the engine and any post."""
    head = git_checkout(tmp_path / "ws")  # actions/checkout with ref: workflow_run.head_sha
    fake_github.add_pull(PR, head, "mallory/Hello-World")
    env = actions_env("workflow_run", workflow_run_event(head), fake_github.url,
                      pull_request=str(PR), check_run="true", dry_run=dry_run)
    seen: list[ActionContext] = []
    assert run_main(env, recording_engine(seen)) == 2
    assert seen == [] and fake_github.comments == {} and fake_github.check_runs == []
    err = capsys.readouterr().err
    assert "workflow_run" in err and "mallory/Hello-World" in err and "merge" in err


def test_part_two_on_a_skipped_fork_run_comments_how_to_approve(fake_github: FakeGitHub,
                                                               actions_env: Any) -> None:
    """Part 1 ran for a fork without a key and uploaded no bundle: part 2 does not fail
    (it used to exit 2); it posts the skip comment with the approval steps."""
    fake_github.add_pull(PR, "a" * 40, "mallory/Hello-World")
    env = actions_env("workflow_run", workflow_run_event("a" * 40), fake_github.url,
                      merge="from-pr/copeca/*.copeca", pull_request=str(PR),
                      anthropic_api_key="", fail_on="inconclusive")
    assert run_main(env, run_engine) == 0
    [comment] = fake_github.comments[KEY]
    assert "from a fork (mallory/Hello-World)" in comment["body"]
    assert f"<code>/copeca run {'a' * 12}</code> on https:" in comment["body"]
    assert f"github.com/{OWNER}/{REPO}/pull/{PR}" in comment["body"]
    assert parse_outputs(Path(env["GITHUB_OUTPUT"]))["verdict"] == "skipped"


def test_part_two_shows_no_numbers_from_a_forks_unsigned_bundle(
        fake_github: FakeGitHub, actions_env: Any, corpus_root: Path) -> None:
    """A fork's part 1 gets no key and runs nothing, but the fork can edit part 1's workflow
    to upload a bundle it wrote itself. Without a key to check its signature, part 2 posts the
    skip comment, never the bundle's verdict and numbers under the action's name."""
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bundle"))
    from bundle_support import contents_for

    from copeca_action._util.scrub import Scrubber
    from copeca_action.bundle import write_bundle
    from copeca_action.plan import build_plan
    from copeca_action.scenario import load_corpus, load_scenario

    fake_github.add_pull(PR, "a" * 40, "mallory/Hello-World")
    env = actions_env("workflow_run", workflow_run_event("a" * 40), fake_github.url,
                      merge="from-pr/copeca/*.copeca", pull_request=str(PR),
                      anthropic_api_key="", fail_on="never", scenario="")
    path = corpus_root / "scenarios" / "demo.yaml"
    plan = build_plan(load_scenario(path), load_corpus(corpus_root).tasks)
    write_bundle(contents_for(plan, path),
                 Path(env["GITHUB_WORKSPACE"]) / "from-pr" / "copeca" / "forged.copeca",
                 None, Scrubber())
    assert run_main(env, run_engine) == 0
    [comment] = fake_github.comments[KEY]
    body = comment["body"]
    assert "copeca-action: skipped" in body and "Cost per correct" not in body
    assert "from a fork (mallory/Hello-World)" in body and "unsigned" in body
    out = parse_outputs(Path(env["GITHUB_OUTPUT"]))
    assert out["verdict"] == "skipped" and out["delta"] == ""


# ------------------------------------------------------------------ schedule and merge_group

def test_schedule_runs_on_the_default_branch_with_a_check_and_no_comment(
        fake_github: FakeGitHub, actions_env: Any) -> None:
    env = actions_env("schedule", {"schedule": "17 3 * * *",
                                   "repository": payload("push")["repository"]},
                      fake_github.url, check_run="true")
    env.update(GITHUB_SHA="c" * 40, GITHUB_REF="refs/heads/main")
    seen: list[ActionContext] = []
    assert run_main(env, recording_engine(seen)) == 0
    [ctx] = seen
    assert ctx.event.head_sha == "c" * 40 and ctx.event.ref == "refs/heads/main"
    assert ctx.event.extra == {"schedule": "17 3 * * *"} and ctx.event.pr_number is None
    assert fake_github.comments == {}
    [check] = fake_github.check_runs
    assert check["head_sha"] == "c" * 40 and check["conclusion"] == "success"


def test_merge_group_reports_a_required_check_on_the_queue_commit(
        fake_github: FakeGitHub, actions_env: Any) -> None:
    data = fixture("merge_group.checks_requested")
    data["repository"] = payload("push")["repository"]
    env = actions_env("merge_group", data, fake_github.url, check_run="true",
                      compare="base-ref", comment_id="claude")
    seen: list[ActionContext] = []
    assert run_main(env, recording_engine(seen, verdict="regression")) == 1
    [ctx] = seen
    group = data["merge_group"]
    assert ctx.event.head_sha == group["head_sha"] and ctx.event.base_sha == group["base_sha"]
    assert ctx.event.base_ref == "main"  # base-ref compares with the queue's base
    [check] = fake_github.check_runs
    assert check["name"] == "copeca-action (claude)" and check["conclusion"] == "failure"
    assert check["head_sha"] == group["head_sha"] and fake_github.comments == {}
