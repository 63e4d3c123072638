"""The real engine behind the action: inputs → plan → runs → report, signed bundle → Outcome.

The GitHub layer's `run_action` stays engine-agnostic; `entrypoint.py` passes `run_engine`.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import glob
import hashlib
import os
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from copeca_action._util.hashing import sha256_file
from copeca_action._util.paths import corpus_dir
from copeca_action._util.percent import threshold_text
from copeca_action.bundle import keyid_of
from copeca_action.bundle._sign import parse_private_key
from copeca_action.conclude import merge_shards, shard_scenario
from copeca_action.errors import ConfigError, CopecaError, GitHubError, Problem
from copeca_action.github._action import ActionContext, Outcome, artifact_name, skipped_outcome
from copeca_action.github._approval import how_to_approve
from copeca_action.github._client import GitHubClient, RetryPolicy
from copeca_action.github._files import annotate
from copeca_action.github._from_report import (
    BundleInfo,
    Measured,
    comment_data,
    output_values,
)
from copeca_action.github._history import (
    History,
    HistoryEntry,
    history_entry,
    read_history,
    records_history,
    trend_runs,
)
from copeca_action.github._inputs import SOURCE
from copeca_action.pipeline import Prepared, conclude_prepared, execute, prepare_scenario
from copeca_action.render import TrendRun
from copeca_action.report import Report
from copeca_action.scenario import Task, find_corpus_root, load_corpus, load_scenario
from copeca_action.workspace._content import checkout_view, find_checkout
from copeca_action.workspace._git import HARDENING, git, git_env

KEY_ENV = {"anthropic_api_key": "ANTHROPIC_API_KEY", "openai_api_key": "OPENAI_API_KEY"}


def scenario_path(ctx: ActionContext) -> Path:
    if ctx.inputs.scenario == "demo":
        return corpus_dir() / "scenarios" / "demo.yaml"
    path = Path(ctx.inputs.scenario)
    path = path if path.is_absolute() else ctx.workspace / path
    if not path.is_file():
        raise ConfigError([Problem(SOURCE, f"no scenario file at {path} (paths are relative "
                                   "to the workspace; `demo` is the bundled demo). A "
                                   "repository without a benchmark yet: `copeca-action init . "
                                   "--kind mcp|env|hook|wrapper|setup` writes one, "
                                   "benchmark/scenarios/pr.yaml (docs/action.md); commit it "
                                   "on the branch this workflow runs on", field="scenario")])
    return path


def tool_dir(ctx: ActionContext) -> Path:
    path = Path(ctx.inputs.tool_dir)
    path = path if path.is_absolute() else ctx.workspace / path
    if not path.is_dir():
        raise ConfigError([Problem(SOURCE, f"no directory at {path}", field="tool-dir")])
    return path.resolve()


def scenario_overrides(ctx: ActionContext, path: Path) -> dict[str, object]:
    """Inputs that override the scenario: thresholds. (A dry run's scripted model and the
    benchmark's own scripts are set by `prepare_scenario(dry_run=True)`.)"""
    inputs = ctx.inputs
    scenario = load_scenario(path)
    changes: dict[str, object] = {}
    thresholds = scenario.thresholds.model_dump()
    if inputs.alert_threshold is not None:
        thresholds["alert"] = inputs.alert_threshold
    if inputs.fail_threshold is not None:
        thresholds["fail"] = inputs.fail_threshold
    if thresholds["fail"] < thresholds["alert"]:
        fail_from = "" if inputs.fail_threshold is not None else " (the scenario's)"
        alert_from = "" if inputs.alert_threshold is not None else " (the scenario's)"
        field = "fail-threshold" if inputs.fail_threshold is not None else "alert-threshold"
        fail, alert = threshold_text(thresholds["fail"]), threshold_text(thresholds["alert"])
        raise ConfigError([Problem(SOURCE, f"the fail threshold {fail}{fail_from} is below the "
                                   f"alert threshold {alert}{alert_from}; expected a fail "
                                   "threshold at least the alert threshold", field=field)])
    if thresholds != scenario.thresholds.model_dump():
        changes["thresholds"] = thresholds
    return changes


def prepare_ctx(ctx: ActionContext, *, base_tool_dir: Path | None = None,
                corpus: Path | None = None) -> Prepared:
    path = scenario_path(ctx)
    shard = (f"{ctx.inputs.shard.index}/{ctx.inputs.shard.count}" if ctx.inputs.shard
             else None)
    work = Path(tempfile.mkdtemp(prefix="copeca-work-"))  # worktrees stay out of the artifact
    return prepare_scenario(path, out=ctx.output_dir, compare=ctx.inputs.compare, shard=shard,
                            corpus=corpus, tool_dir=tool_dir(ctx), base_tool_dir=base_tool_dir,
                            budget_usd=ctx.inputs.budget_usd, work_dir=work,
                            overrides=scenario_overrides(ctx, path),
                            dry_run=ctx.inputs.dry_run)


def export_keys(ctx: ActionContext) -> None:
    """Model keys reach the CLIs through their usual variables (the engine scrubs them from
    everything it records)."""
    for attr, name in KEY_ENV.items():
        value = getattr(ctx.inputs, attr).strip()
        if value and not ctx.inputs.dry_run:
            os.environ[name] = value


def _git(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """git in the tool's checkout (the base-ref worktree): none of the harness's keys in its
    environment, and nothing a config could name run (`HARDENING`)."""
    return subprocess.run(["git", *HARDENING, "-c", "safe.directory=*", "-C", str(cwd), *args],
                          capture_output=True, text=True, check=False, env=git_env())


@contextlib.contextmanager
def base_worktree(ctx: ActionContext, measured: Measured | None = None
                  ) -> Iterator[Path | None]:
    """For `compare: base-ref|both`: the tool at the PR's base, as a detached worktree of the
    tool's own checkout (removed afterwards). None for `compare: baseline`. The base is the
    one `measured` names (the merge commit's first parent, when the tool's checkout is the
    PR's merge commit), else the payload's."""
    if ctx.inputs.compare == "baseline":
        yield None
        return
    tool = tool_dir(ctx)
    named = [sha for label, sha in (measured.commits if measured else []) if label == "base"]
    ref = (named[0] if named else None) or ctx.event.base_sha or ctx.event.base_ref
    if not ref:
        raise ConfigError([Problem(SOURCE, f"{ctx.inputs.compare} needs the PR's base, but the "
                                   f"{ctx.event.name} event names none; use compare: baseline",
                                   field="compare")])
    top = _git(tool, "rev-parse", "--show-toplevel")
    if top.returncode != 0:
        raise ConfigError([Problem(SOURCE, f"{tool} is not a git checkout, so its base ref "
                                   "cannot be checked out", field="tool-dir")])
    root = Path(top.stdout.strip())
    if _git(root, "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}").returncode != 0:
        _git(root, "fetch", "--no-tags", "--depth=1", "origin", ref)  # a shallow checkout
    if _git(root, "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}").returncode != 0:
        raise ConfigError([Problem(SOURCE, f"the base ref {ref} is not in {root} and could "
                                   "not be fetched; check out with `fetch-depth: 0`",
                                   field="compare")])
    where = Path(tempfile.mkdtemp(prefix="copeca-base-")) / "base"
    made = _git(root, "worktree", "add", "--detach", str(where), ref)
    if made.returncode != 0:
        raise CopecaError(f"git worktree add {ref} failed: {made.stderr.strip()}")
    try:
        yield where / tool.relative_to(root.resolve())
    finally:
        _git(root, "worktree", "remove", "--force", str(where))


NO_BASE_EVENTS = ("push", "release", "schedule", "workflow_dispatch")
"""Events with no pull request, hence no base to compare with (docs/action.md, "Triggers")."""


def effective_compare(ctx: ActionContext) -> tuple[ActionContext, str | None]:
    """`compare: base-ref|both` on an event that has no base (a push to the default branch
    recording the history, a release, a schedule, a manual run) compares with the baseline,
    as docs/action.md's trigger table says, and the comment says so; a PR event without a
    base stays an error in `base_worktree`."""
    if (ctx.inputs.compare == "baseline" or ctx.event.name not in NO_BASE_EVENTS
            or ctx.event.base_sha or ctx.event.base_ref):
        return ctx, None
    note = (f"compare: {ctx.inputs.compare} needs a pull request's base, and a "
            f"{ctx.event.name} event has none: the tool was compared with the baseline (the "
            "agent without the tool) instead")
    inputs = ctx.inputs.model_copy(update={"compare": "baseline"})
    return replace(ctx, inputs=inputs), note


def run_engine(ctx: ActionContext) -> Outcome:
    """Run the plan, conclude (report files, signed bundle, verified), build the Outcome."""
    export_keys(ctx)
    ctx, note = effective_compare(ctx)
    if note is not None:
        annotate("notice", f"copeca-action: {note}")
    key = (parse_private_key(ctx.inputs.signing_key.encode(), "input signing-key")
           if ctx.inputs.signing_key.strip() else None)
    if ctx.inputs.merge:
        if ctx.event.name == "workflow_run" and not _any_match(ctx):
            return fork_run_skipped(ctx)
        if ctx.event.name == "workflow_run" and ctx.event.is_fork and key is None:
            return fork_bundle_refused(ctx)
        return run_merge(ctx, key)
    # read before the tool's set-up commands and agents run (they may write its checkout)
    measured = measured_commits(ctx)
    with base_worktree(ctx, measured) as base:
        return _run(ctx, key, base, note, measured)


def reuse_path(ctx: ActionContext) -> tuple[Path | None, str | None]:
    """The `reuse` input's one bundle (a workspace-relative path or glob), or why none: the
    first run of a PR has no previous bundle, so no match is a warning, not an error."""
    pattern = ctx.inputs.reuse
    if not pattern:
        return None, None
    full = pattern if Path(pattern).is_absolute() else str(ctx.workspace / pattern)
    matches = sorted(Path(m) for m in glob.glob(full, recursive=True) if Path(m).is_file())
    if not matches:
        return None, (f"reuse: no bundle matches {pattern!r}; every planned run runs (the "
                      "first run of a pull request has none)")
    if len(matches) > 1:
        return None, (f"reuse: {len(matches)} files match {pattern!r} "
                      f"({', '.join(m.name for m in matches[:5])}); name one bundle. Every "
                      "planned run runs")
    return matches[0], None


def _run(ctx: ActionContext, key: Ed25519PrivateKey | None, base: Path | None,
         note: str | None, measured: Measured) -> Outcome:
    prep = prepare_ctx(ctx, base_tool_dir=base)
    prep.reuse, refused = reuse_path(ctx)
    # A bundle signed by the action's own key, when it has one; else any intact bundle.
    prep.reuse_pubkey = key.public_key() if key is not None else None
    ctx.output_dir.mkdir(parents=True, exist_ok=True)
    with prep.cfg.out.held():  # the runs, the report and the bundle: one writer
        return _run_held(ctx, prep, key, refused, note, measured)


def _run_held(ctx: ActionContext, prep: Prepared, key: Ed25519PrivateKey | None,
              refused: str | None, note: str | None, measured: Measured) -> Outcome:
    stats = execute(prep, resume=prep.cfg.out.results.exists(), plain=True)
    if stats.interrupted:
        raise CopecaError("the run was interrupted before the plan finished")
    refused = refused or prep.reuse_warning
    if refused:
        annotate("warning", f"copeca-action: {refused}")
    if stats.reuse is not None:
        print(f"copeca-action: {stats.reuse.message()}", flush=True)
    bundle = ctx.output_dir / f"{prep.cfg.scenario.name}.copeca"
    done = conclude_prepared(prep, key, bundle, trend=history_trend(ctx))
    info = BundleInfo(done.bundle_path, done.bundle_sha256, done.keyid)
    data = comment_data(done.report, info, comment_id=ctx.inputs.comment_id,
                        tasks=prep.cfg.corpus.tasks, run_url=ctx.event.run_url,
                        full_report=artifact_hint(ctx), measured=measured)
    extra = [text for text in (note, refused) if text]
    if extra:
        data = data.model_copy(update={"warnings": [*data.warnings, *extra]})
    md = done.files.get("report.md")
    return Outcome(comment=data,
                   outputs=output_values(done.report, info, done.files.get("report.json")),
                   report_md=md.read_text(encoding="utf-8") if md else None,
                   report=done.report,
                   history=run_history_entry(ctx, done.report, sha256_file(prep.scenario_path),
                                             done.bundle_sha256))


TREND_RUNS = 30
"""The report's trend shows at most this many earlier runs (the history page has them all)."""


def history_trend(ctx: ActionContext) -> list[TrendRun]:
    """The earlier runs of the history, for the trend in report.html: read only where the
    job talks to GitHub anyway (it records the run, or comments on a PR); none otherwise, or
    when the history cannot be read (a warning says why)."""
    ev = ctx.event
    talks = records_history(ev) or (ev.pr_number is not None and ctx.inputs.comment != "never")
    if ctx.inputs.history == "never" or not ctx.inputs.github_token or not talks:
        return []
    client = GitHubClient(ctx.inputs.github_token, ev.api_url,
                          policy=RetryPolicy(attempts=2, backoff_s=1.0))
    try:
        history, _ = read_history(client, ev.owner, ev.repo, ctx.inputs.comment_id)
    except GitHubError as exc:
        annotate("warning", f"copeca-action: no trend in the report: {exc}")
        return []
    return trend_runs(History(entries=history.entries[-TREND_RUNS:]))


def run_history_entry(ctx: ActionContext, report: Report, scenario_digest: str,
                      bundle_sha256: str | None) -> HistoryEntry:
    """This run's line in the history (written only for events that record one)."""
    ev = ctx.event
    return history_entry(report, commit=ev.head_sha or "", date=dt.datetime.now(dt.UTC),
                         ref=ev.ref or "", event=ev.name, tag=ev.tag,
                         scenario_digest=scenario_digest, bundle_sha256=bundle_sha256,
                         run_url=ev.run_url)


def checked_out(tool: Path) -> tuple[str | None, list[str]]:
    """The commit checked out in `tool` and its parents, read from the commit object itself
    (a shallow clone, `fetch-depth: 1`, has the object but not its parents); (None, []) when
    `tool` is not a git checkout. Read through a view whose config is the harness's own
    (workspace/_content.py): the checkout's `.git` is the tool's, which its set-up commands
    could have written, and this git runs outside every sandbox."""
    found = find_checkout(tool.resolve())
    if found is None:
        return None, []
    _top, git_dir, common_dir = found
    with checkout_view(git_dir, common_dir) as view:
        env = {"GIT_DIR": str(view)}
        head = git(["-c", "safe.directory=*", "rev-parse", "--verify", "--quiet",
                    "HEAD^{commit}"], cwd=view, env=env, check=False)
        sha = head.stdout.strip() if head.returncode == 0 else ""
        if not sha:
            return None, []
        raw = git(["-c", "safe.directory=*", "cat-file", "commit", sha], cwd=view, env=env,
                  check=False).stdout
    header = raw.split("\n\n", 1)[0]
    return sha, [line.split()[1] for line in header.splitlines()
                 if line.startswith("parent ") and len(line.split()) == 2]


def measured_commits(ctx: ActionContext) -> Measured:
    """The commits the comment names: the one tool-dir really has checked out (what was
    measured) and, for a base-ref comparison, the PR's base. A `pull_request` workflow checks
    out GitHub's merge commit (refs/pull/N/merge), not the PR head the payload names
    (`pull_request.head.sha`): that commit is named as the merge it is, with its parents, the
    PR head and the base commit it was merged into."""
    ev = ctx.event
    sha, parents = checked_out(tool_dir(ctx))
    pr = ev.pr_number is not None
    out: list[tuple[str, str]] = []
    merged: tuple[str, str] | None = None
    other: str | None = None
    if sha is None:  # not a git checkout: only a non-PR event's own commit is known
        if ev.head_sha and not pr:
            out.append(("commit", ev.head_sha))
    elif pr and sha == ev.head_sha:
        out.append(("PR head", sha))
    elif pr and ev.head_sha and len(parents) == 2 and parents[1] == ev.head_sha:
        out.append(("merge commit", sha))
        merged = (ev.head_sha, parents[0])
    else:
        out.append(("commit", sha))
        other = ev.head_sha if pr else None
    if ctx.inputs.compare != "baseline":
        # the head arm is the merge commit: its base arm is what it was merged into (the
        # base branch may have moved since the payload's base.sha), so the delta is the PR's
        base = merged[1] if merged is not None else ev.base_sha
        if base:
            out.append(("base", base))
    return Measured(out, merged, other)


def artifact_hint(ctx: ActionContext) -> str:
    return f"the {artifact_name(ctx.inputs)} artifact"


def _any_match(ctx: ActionContext) -> bool:
    for pattern in ctx.inputs.merge:
        full = pattern if Path(pattern).is_absolute() else str(ctx.workspace / pattern)
        if any(Path(m).is_file() for m in glob.glob(full, recursive=True)):
            return True
    return False


def fork_run_skipped(ctx: ActionContext) -> Outcome:
    """The privileged half of the fork pattern when the pull request's run made no bundle:
    a fork's run gets no key and runs nothing. Not an error: the comment says how a
    maintainer approves a run."""
    reason = ("The pull request's run produced no bundle: "
              + ("it comes from a fork " + f"({ctx.event.head_repository}), " if ctx.event.is_fork
                 else "")
              + "and without the repository's model key nothing was run and nothing was "
              "charged. " + how_to_approve(ctx.event))
    print(f"copeca-action: skipped: {reason}", flush=True)
    return skipped_outcome(ctx, reason)


def fork_bundle_refused(ctx: ActionContext) -> Outcome:
    """The privileged half of the fork pattern, a fork's bundle and no `signing-key` to check
    it with. A fork's run gets no model key and runs nothing, but the fork can change that
    run's workflow to upload a bundle it wrote itself: its numbers are never shown under the
    action's name, the comment says how a maintainer approves a real run."""
    reason = (f"The pull request comes from a fork ({ctx.event.head_repository}), whose run "
              "gets no model key, and its bundle is unsigned: anyone who opens a pull request "
              "can write one, so its numbers are not shown. " + how_to_approve(ctx.event))
    print(f"copeca-action: skipped: {reason}", flush=True)
    return skipped_outcome(ctx, reason)


def merge_paths(ctx: ActionContext) -> list[Path]:
    """The `merge` input's paths and globs (workspace-relative), each required to match."""
    found: list[Path] = []
    for pattern in ctx.inputs.merge:
        full = pattern if Path(pattern).is_absolute() else str(ctx.workspace / pattern)
        matches = sorted(Path(m) for m in glob.glob(full, recursive=True) if Path(m).is_file())
        if not matches:
            raise ConfigError([Problem(SOURCE, f"no shard bundle matches {pattern!r} (in "
                                       f"{ctx.workspace})", field="merge")])
        found.extend(m for m in matches if m not in found)
    return found


def _threshold_inputs(ctx: ActionContext) -> dict[str, float]:
    """The inputs' thresholds, laid over those the shards ran with."""
    out: dict[str, float] = {}
    if ctx.inputs.alert_threshold is not None:
        out["alert"] = ctx.inputs.alert_threshold
    if ctx.inputs.fail_threshold is not None:
        out["fail"] = ctx.inputs.fail_threshold
    return out


def _tasks(ctx: ActionContext) -> dict[str, Task]:
    """Task metadata (category, control) for the comment: from the scenario input's corpus
    when one is given, else the bundled corpus."""
    found = (find_corpus_root(scenario_path(ctx).resolve())
             if ctx.inputs.scenario and ctx.inputs.scenario != "demo" else None)
    return dict(load_corpus(found or corpus_dir()).tasks)


def run_merge(ctx: ActionContext, key: Ed25519PrivateKey | None) -> Outcome:
    """`merge:` verify the shard bundles, compute the report once over all their records,
    write one signed bundle (verified again) and the report files; runs nothing. The bundle
    and report are the ones `copeca-action merge` writes (`conclude.merge_shards`)."""
    paths = merge_paths(ctx)
    ctx.output_dir.mkdir(parents=True, exist_ok=True)
    which = shard_scenario(paths[0], _threshold_inputs(ctx))
    out = ctx.output_dir / f"{which.scenario.name if which else 'merged'}.copeca"
    if out.resolve() in {p.resolve() for p in paths}:
        raise ConfigError([Problem(SOURCE, f"the merged bundle would overwrite the shard {out}; "
                                   "download the shards to another folder", field="merge")])
    # shards must carry this job's own signature; without a key, the merge says it is
    # unverified (fork shards cannot sign)
    merged = merge_shards(paths, out, key=key, runners=load_corpus(corpus_dir()).runners,
                          scenario=which, allow_unsigned=key is None)
    if merged.report is None:
        raise CopecaError(f"{paths[0]}: no readable scenario.yaml, so the merged bundle has "
                          "no report to comment with")
    for name, blob in merged.files.items():
        (ctx.output_dir / name).write_bytes(blob)
    info = BundleInfo(out, sha256_file(out), keyid_of(key.public_key()) if key else None)
    print(f"copeca-action: merged {len(paths)} shard bundle(s) into {out}", flush=True)
    data = comment_data(merged.report, info, comment_id=ctx.inputs.comment_id,
                        tasks=_tasks(ctx), run_url=ctx.event.run_url,
                        full_report=artifact_hint(ctx), measured=measured_commits(ctx))
    md = merged.files.get("report.md")
    scenario = merged.files.get("scenario.yaml")
    return Outcome(comment=data, outputs=output_values(merged.report, info,
                                                       ctx.output_dir / "report.json"),
                   report_md=md.decode("utf-8") if md else None, report=merged.report,
                   history=run_history_entry(
                       ctx, merged.report,
                       hashlib.sha256(scenario).hexdigest() if scenario else "", info.sha256))
