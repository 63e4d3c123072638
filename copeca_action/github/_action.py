"""The action from start to end: inputs, event, gate, engine, then outputs, summary,
comment, check run and the exit code. `entrypoint.py` calls `main()`.

The engine (run, analyse, bundle, sign) is a callable passed in: this module never imports
the stages below it, it only publishes their finished result.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
import sys
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path

from copeca_action import __version__
from copeca_action._util.scrub import (
    capture_env,
    register_private_dir,
    scrub_uncaught,
    shared_scrubber,
)
from copeca_action.errors import ConfigError, CopecaError, GitHubError, Problem, os_error
from copeca_action.github._approval import (
    approve_comment,
    check_checkout,
    verify_pull_request,
)
from copeca_action.github._badge import badge_from_comment, write_badge
from copeca_action.github._checks import (
    check_name,
    complete_check_run,
    create_check_run,
    start_check_run,
)
from copeca_action.github._client import GitHubClient, GitHubForbidden, RetryPolicy
from copeca_action.github._comment_data import CommentData, Footer
from copeca_action.github._comments import upsert_comment
from copeca_action.github._event import EventContext, read_event
from copeca_action.github._files import (
    MAX_SUMMARY_BYTES,
    annotate,
    escape_command,
    mask,
    outputs_path,
    runner_file_dirs,
    summary_path,
    write_outputs,
    write_summary,
)
from copeca_action.github._gate import check_gate
from copeca_action.github._history import (
    DATA_BRANCH,
    HistoryEntry,
    history_line,
    publish_history,
    read_history,
    records_history,
    trend_runs,
)
from copeca_action.github._identity import token_login
from copeca_action.github._inputs import ActionInputs, path_problems, read_inputs
from copeca_action.github._markdown import code_block
from copeca_action.github._render import escape_with_code, headline_text, render_comment
from copeca_action.render import render_history_html
from copeca_action.report import Report

OUTPUT_NAMES = ("verdict", "delta", "delta-ci-low", "delta-ci-high", "delta-ci-level",
                "control-delta", "cpc-baseline", "cpc-tool", "bundle-path", "bundle-sha256",
                "report-path", "badge-path", "comment-url", "simulated")
"""Every output of action.yml; each is written on every run (empty when not known)."""
STEP_OUTPUTS = ("artifact-name", "artifact-path")
"""Written for action.yml's own upload step, not outputs of the action."""
FAILING = {"regression": {"regression"},
           "inconclusive": {"regression", "inconclusive", "invalid"},
           "never": set()}
CONTAINER_WORKSPACE = "/github/workspace"
NOT_WIRED = ("the benchmark engine is not wired into this build of copeca-action: the event "
             "was read and gated, but nothing can run yet (copeca_action.github.run_action "
             "needs an engine)")


@dataclass(frozen=True)
class ActionContext:
    """What the engine gets: validated inputs, the event, and where to write."""

    inputs: ActionInputs
    event: EventContext
    workspace: Path
    output_dir: Path
    check_run_id: int | None = None
    """The check run started `in_progress` for this job, completed by `publish`."""
    comment_author: str | None = None
    """The login our token writes the comment as (github/_identity.py), learned before the
    plan runs; only a comment by it is ever edited."""


@dataclass
class Outcome:
    """What the engine hands back: the comment's data, output values, optional extras."""

    comment: CommentData
    outputs: dict[str, str] = field(default_factory=dict)
    """Values for OUTPUT_NAMES (paths as seen by this process)."""
    summary: str | None = None
    """Step summary markdown; when None, the comment without its size cut, then `report_md`."""
    report_md: str | None = None
    """The full report.md, carried into the step summary (GitHub allows 1 MiB there)."""
    report: Report | None = None
    """The finished report (for the history's badge and the PR's comparison with it)."""
    history: HistoryEntry | None = None
    """This run's summary, appended to the history when the event records one."""


Engine = Callable[[ActionContext], Outcome]


def exit_code(verdict: str, fail_on: str) -> int:
    return 1 if verdict in FAILING.get(fail_on, set()) else 0


def host_path(path: str, env: Mapping[str, str]) -> str:
    """A path inside the container as the runner sees it (outputs are used on the host)."""
    host = env.get("COPECA_HOST_WORKSPACE", "")
    inner = env.get("GITHUB_WORKSPACE", CONTAINER_WORKSPACE).rstrip("/")
    if host and path and (path == inner or path.startswith(inner + "/")):
        return host.rstrip("/") + path[len(inner):]
    return path


def artifact_name(inputs: ActionInputs) -> str:
    """Unique per matrix job: `copeca[-<comment-id>][-shard-i-of-n]` (no `/` allowed)."""
    name = "copeca" if inputs.comment_id == "copeca" else f"copeca-{inputs.comment_id}"
    if inputs.shard:
        name += f"-shard-{inputs.shard.index}-of-{inputs.shard.count}"
    return name


UPLOAD_DIR = "upload"
"""The folder of the output dir that action.yml uploads: the bundle, the report files and the
badge, nothing else (run folders hold the agent's raw output)."""


def stage_upload(output_dir: Path, values: Mapping[str, str]) -> Path:
    """Copy what a user needs (bundle, report.json/.md/.html, badge.json/.svg, and the history
    page when this run wrote one) into `output_dir/upload/`, text files once more through the
    scrubber; the bundle as it is (its members were scrubbed when it was written, and it is
    signed)."""
    dest = output_dir / UPLOAD_DIR
    if dest.exists():
        shutil.rmtree(dest)
    dest.mkdir(parents=True)
    wanted: list[Path] = []
    for key in ("bundle-path", "report-path", "badge-path"):
        if values.get(key):
            wanted.append(Path(values[key]))
    for key, siblings in (("report-path", ("report.md", "report.html")),
                          ("badge-path", ("badge.svg",))):
        if values.get(key):
            wanted += [Path(values[key]).with_name(name) for name in siblings]
    wanted.append(output_dir / "history.html")  # written by _history on recording events
    scrubber = shared_scrubber()
    for src in wanted:
        if not src.is_file() or src.is_symlink():
            continue
        if src.suffix == ".copeca":
            shutil.copyfile(src, dest / src.name)
        else:
            (dest / src.name).write_bytes(scrubber.scrub(src.read_bytes()))
    return dest


def skipped_outcome(ctx: ActionContext, reason: str) -> Outcome:
    footer = Footer(alert_threshold=ctx.inputs.alert_threshold or 0.05,
                    fail_threshold=ctx.inputs.fail_threshold or 0.10, control_tolerance=0.15,
                    seed=0, resamples=0, run_url=ctx.event.run_url, version=__version__)
    data = CommentData(comment_id=ctx.inputs.comment_id, verdict="skipped",
                       skipped_reason=reason, footer=footer)
    return Outcome(comment=data)


def _output_dir(inputs: ActionInputs, workspace: Path) -> Path:
    out = Path(inputs.output_dir)
    return out if out.is_absolute() else workspace / out


def prepare(env: Mapping[str, str]) -> ActionContext:
    inputs = read_inputs(env)
    if env.get("GITHUB_ACTIONS") == "true":
        mask(inputs.secrets)
    event = read_event(env)
    if event.pr_number is None and inputs.pull_request is not None:
        event = event.model_copy(update={"pr_number": inputs.pull_request})
    workspace = Path(env.get("GITHUB_WORKSPACE") or os.getcwd())
    if problems := path_problems(inputs, workspace):
        raise ConfigError(problems)
    return ActionContext(inputs, event, workspace, _output_dir(inputs, workspace))


def run_action(env: Mapping[str, str], engine: Engine | None = None,
               policy: RetryPolicy | None = None,
               sleep: Callable[[float], None] | None = None) -> int:
    """The whole action; returns the process exit code. Raises CopecaError on failure."""
    ctx = prepare(env)
    for folder in runner_file_dirs(env, ctx.workspace):  # before any code of the tool runs
        register_private_dir(folder)
    if ctx.event.name == "issue_comment":
        approved = approve_comment(_api(ctx, env, policy, sleep), ctx.event)
        if approved.event is None:  # anyone can comment: say why in the log, post nothing
            print(f"copeca-action: not run: {approved.reason}", flush=True)
            publish_quiet(ctx, env, approved.reason)
            return 0
        ctx = replace(ctx, event=approved.event)
        check_checkout(_tool_dir(ctx), approved.event.head_sha or "")
    elif (ctx.event.name == "workflow_run" and ctx.inputs.pull_request is not None
          and ctx.event.pr_number == ctx.inputs.pull_request):
        verify_pull_request(_api(ctx, env, policy, sleep), ctx.event, ctx.inputs.pull_request)
    gate = check_gate(ctx.event, ctx.inputs)
    if gate.decision == "skip":
        print(f"copeca-action: skipped: {gate.reason}", flush=True)
        outcome = skipped_outcome(ctx, gate.reason)
    else:
        if engine is None:
            raise CopecaError(NOT_WIRED)
        if wants_comment(ctx):  # a check that can fail: before the first paid run
            ctx = replace(ctx, comment_author=comment_author(ctx, env, _api(ctx, env, policy,
                                                                            sleep)))
        check = _start_check(ctx, env, policy, sleep)
        try:
            outcome = engine(ctx)
        except CopecaError as exc:
            _fail_check(ctx, env, check, str(exc), policy, sleep)
            raise
        ctx = replace(ctx, check_run_id=check)
    publish(ctx, outcome, env, policy, sleep)
    code = exit_code(outcome.comment.verdict, ctx.inputs.fail_on)
    if code:
        annotate("error", f"copeca-action: verdict {outcome.comment.verdict} "
                 f"(fail-on: {ctx.inputs.fail_on})"
                 + failing_text(outcome.comment, FAILING.get(ctx.inputs.fail_on, set())))
    return code


def failing_text(data: CommentData, failing: set[str]) -> str:
    """With several tools, which of them fail the gate (": toolB vs baseline: regression");
    "" with one (the verdict is its comparison's)."""
    named = [f"{c.name}: {c.verdict}" for c in data.comparisons
             if c.deciding and c.verdict in failing]
    return ": " + ", ".join(named) if named else ""


def _tool_dir(ctx: ActionContext) -> Path:
    path = Path(ctx.inputs.tool_dir)
    return (path if path.is_absolute() else ctx.workspace / path).resolve()


def _api(ctx: ActionContext, env: Mapping[str, str], policy: RetryPolicy | None,
         sleep: Callable[[float], None] | None) -> GitHubClient:
    """A client for checks that must happen (approval, PR binding): no token is an error."""
    if not ctx.inputs.github_token:
        raise ConfigError(Problem("inputs", f"the {ctx.event.name} event needs the API (who "
                                  "commented, which pull request): pass github-token",
                                  field="github-token"))
    return GitHubClient(ctx.inputs.github_token, env.get("GITHUB_API_URL")
                        or ctx.event.api_url, policy=policy, sleep=sleep or time.sleep)


def _start_check(ctx: ActionContext, env: Mapping[str, str], policy: RetryPolicy | None,
                 sleep: Callable[[float], None] | None) -> int | None:
    """The check run, `in_progress` while the plan runs (None when not asked or not allowed:
    the end then creates it completed)."""
    if not (ctx.inputs.check_run and ctx.event.head_sha and ctx.inputs.github_token):
        return None
    client = _api(ctx, env, policy, sleep)
    try:
        run = start_check_run(client, ctx.event.owner, ctx.event.repo, ctx.event.head_sha,
                              check_name(ctx.inputs.comment_id), ctx.event.run_url)
    except GitHubError as exc:
        annotate("warning", f"copeca-action: could not start the check run: {exc}")
        return None
    return run.id


def _fail_check(ctx: ActionContext, env: Mapping[str, str], check: int | None, message: str,
                policy: RetryPolicy | None, sleep: Callable[[float], None] | None) -> None:
    """A started check run must not stay `in_progress` when the action fails."""
    if check is None:
        return
    with contextlib.suppress(GitHubError):
        complete_check_run(_api(ctx, env, policy, sleep), ctx.event.owner, ctx.event.repo,
                           check, "invalid", "copeca-action failed",
                           code_block(shared_scrubber().scrub_text(message)))


def publish_quiet(ctx: ActionContext, env: Mapping[str, str], reason: str) -> None:
    """Outputs (verdict skipped) and the step summary, nothing posted. The reason may quote
    the comment of anyone who can comment: escaped as the PR comment's text is."""
    values = {name: "" for name in OUTPUT_NAMES}
    values["verdict"] = "skipped"
    if (path := summary_path(env)) is not None:
        write_summary(path, f"### copeca-action: not run\n\n{escape_with_code(reason)}\n")
    if (path := outputs_path(env)) is not None:
        write_outputs(path, values)


def publish(ctx: ActionContext, outcome: Outcome, env: Mapping[str, str],
            policy: RetryPolicy | None = None,
            sleep: Callable[[float], None] | None = None) -> None:
    """Badge, outputs, summary, then the comment and check run (the only network calls).
    Outputs and summary are written first so a failing API call still leaves them."""
    data = outcome.comment
    if data.comment_id != ctx.inputs.comment_id:  # the marker must be this job's id
        data = data.model_copy(update={"comment_id": ctx.inputs.comment_id})
    values = {name: "" for name in OUTPUT_NAMES}
    values.update(outcome.outputs)
    values["verdict"] = data.verdict
    values["simulated"] = "true" if data.simulated else "false"
    badge = badge_from_comment(data)
    badge_json, _ = write_badge(badge, ctx.output_dir)
    values["badge-path"] = values["badge-path"] or str(badge_json)
    client = _client(ctx, env, policy, sleep, outcome)
    if client is not None:
        data = _history(ctx, client, outcome, data)
    body = render_comment(data)
    if (path := summary_path(env)) is not None:
        write_summary(path, outcome.summary or summary_markdown(data, outcome.report_md))
    error: GitHubError | None = None
    if client is not None:
        try:
            values["comment-url"] = _comment(ctx, env, client, body)
            _check_run(ctx, client, data, body)
        except GitHubError as exc:
            error = exc
        except (ValueError, KeyError, TypeError, AttributeError) as exc:  # a JSON of another
            error = GitHubError(f"GitHub answered something this action cannot read "  # shape
                                f"({type(exc).__name__}: {exc}); the comment was not written")
    values["artifact-name"] = artifact_name(ctx.inputs)
    values["artifact-path"] = str(stage_upload(ctx.output_dir, values))
    for key in ("bundle-path", "report-path", "badge-path", "artifact-path"):
        values[key] = host_path(values[key], env)
    if (path := outputs_path(env)) is not None:
        write_outputs(path, values)
    else:
        for key, value in values.items():
            print(f"{key}={value}")
    if error is not None:
        if data.verdict == "skipped":  # a fork's token is read-only: say so, do not fail
            annotate("warning", f"copeca-action: could not comment: {error}")
            return
        if isinstance(error, GitHubForbidden) and read_only_token(ctx):
            annotate("warning", f"copeca-action: could not comment: {READ_ONLY_FORK} ({error})")
            return
        raise error


READ_ONLY_FORK = ("this pull request comes from a fork, and GitHub gives a fork's "
                  "`pull_request` job a read-only token, so neither the comment nor the check "
                  "run can be written; the verdict is in the job summary, the outputs and the "
                  "artifact, and the exit code follows `fail-on`")


def read_only_token(ctx: ActionContext) -> bool:
    """A fork's `pull_request` job: GitHub's token there is read-only, whatever the workflow's
    `permissions:` ask, so a 403 on the comment is GitHub's rule, not a failure of the run."""
    return ctx.event.name == "pull_request" and ctx.event.is_fork


def summary_markdown(data: CommentData, report_md: str | None) -> str:
    """The job summary: the comment uncut (every task), then the full report folded; the
    summary's own 1 MiB cut (write_summary) applies to the whole."""
    text = render_comment(data, limit=MAX_SUMMARY_BYTES // 2)
    if report_md:
        text += ("\n<details><summary>The full report (report.md)</summary>\n\n"
                 f"{report_md}\n\n</details>\n")
    return text


def _history(ctx: ActionContext, client: GitHubClient, outcome: Outcome,
             data: CommentData) -> CommentData:
    """Record this run in the history (default branch, release, schedule) or, on a pull
    request, compare with it. The history is secondary: a failure warns, never fails."""
    report = outcome.report
    if ctx.inputs.history == "never" or report is None:
        return data
    owner, repo = ctx.event.owner, ctx.event.repo
    try:
        if outcome.history is not None and records_history(ctx.event):
            history = publish_history(client, owner, repo, ctx.inputs.comment_id,
                                      outcome.history, report)
            page = ctx.output_dir / "history.html"
            page.write_text(render_history_html(trend_runs(history), title=f"{owner}/{repo}: "
                                                f"{ctx.inputs.comment_id}"), encoding="utf-8")
            print(f"copeca-action: history: {len(history.entries)} run(s) on {DATA_BRANCH}",
                  flush=True)
        elif ctx.event.pr_number is not None and ctx.inputs.comment != "never":
            c = report.headline_comparison
            if c is None or c.overall is None:
                return data
            history, _ = read_history(client, owner, repo, ctx.inputs.comment_id)
            # The history holds the default branch's runs, whatever this PR's base is.
            branch = ctx.event.default_branch or "the default branch"
            line = history_line(history, c.overall.cpc_tool, c.tool, branch)
            return data.model_copy(update={"history": line}) if line else data
    except GitHubError as exc:
        annotate("warning", f"copeca-action: history not updated: {exc}")
    return data


def wants_comment(ctx: ActionContext) -> bool:
    return (ctx.inputs.comment != "never" and ctx.event.pr_number is not None
            and bool(ctx.inputs.github_token))


def comment_author(ctx: ActionContext, env: Mapping[str, str], client: GitHubClient) -> str:
    """The login the comment is written as: known when action.yml says `github-token` is
    the workflow's own token (COPECA_WORKFLOW_TOKEN), else asked of GitHub."""
    if ctx.comment_author is not None:
        return ctx.comment_author
    login = token_login(client, workflow_token=env.get("COPECA_WORKFLOW_TOKEN") == "true")
    print(f"copeca-action: github-token acts as {login}; only its comment is edited",
          flush=True)
    return login


def _client(ctx: ActionContext, env: Mapping[str, str], policy: RetryPolicy | None,
            sleep: Callable[[float], None] | None,
            outcome: Outcome | None = None) -> GitHubClient | None:
    wants_comment = ctx.inputs.comment != "never" and ctx.event.pr_number is not None
    wants_check = ctx.inputs.check_run and bool(ctx.event.head_sha)
    wants_history = (ctx.inputs.history != "never" and outcome is not None
                     and outcome.history is not None and records_history(ctx.event))
    if not (wants_comment or wants_check or wants_history):
        return None
    if not ctx.inputs.github_token:
        annotate("warning", "copeca-action: no github-token: no comment and no check run")
        return None
    return GitHubClient(ctx.inputs.github_token, env.get("GITHUB_API_URL")
                        or ctx.event.api_url, policy=policy, sleep=sleep or time.sleep)


def _comment(ctx: ActionContext, env: Mapping[str, str], client: GitHubClient,
             body: str) -> str:
    number = ctx.event.pr_number
    if ctx.inputs.comment == "never" or number is None:
        return ""
    result = upsert_comment(client, ctx.event.owner, ctx.event.repo, number,
                            ctx.inputs.comment_id, body,
                            author=comment_author(ctx, env, client),
                            only_on_change=ctx.inputs.comment == "on-change")
    print(f"copeca-action: comment {result.action}: {result.html_url}", flush=True)
    return result.html_url


def _check_run(ctx: ActionContext, client: GitHubClient, data: CommentData,
               body: str) -> None:
    if not (ctx.inputs.check_run and ctx.event.head_sha):
        return
    verdict = f"simulated {data.verdict}" if data.simulated else data.verdict
    title = f"{verdict}: {headline_text(data)}" if data.headline else verdict
    if ctx.check_run_id is not None:
        complete_check_run(client, ctx.event.owner, ctx.event.repo, ctx.check_run_id,
                           data.verdict, title, body)
        return
    create_check_run(client, ctx.event.owner, ctx.event.repo, ctx.event.head_sha,
                     data.verdict, title, body, ctx.event.run_url,
                     name=check_name(ctx.inputs.comment_id))


def main(env: Mapping[str, str] | None = None, engine: Engine | None = None,
         policy: RetryPolicy | None = None,
         sleep: Callable[[float], None] | None = None) -> int:
    """Entrypoint: run, and on a CopecaError print it once (no traceback), put it in the
    step summary, and return its exit code."""
    env = os.environ if env is None else env
    capture_env(env)  # every secret input stays known to the scrubber, even once removed
    scrub_uncaught()  # a traceback may quote a secret
    try:
        return run_action(env, engine, policy, sleep)
    except (CopecaError, OSError) as exc:
        if isinstance(exc, OSError):
            exc = os_error(exc)
        message = shared_scrubber().scrub_text(str(exc))
        _print_inert(f"copeca-action: error: {message}")
        print(f"::error title=copeca-action::{escape_command(message)}", flush=True)
        if (path := summary_path(env)) is not None:
            with contextlib.suppress(GitHubError):
                write_summary(path, f"### ❌ copeca-action failed\n\n{code_block(message)}\n")
        _empty_outputs(env)
        return exc.exit_code


def _empty_outputs(env: Mapping[str, str]) -> None:
    """Every output set, empty, when the action failed before `publish` wrote them (bad
    inputs, no scenario): docs/action.md promises each output on every run, and a later
    step reading `verdict` must find it empty, not missing. Outputs already written (a
    failure after `publish`) are left as they are."""
    path = outputs_path(env)
    with contextlib.suppress(OSError, GitHubError):
        if path is not None and (not path.exists() or path.stat().st_size == 0):
            write_outputs(path, dict.fromkeys(OUTPUT_NAMES, ""))


def _print_inert(text: str) -> None:
    """`text` on stderr where no line of it is read as a workflow command: a message can
    quote a task file or an agent's output, and the runner obeys any log line starting with
    `::` (`::error`, `::add-mask::`...). Between `::stop-commands::` and its one-use token
    it reads none (GitHub's "Stopping and starting workflow commands")."""
    if "::" not in text:
        print(text, file=sys.stderr, flush=True)
        return
    token = secrets.token_hex(16)
    print(f"::stop-commands::{token}\n{text}\n::{token}::", file=sys.stderr, flush=True)
