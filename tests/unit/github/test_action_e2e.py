"""The action end to end: real webhook payloads in, the contract-checking fake API out."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from fake_github import APP_TOKEN, OTHER_BOT, PAT_TOKEN, FakeGitHub
from gh_support import TOKEN, fork_payload, parse_outputs, payload
from sample import sample_comment

from copeca_action.errors import ConfigError
from copeca_action.github import (
    MAX_COMMENT_CHARS,
    OUTPUT_NAMES,
    ActionContext,
    Outcome,
    RetryPolicy,
    main,
    marker,
)

OWNER, REPO, PR = "Codertocat", "Hello-World", 2
KEY = (OWNER, REPO, PR)


def engine(verdict: str = "improvement", tasks: int = 6, note: str = "") -> Any:
    def run(ctx: ActionContext) -> Outcome:
        data = sample_comment(ctx.inputs.comment_id, tasks=tasks, note=note, verdict=verdict)
        return Outcome(comment=data, outputs={
            "delta": "-0.182", "delta-ci-low": "-0.275", "delta-ci-high": "-0.081",
            "bundle-path": str(ctx.output_dir / "run.copeca")})
    return run


def run_main(env: dict[str, str], eng: Any = None, sleeps: list[float] | None = None) -> int:
    log = sleeps if sleeps is not None else []
    return main(env, eng if eng is not None else engine(),
                policy=RetryPolicy(attempts=3, backoff_s=0.25), sleep=log.append)


def outputs(env: dict[str, str]) -> dict[str, str]:
    return parse_outputs(Path(env["GITHUB_OUTPUT"]))


def test_first_run_creates_the_comment_and_writes_every_output(
        fake_github: FakeGitHub, actions_env: Any, capsys: pytest.CaptureFixture[str]) -> None:
    env = actions_env("pull_request", payload("pull_request.opened"), fake_github.url)
    assert run_main(env) == 0
    comments = fake_github.comments[KEY]
    assert len(comments) == 1
    body = comments[0]["body"]
    assert body.startswith(marker("copeca"))
    assert "Cost per correct −18.2% (95% CI −27.5 to −8.1%) vs baseline" in body
    out = outputs(env)
    assert set(OUTPUT_NAMES) <= set(out)
    assert out["verdict"] == "improvement" and out["delta"] == "-0.182"
    assert out["comment-url"] == comments[0]["html_url"]
    assert out["artifact-name"] == "copeca"
    badge = json.loads(Path(out["badge-path"]).read_text())
    assert badge["message"] == "−18.2% vs baseline"
    assert "vs baseline" in Path(env["GITHUB_STEP_SUMMARY"]).read_text()
    printed = capsys.readouterr()
    assert f"::add-mask::{TOKEN}" in printed.out
    assert TOKEN not in printed.out.replace(f"::add-mask::{TOKEN}", "") + printed.err


def test_rerun_updates_the_same_comment(fake_github: FakeGitHub, actions_env: Any) -> None:
    env = actions_env("pull_request", payload("pull_request.opened"), fake_github.url)
    assert run_main(env) == 0
    first_id = fake_github.comments[KEY][0]["id"]
    env = actions_env("pull_request", payload("pull_request.synchronize"), fake_github.url)
    assert run_main(env, engine(note="second run")) == 0
    comments = fake_github.comments[KEY]
    assert len(comments) == 1 and comments[0]["id"] == first_id
    assert "second run" in comments[0]["body"]
    assert [c.method for c in fake_github.calls] == ["GET", "POST", "GET", "PATCH"]


def test_finds_its_comment_among_120_across_pages(fake_github: FakeGitHub,
                                                  actions_env: Any) -> None:
    fake_github.seed(*KEY, [f"review comment {i}" for i in range(119)])
    fake_github.seed(*KEY, [marker("copeca") + "\nold result"], bot=True)
    env = actions_env("pull_request", payload("pull_request.synchronize"), fake_github.url)
    assert run_main(env) == 0
    comments = fake_github.comments[KEY]
    assert len(comments) == 120
    assert "old result" not in comments[-1]["body"] and "−18.2%" in comments[-1]["body"]
    gets = [c for c in fake_github.calls if c.method == "GET"]
    assert len(gets) == 2  # 100 + 20


def test_403_fails_with_the_missing_permission_but_keeps_outputs(
        fake_github: FakeGitHub, actions_env: Any, capsys: pytest.CaptureFixture[str]) -> None:
    fake_github.fail("POST", r"/comments$", 403, "Resource not accessible by integration")
    env = actions_env("pull_request", payload("pull_request.opened"), fake_github.url)
    assert run_main(env) == 2  # the tool failed: not 1, which is a regression
    err = capsys.readouterr()
    assert "pull-requests: write" in err.err
    assert "::error title=copeca-action::" in err.out
    assert outputs(env)["verdict"] == "improvement"
    assert "pull-requests: write" in Path(env["GITHUB_STEP_SUMMARY"]).read_text()


def test_502_then_success(fake_github: FakeGitHub, actions_env: Any) -> None:
    fake_github.fail("GET", r"/comments$", 502, "Server Error")
    sleeps: list[float] = []
    env = actions_env("pull_request", payload("pull_request.opened"), fake_github.url)
    assert run_main(env, sleeps=sleeps) == 0
    assert sleeps == [0.25]
    assert len(fake_github.comments[KEY]) == 1


def test_a_70000_character_report_posts_a_truncated_comment(fake_github: FakeGitHub,
                                                            actions_env: Any) -> None:
    env = actions_env("pull_request", payload("pull_request.opened"), fake_github.url)
    assert run_main(env, engine(tasks=400, note="x" * 150)) == 0
    body = fake_github.comments[KEY][0]["body"]
    assert len(body) <= MAX_COMMENT_CHARS
    assert "This comment is truncated" in body
    summary = Path(env["GITHUB_STEP_SUMMARY"]).read_text()
    assert "This comment is truncated" not in summary  # the summary allows 1 MiB
    assert len(summary) > MAX_COMMENT_CHARS and "(400 tasks)" in summary


def test_fork_without_secrets_is_skipped_and_says_why(fake_github: FakeGitHub,
                                                      actions_env: Any) -> None:
    env = actions_env("pull_request", fork_payload(), fake_github.url,
                      anthropic_api_key="")
    ran: list[bool] = []
    assert run_main(env, lambda ctx: ran.append(True)) == 0
    assert ran == []
    assert outputs(env)["verdict"] == "skipped"
    body = fake_github.comments[KEY][0]["body"]
    assert "skipped" in body and "fork (mallory/Hello-World)" in body


def test_fork_with_a_read_only_token_still_exits_0(fake_github: FakeGitHub, actions_env: Any,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    fake_github.fail("POST", r"/comments$", 403, "Resource not accessible by integration")
    env = actions_env("pull_request", fork_payload(), fake_github.url, anthropic_api_key="")
    assert run_main(env) == 0
    assert "::warning::copeca-action: could not comment" in capsys.readouterr().out
    assert outputs(env)["verdict"] == "skipped"


@pytest.mark.parametrize(("verdict", "code"), [("inconclusive", 0), ("regression", 1)])
def test_a_forks_dry_run_publishes_its_verdict_and_warns_that_it_cannot_comment(
        fake_github: FakeGitHub, actions_env: Any, capsys: pytest.CaptureFixture[str],
        verdict: str, code: int) -> None:
    """A fork's pull request with `dry-run: true` runs (no secret needed), but GitHub gives a
    fork's `pull_request` job a read-only token: the comment and the check run answer 403.
    That was exit 2, "the tool itself failed", a red job its author cannot fix, after the
    verdict was computed; now the verdict decides the exit code, as on any other run, the
    summary and outputs hold it, and a warning says why there is no comment."""
    fake_github.fail("POST", r"/comments$", 403, "Resource not accessible by integration")
    fake_github.fail("POST", r"/check-runs$", 403, "Resource not accessible by integration",
                     times=2)
    env = actions_env("pull_request", fork_payload(), fake_github.url, anthropic_api_key="",
                      dry_run="true", check_run="true")
    assert run_main(env, engine(verdict)) == code
    out = capsys.readouterr().out
    assert "::warning::copeca-action: could not comment" in out
    assert "read-only" in out and "job summary" in out
    assert outputs(env)["verdict"] == verdict and outputs(env)["comment-url"] == ""
    assert verdict in Path(env["GITHUB_STEP_SUMMARY"]).read_text()


def test_a_403_on_a_pull_request_of_the_repository_itself_still_fails(
        fake_github: FakeGitHub, actions_env: Any) -> None:
    fake_github.fail("POST", r"/comments$", 403, "Resource not accessible by integration")
    env = actions_env("pull_request", payload("pull_request.opened"), fake_github.url)
    assert run_main(env, engine("inconclusive")) == 2


def test_a_repository_without_a_benchmark_is_told_how_to_make_one(
        fake_github: FakeGitHub, actions_env: Any) -> None:
    """The workflow added before any benchmark (docs/action.md's ten lines alone): the real
    engine stops before anything runs, names the missing file and says how to write it."""
    from copeca_action.github import run_engine

    env = actions_env("pull_request", payload("pull_request.opened"), fake_github.url,
                      check_run="true")
    assert run_main(env, run_engine) == 2
    summary = Path(env["GITHUB_STEP_SUMMARY"]).read_text()
    assert "no scenario file at" in summary and "benchmark/scenarios/pr.yaml" in summary
    assert "copeca-action init . --kind" in summary
    # every output is set (empty) on a failure too, as docs/action.md promises
    from copeca_action.github._action import OUTPUT_NAMES

    assert outputs(env) == dict.fromkeys(OUTPUT_NAMES, "")
    [run] = fake_github.check_runs
    assert run["history"] == ["in_progress", "completed"] and run["conclusion"] == "failure"
    assert fake_github.comments.get(KEY, []) == []


def test_pull_request_target_is_refused_before_any_call(
        fake_github: FakeGitHub, actions_env: Any, capsys: pytest.CaptureFixture[str]) -> None:
    env = actions_env("pull_request_target", fork_payload(), fake_github.url)
    assert run_main(env) == 2
    assert "allow-pull-request-target" in capsys.readouterr().err
    assert fake_github.calls == []


@pytest.mark.parametrize("verdict,fail_on,code", [
    ("regression", "regression", 1), ("inconclusive", "regression", 0),
    ("inconclusive", "inconclusive", 1), ("invalid", "inconclusive", 1),
    ("regression", "never", 0), ("improvement", "inconclusive", 0)])
def test_exit_code_follows_fail_on(fake_github: FakeGitHub, actions_env: Any, verdict: str,
                                   fail_on: str, code: int) -> None:
    env = actions_env("pull_request", payload("pull_request.opened"), fake_github.url,
                      fail_on=fail_on)
    assert run_main(env, engine(verdict=verdict)) == code


def test_push_and_release_write_outputs_without_commenting(fake_github: FakeGitHub,
                                                           actions_env: Any) -> None:
    for name, event in (("push", "push"), ("release", "release.published")):
        env = actions_env(name, payload(event), fake_github.url)
        assert run_main(env) == 0
        assert outputs(env)["comment-url"] == ""
    assert fake_github.calls == []


def test_check_run_is_created_on_request(fake_github: FakeGitHub, actions_env: Any) -> None:
    env = actions_env("pull_request", payload("pull_request.opened"), fake_github.url,
                      check_run="true", comment="never")
    assert run_main(env, engine(verdict="regression")) == 1
    assert [c.method + " " + c.path for c in fake_github.calls] == [
        "POST /repos/Codertocat/Hello-World/check-runs",  # in_progress, before the plan runs
        "PATCH /repos/Codertocat/Hello-World/check-runs/1001"]  # completed with the verdict
    [run] = fake_github.check_runs
    assert run["history"] == ["in_progress", "completed"]
    assert run["conclusion"] == "failure" and run["name"] == "copeca-action"


def test_a_simulated_check_run_says_so_in_its_title(fake_github: FakeGitHub,
                                                    actions_env: Any) -> None:
    """The check's title is what a checks list shows: a scripted model's verdict is labelled
    there too, not only in the summary's banner."""
    def simulated(ctx: ActionContext) -> Outcome:
        out = engine()(ctx)
        data = out.comment.model_copy(update={"simulated": "In every run the scripted model "
                                                            "answered."})
        return Outcome(comment=data, outputs=out.outputs)

    env = actions_env("pull_request", payload("pull_request.opened"), fake_github.url,
                      check_run="true", comment="never")
    assert run_main(env, simulated) == 0
    [run] = fake_github.check_runs
    title = fake_github.check_outputs[run["id"]]["title"]
    assert title.startswith("simulated improvement: Cost per correct −18.2%"), title


def test_check_runs_are_named_per_comment_id(fake_github: FakeGitHub, actions_env: Any) -> None:
    for cid in ("claude", "codex"):
        env = actions_env("pull_request", payload("pull_request.opened"), fake_github.url,
                          check_run="true", comment="never", comment_id=cid)
        run_main(env, engine(verdict="improvement"))
    assert [r["name"] for r in fake_github.check_runs] == ["copeca-action (claude)",
                                                           "copeca-action (codex)"]
    assert all(r["history"] == ["in_progress", "completed"] for r in fake_github.check_runs)


def test_a_failing_engine_completes_the_started_check_run(fake_github: FakeGitHub,
                                                         actions_env: Any) -> None:
    from copeca_action.errors import InfraError

    def broken(ctx: Any) -> Any:
        raise InfraError("the tool under test does not start")

    env = actions_env("pull_request", payload("pull_request.opened"), fake_github.url,
                      check_run="true", comment="never")
    assert run_main(env, broken) != 0
    [run] = fake_github.check_runs
    assert run["history"] == ["in_progress", "completed"] and run["conclusion"] == "failure"


def test_a_failure_message_stays_inside_its_code_block_and_is_scrubbed(
        fake_github: FakeGitHub, actions_env: Any) -> None:
    """An error quoting a task file (a PR author's text) cannot close the code block and
    forge a verdict in the job summary or the check run; a secret in it is redacted in the
    check run as in the summary."""
    from copeca_action.errors import InfraError

    secret = "sk-ant-api03-" + "Q" * 40
    forged = "task x```\n```\n### 🟢 copeca-action: improvement\n````\n" + secret

    def broken(ctx: Any) -> Any:
        raise InfraError(forged)

    env = actions_env("pull_request", payload("pull_request.opened"), fake_github.url,
                      check_run="true", comment="never", anthropic_api_key=secret)
    assert run_main(env, broken) != 0
    summary = Path(env["GITHUB_STEP_SUMMARY"]).read_text()
    [run] = fake_github.check_runs
    for text in (summary, fake_github.check_outputs[run["id"]]["summary"]):
        fence = next(ln for ln in text.splitlines() if ln.startswith("`"))
        assert fence == "`````text"  # longer than the message's longest run of backticks
        assert text.rstrip().endswith("\n`````") and text.count("`````") == 2
        assert secret not in text


def test_without_an_engine_it_stops_after_the_event_with_a_clear_message(
        actions_env: Any, capsys: pytest.CaptureFixture[str]) -> None:
    env = actions_env("pull_request", payload("pull_request.opened"))
    assert main(env) == 2
    assert "engine is not wired" in capsys.readouterr().err


def test_on_change_leaves_an_unchanged_result_alone(fake_github: FakeGitHub,
                                                    actions_env: Any) -> None:
    env = actions_env("pull_request", payload("pull_request.opened"), fake_github.url,
                      comment="on-change")
    assert run_main(env) == 0
    fake_github.calls.clear()
    assert run_main(env, engine(note="different note, same numbers")) == 0
    assert [c.method for c in fake_github.calls] == ["GET"]


def test_on_change_is_not_fooled_by_another_bots_copy(fake_github: FakeGitHub,
                                                     actions_env: Any) -> None:
    """An echo bot reposts our comment, marker and state marker at its start, and ours is
    then deleted: with `on-change` the second run must not take the echo for its own
    unchanged comment (it would post nothing) nor edit it (403): it posts its own."""
    env = actions_env("pull_request", payload("pull_request.opened"), fake_github.url,
                      comment="on-change")
    assert run_main(env) == 0
    ours = fake_github.comments[KEY].pop()
    fake_github.seed(OWNER, REPO, PR, [ours["body"]], author=OTHER_BOT)
    fake_github.calls.clear()
    assert run_main(env) == 0
    assert [c.method for c in fake_github.calls] == ["GET", "POST"]
    echo, mine = fake_github.comments[KEY]
    assert (echo["user"]["login"], mine["user"]["login"]) == (OTHER_BOT.login,
                                                              "github-actions[bot]")
    assert outputs(env)["comment-url"] == mine["html_url"]


def test_a_personal_token_is_asked_who_it_is_before_the_plan_runs(
        fake_github: FakeGitHub, actions_env: Any) -> None:
    """github-token is not the workflow's (a PAT): GET /user names whom the comment is
    written as, before the engine spends anything; a rerun edits that comment, not the
    Actions bot's marked one beside it."""
    fake_github.seed(OWNER, REPO, PR, [marker("copeca") + "\nanother job's"], bot=True)
    env = actions_env("pull_request", payload("pull_request.opened"), fake_github.url,
                      github_token=PAT_TOKEN)
    env["COPECA_WORKFLOW_TOKEN"] = "false"
    asked: list[list[str]] = []

    def spy(ctx: ActionContext) -> Outcome:
        asked.append([c.path for c in fake_github.calls])
        assert ctx.comment_author == "maintainer"
        return engine()(ctx)

    assert run_main(env, spy) == 0 and run_main(env, spy) == 0
    assert asked[0] == ["/user"]
    bots, mine = fake_github.comments[KEY]
    assert bots["body"].endswith("another job's") and mine["user"]["login"] == "maintainer"


def test_an_unknown_identity_stops_the_action_before_the_plan_runs(
        fake_github: FakeGitHub, actions_env: Any) -> None:
    """An app token whose login GitHub will not tell (GraphQL refused): a named error and
    exit code before the engine starts; nothing is spent on a verdict that cannot be posted
    as ours."""
    fake_github.fail("POST", r"^/graphql$", 403, "Resource not accessible by integration")
    env = actions_env("pull_request", payload("pull_request.opened"), fake_github.url,
                      github_token=APP_TOKEN)
    env["COPECA_WORKFLOW_TOKEN"] = "false"
    ran: list[str] = []

    def spy(ctx: ActionContext) -> Outcome:
        ran.append("engine")
        return engine()(ctx)

    assert run_main(env, spy) != 0
    assert ran == [] and KEY not in fake_github.comments
    assert "whose token" in Path(env["GITHUB_STEP_SUMMARY"]).read_text()


def test_workflow_run_comments_on_the_pr_given_as_input(fake_github: FakeGitHub,
                                                        actions_env: Any) -> None:
    """The fork-safe part 2: no PR in the payload (a fork), the number comes as an input."""
    data = {"action": "completed", "repository": payload("push")["repository"],
            "workflow_run": {"event": "pull_request", "head_sha": "a" * 40,
                             "head_branch": "changes", "pull_requests": [],
                             "head_repository": {"full_name": "mallory/Hello-World"}}}
    env = actions_env("workflow_run", data, fake_github.url, merge="from-pr/*.copeca",
                      pull_request="2", anthropic_api_key="")
    fake_github.add_pull(2, "a" * 40, "mallory/Hello-World")  # the API binds #2 to that run
    seen: list[ActionContext] = []

    def merge_engine(ctx: ActionContext) -> Outcome:
        seen.append(ctx)
        return engine()(ctx)

    assert run_main(env, merge_engine) == 0
    assert seen[0].inputs.merge == ["from-pr/*.copeca"] and seen[0].event.pr_number == 2
    assert len(fake_github.comments[KEY]) == 1


@pytest.mark.parametrize("where", [("GET", r"/comments$"), ("POST", r"/comments$")])
def test_html_200_from_the_api_is_a_clean_error_and_outputs_and_upload_happen(
        fake_github: FakeGitHub, actions_env: Any, capsys: pytest.CaptureFixture[str],
        where: tuple[str, str]) -> None:
    fake_github.nonsense(*where, times=10)
    env = actions_env("pull_request", payload("pull_request.opened"), fake_github.url)
    assert run_main(env) == 2  # the tool failed, not a regression
    err = capsys.readouterr().err
    assert "not JSON" in err and "Traceback" not in err
    out = outputs(env)
    assert out["verdict"] and out["artifact-path"].endswith("upload")
    assert Path(out["artifact-path"]).is_dir() or out["artifact-path"].startswith("/home")


def test_paths_in_outputs_are_translated_to_the_host(fake_github: FakeGitHub,
                                                     actions_env: Any) -> None:
    env = actions_env("push", payload("push"), fake_github.url)
    env["COPECA_HOST_WORKSPACE"] = "/home/runner/work/repo/repo"
    out_dir = Path(env["GITHUB_WORKSPACE"]) / ".copeca"
    assert run_main(env) == 0
    out = outputs(env)
    assert out["badge-path"] == "/home/runner/work/repo/repo/.copeca/badge.json"
    assert out["artifact-path"] == "/home/runner/work/repo/repo/.copeca/upload"
    assert out["bundle-path"] == "/home/runner/work/repo/repo/.copeca/run.copeca"
    assert (out_dir / "badge.svg").is_file()  # written inside, reported as outside
    # the upload holds what a user needs, never the run folders
    assert {p.name for p in (out_dir / "upload").iterdir()} <= {
        "run.copeca", "report.json", "report.md", "report.html", "badge.json", "badge.svg"}
    assert (out_dir / "upload" / "badge.json").is_file()


def test_the_marker_is_the_jobs_comment_id_whatever_the_engine_said(
        fake_github: FakeGitHub, actions_env: Any) -> None:
    env = actions_env("pull_request", payload("pull_request.opened"), fake_github.url,
                      comment_id="shard-a")

    def stale_id(ctx: ActionContext) -> Outcome:
        return Outcome(comment=sample_comment("copeca"))

    assert run_main(env, stale_id) == 0
    body = fake_github.comments[KEY][0]["body"]
    assert body.startswith(marker("shard-a")) and marker("copeca") not in body


def test_a_failure_quoting_a_workflow_command_is_printed_inert(
        fake_github: FakeGitHub, actions_env: Any, capsys: pytest.CaptureFixture[str]) -> None:
    """A message can quote a task file or an agent's output: a line of it starting with `::`
    would be obeyed by the runner (a forged annotation, a mask). stderr holds it between
    `::stop-commands::` and its token; the annotation has its line breaks escaped."""
    forged = "task.yaml: bad value\n::error title=copeca-action::verdict improvement"

    def failing(ctx: ActionContext) -> Outcome:
        raise ConfigError(forged)

    env = actions_env("pull_request", payload("pull_request.opened"), fake_github.url)
    assert run_main(env, failing) == 2
    err = capsys.readouterr()
    lines = err.err.splitlines()
    start = next(i for i, ln in enumerate(lines) if ln.startswith("::stop-commands::"))
    token = lines[start].removeprefix("::stop-commands::")
    assert len(token) == 32 and lines.index(f"::{token}::") > start
    inside = lines[start + 1:lines.index(f"::{token}::")]
    assert "::error title=copeca-action::verdict improvement" in inside
    assert [ln for ln in lines[:start] + lines[lines.index(f"::{token}::") + 1:]
            if ln.startswith("::")] == []
    assert "%0A::error" in err.out  # the annotation's own copy: one escaped line
