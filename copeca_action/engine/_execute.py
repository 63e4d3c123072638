"""One run in three stages, so the scheduler can overlap them across runs:
`provision` (worktree, planted bugs, arm set-up, CLI config), `start_agent` (the CLI
process), `finish` (parse, cost, grade, validity, flags, record, cleanup)."""

from __future__ import annotations

import datetime as dt
import logging
import shlex
import shutil
import subprocess
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from copeca_action._util.scrub import scrub_log_record, scrub_tree, shared_scrubber
from copeca_action._util.text import one_line
from copeca_action.agent import AgentInvocation, AgentResult, prepare_run, run_agent
from copeca_action.agent._hooks import HOOK_EXITS, hook_exits
from copeca_action.engine._context import EngineConfig, Resolved, require_task
from copeca_action.engine._flags import flags_for
from copeca_action.engine._keys import KEY_IN_AGENT_ENV, key_in_agent_env
from copeca_action.engine._outdir import read_record, record_key, write_atomic
from copeca_action.engine._validity import tool_adopted, tool_failed
from copeca_action.errors import CopecaError, InfraError
from copeca_action.evaluate import (
    BaseRepo,
    Sandbox,
    TestFileRules,
    evaluate_task_patch_at,
    write_eval,
)
from copeca_action.grade import GradeResult, grade_answer, grade_test_clean
from copeca_action.plan import PlannedRun, RunPlan
from copeca_action.records import (
    AGENT_FILES_VISIBLE,
    Design,
    Outcome,
    RetrievalSummary,
    RunRecord,
    design_of,
    latest_by_run_id,
)
from copeca_action.records._kinds import HARNESS_DIED, KILLED
from copeca_action.retrieval import record_retrieval
from copeca_action.scenario import BuildCacheSpec, Mode, Scenario, Task, TestGrading
from copeca_action.transcript import RunCost, Transcript, cost_of, parse_transcript
from copeca_action.workspace import (
    Worktree,
    WorktreePool,
    add_worktree,
    capture_patch,
    clean_tree,
    copy_build_cache,
    ensure_build_cache,
    instruction_files,
    remove_worktree,
    tree_id,
)

_LOG = logging.getLogger(__name__)
_LOG.addFilter(scrub_log_record)  # an error it logs may quote a secret
SETUP_TIMEOUT_S = 600
GRADER_ENV = ("PATH", "LANG", "LC_ALL", "LC_CTYPE", "TZ")
AUTH_FAILURES = ("Not logged in", "Invalid API key", "invalid x-api-key")
"""How the CLIs say a key is missing or wrong: a harness failure, never a wrong answer."""


@dataclass
class Prepared:
    """A provisioned run waiting for an agent slot (or a provisioning failure)."""

    run: PlannedRun
    attempt: int
    task: Task | None = None
    worktree: Worktree | None = None
    invocation: AgentInvocation | None = None
    flags: list[str] = field(default_factory=list)
    error: str | None = None
    started_at: dt.datetime = field(default_factory=lambda: dt.datetime.now(dt.UTC))
    timings: dict[str, float] = field(default_factory=dict)
    """Seconds per harness stage (provision, arm, agent, finish), for bench/overhead."""
    transcript: Transcript | None = None
    cost: RunCost | None = None
    """Parsed right after the agent ends, so the budget sees the cost before grading."""
    pool: WorktreePool | None = None
    holds_start: bool = False
    """The scheduler's start this run's agent took, until its record is written."""


@dataclass
class AgentOutcome:
    result: AgentResult | None = None
    skipped: Outcome | None = None
    """budget_stop (never started) or infra_error (could not start)."""
    error: str | None = None


def provision(cfg: EngineConfig, res: Resolved, run: PlannedRun, attempt: int) -> Prepared:
    """Never raises for a run's own trouble: the failure becomes `error` (an infra error)."""
    prep = Prepared(run=run, attempt=attempt)
    t0 = time.perf_counter()
    try:
        task = prep.task = require_task(cfg, run.task_id)
        # an earlier attempt's record and output are moved aside, never deleted
        run_dir = cfg.out.new_attempt(run.run_id)
        snap = res.snapshot_for(task)
        mutations = task.grading.test.mutations if task.grading.test else []
        if res.pool is not None:
            prep.pool = res.pool
            prep.worktree = res.pool.acquire(Path(snap.git_dir), snap.commit, mutations)
        else:
            prep.worktree = add_worktree(Path(snap.git_dir), snap.commit,
                                         cfg.out.worktrees / run.run_id, mutations)
        workdir = Path(prep.worktree.path)
        found = instruction_files(workdir)
        if found:
            prep.flags.append("instruction_files")
        t1 = time.perf_counter()
        mode = res.modes[run.arm]
        tool_dir = cfg.base_tool_dir if run.arm.endswith("@base") else cfg.tool_dir
        _run_mode_setup(cfg, mode.setup, workdir, run_dir, tool_dir)
        runner = res.runners[run.runner]
        keyless = {k: v for k, v in cfg.host_env.items() if k not in runner.credential_env}
        base_url, forwarded = cfg.base_url, False
        forwarder = res.forwarder
        if cfg.endpoint_kind != "real":
            # the scripted model takes any key: the agent (and the tool beside it) gets the
            # placeholder, never a real key it does not need
            host_env: Mapping[str, str] = keyless
        elif forwarder is not None and run.runner in forwarder.routes:
            # the key stays in the harness: the agent talks to the forwarder with its
            # placeholder, the forwarder to the endpoint with the key
            host_env = {**keyless, **dict.fromkeys(runner.credential_env,
                                                   forwarder.placeholder)}
            base_url, forwarded = forwarder.agent_url(run.runner), True
            forwarder.take_failure(run.run_id)  # an earlier attempt's, if any
        else:
            host_env = cfg.host_env
        inv = prepare_run(runner, model=run.model, prompt=task.prompt,
                          workdir=workdir, run_dir=run_dir, mode=mode,
                          max_turns=cfg.scenario.max_turns,
                          run_budget_usd=cfg.scenario.run_budget_usd, base_url=base_url,
                          tool_dir=tool_dir, host_env=host_env, run_key=run.run_id,
                          forwarded=forwarded)
        if cfg.endpoint_kind == "real" and key_in_agent_env(inv.env, runner, cfg.host_env):
            prep.flags.append(KEY_IN_AGENT_ENV)  # COPECA_KEY_PROXY=off, or not forwardable
        prep.invocation = inv
        prep.timings["provision_s"] = t1 - t0
        prep.timings["arm_s"] = time.perf_counter() - t1
    except (CopecaError, OSError) as exc:
        prep.error = f"provisioning failed: {exc}"
        prep.timings["provision_s"] = time.perf_counter() - t0
    return prep


def _run_mode_setup(cfg: EngineConfig, commands: list[list[str]], workdir: Path,
                    run_dir: Path, tool_dir: Path | None) -> None:
    """The mode's `setup` commands, in the worktree; any failure is an infra error."""
    from copeca_action.agent._process import agent_isolation

    env = {k: v for k, v in cfg.host_env.items() if k in GRADER_ENV}
    env.update(HOME=str(run_dir / "home"), TMPDIR=str(run_dir))
    # the tool's code, cut off as an agent is
    prefix = agent_isolation(writable=[workdir, run_dir, *([tool_dir] if tool_dir else [])])[0]
    for argv in commands:
        try:
            proc = subprocess.run([*prefix, *argv], cwd=workdir, env=env, capture_output=True,
                                  text=True, timeout=SETUP_TIMEOUT_S, check=False,
                                  stdin=subprocess.DEVNULL)
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise InfraError(f"mode set-up {shlex.join(argv)} could not run: {exc}") from exc
        if proc.returncode != 0:
            raise InfraError(f"mode set-up {shlex.join(argv)} failed (exit {proc.returncode}): "
                             f"{(proc.stderr or proc.stdout).strip()[-400:]}")


def start_agent(cfg: EngineConfig, res: Resolved, prep: Prepared,
                cancel: threading.Event | None) -> AgentOutcome:
    assert prep.invocation is not None
    try:
        result = run_agent(prep.invocation, cfg.scenario.timeout_s, cancel)
    except InfraError as exc:
        return AgentOutcome(skipped="infra_error", error=str(exc))
    prep.timings["agent_s"] = result.duration_s
    # Parsed whatever happened (an interrupted run spent money too): from here on the
    # run's tokens and cost travel with it, into whichever record it ends as.
    t0 = time.perf_counter()
    runner = res.runners[prep.run.runner]
    prep.transcript = parse_transcript(runner.parser, result.stdout_path,
                                       prep.invocation.config_dir)
    if (result.timed_out or result.cancelled) and not prep.transcript.ended:
        # Stopped mid-run: a model request in flight was billed, but no CLI is told its usage
        # (OpenAI, Gemini and Chat Completions state it only in their last event; Anthropic's
        # stream states input first, output as it goes). The run's cost is a lower bound.
        # (Stopped after the CLI's closing event: nothing was in flight, the cost is exact.)
        prep.flags.append(COST_LOWER_BOUND)
    exits = hook_exits(prep.invocation.config_dir / HOOK_EXITS)
    if exits:  # hooks that failed without a word in the CLI's output (`watched_hooks`)
        prep.transcript = prep.transcript.model_copy(update={
            "hook_failures": [*prep.transcript.hook_failures, *exits]})
    prep.cost = cost_of(prep.transcript, runner, prep.run.model)
    prep.timings["parse_s"] = time.perf_counter() - t0
    return AgentOutcome(result=result)


def finish(cfg: EngineConfig, res: Resolved, prep: Prepared, agent: AgentOutcome) -> RunRecord:
    """Turn what happened into a RunRecord, write the run's files, remove the worktree."""
    t0 = time.perf_counter()
    try:
        record = _record(cfg, res, prep, agent)
    except (CopecaError, OSError) as exc:  # the harness broke while finishing: infra
        record = _base_record(cfg, res, prep, "infra_error", f"finishing failed: {exc}")
    except Exception as exc:  # a grader or evaluator bug: still the harness's, still infra
        _LOG.exception("finishing %s failed", prep.run.run_id)
        record = _base_record(cfg, res, prep, "infra_error",
                              f"finishing failed ({type(exc).__name__}): {exc}")
    try:
        cleanup(prep)
    except Exception as exc:  # the record (and its spend) is kept; the worktree is pruned later
        _LOG.warning("cleaning up %s failed: %s", prep.run.run_id, exc)
    prep.timings["finish_s"] = time.perf_counter() - t0
    run_dir = cfg.out.run_dir(prep.run.run_id)
    if run_dir.is_dir():
        # whole or absent (a harness killed mid-write): resume restores the record from it
        write_atomic(run_dir / "record.json", record.model_dump_json(indent=2) + "\n")
        # the agent's stdout, session logs, grade output: secrets out, by value and encoding
        scrub_tree(run_dir, shared_scrubber())
    return record


@dataclass
class Recovered:
    """What a harness that died (SIGKILL, a crash, a lost machine) left unrecorded, found in
    the run folders on resume."""

    restored: list[RunRecord] = field(default_factory=list)
    """Records whose run folder holds its record.json but results.jsonl lacks the line (the
    harness died between the two writes, or the line was torn): the run is finished, never
    paid for again."""
    killed: list[RunRecord] = field(default_factory=list)
    """Attempts whose agent was running, or finished but not yet graded, when the harness
    died (its output is there, no record): an `infra_error` with the spend its output shows,
    flagged `harness_died`, and `cost_lower_bound` unless the output is complete."""

    @property
    def records(self) -> list[RunRecord]:
        return [*self.restored, *self.killed]


def recover_lost(cfg: EngineConfig, res: Resolved, plan: RunPlan,
                 recorded: list[RunRecord]) -> Recovered:
    """The records a dead harness did not append (or lines removed by hand), from the plan's
    run folders and the earlier attempts kept beside them (OUT/attempts/): a record.json
    results.jsonl lacks, or the output of an agent it was running (its tokens and cost).
    Each killed attempt's record.json is written where its output is, so a second resume
    finds it recorded (restored if the line was not appended), never counted twice."""
    have = {record_key(r) for r in recorded}
    latest = latest_by_run_id(recorded)
    found = Recovered()
    for run in plan.runs:
        prev = latest.get(run.run_id)
        attempt = prev.attempt if prev else 0
        for folder in cfg.out.attempt_folders(run.run_id):
            record = read_record(folder / "record.json")  # None: absent, or torn by the crash
            stdout = folder / "stdout.jsonl"
            if record is not None:
                if record.run_id == run.run_id and record_key(record) not in have:
                    found.restored.append(record)
                    have.add(record_key(record))
                continue
            if not stdout.is_file():  # the agent never started: nothing was spent
                continue
            attempt += 1
            killed = _killed_record(cfg, res, run, attempt, stdout)
            write_atomic(folder / "record.json", killed.model_dump_json(indent=2) + "\n")
            scrub_tree(folder, shared_scrubber())  # the dead harness never scrubbed it
            have.add(record_key(killed))
            found.killed.append(killed)
    return found


KILLED_UNGRADED = (
    "the harness died after the agent finished, before grading it (SIGKILL, a crash or a "
    "lost machine); its output is complete, so the spend counted is exact; not graded from a "
    "worktree the agent's processes outlived the harness in (removed on resume): --resume "
    "repeats the run")
"""The error of such an attempt whose CLI had printed its closing event (`Transcript.ended`):
its cost is exact; it is run again, never graded late (see docs/running.md, Resume)."""


def _killed_record(cfg: EngineConfig, res: Resolved, run: PlannedRun, attempt: int,
                   stdout: Path) -> RunRecord:
    prep = Prepared(run=run, attempt=attempt, flags=[HARNESS_DIED],
                    started_at=dt.datetime.fromtimestamp(stdout.stat().st_mtime, dt.UTC))
    runner = res.runners[run.runner]
    unreadable = None
    try:
        prep.transcript = parse_transcript(runner.parser, stdout, stdout.parent / "config")
        prep.cost = cost_of(prep.transcript, runner, run.model)
    except (CopecaError, OSError, ValueError) as exc:
        unreadable = f"the output of an agent the harness lost could not be read: {exc}"
    ended = prep.transcript is not None and prep.transcript.ended
    if not ended:  # a request may have been in flight: billed, reported to no one
        prep.flags.append(COST_LOWER_BOUND)
    record = _base_record(cfg, res, prep, "infra_error", KILLED_UNGRADED if ended else KILLED)
    if unreadable is not None:  # it spent something nobody knows: unknown, never $0
        record = record.model_copy(update={"cost_usd": None,
                                           "cost_unknown_reason": unreadable})
    return record


def cleanup(prep: Prepared) -> None:
    """Give the worktree back to the pool (reset before its next use), or remove it."""
    if prep.worktree is not None:
        if prep.pool is not None:
            prep.pool.release(prep.worktree)
        else:
            remove_worktree(Path(prep.worktree.git_dir), Path(prep.worktree.path))
        prep.worktree = None


def _base_record(cfg: EngineConfig, res: Resolved, prep: Prepared, outcome: Outcome,
                 error: str | None) -> RunRecord:
    """The record of any run; once the agent has run, its tokens and cost are in it
    whatever the outcome (a grader crash, an interrupt, a failed evaluation)."""
    run = prep.run
    wt = prep.worktree
    record = RunRecord(
        run_id=run.run_id, scenario=cfg.scenario.name, task_id=run.task_id,
        task_hash=run.task_hash, arm=run.arm, model=run.model, runner=run.runner,
        cli_version=res.cli_versions.get(run.runner),
        pricing_updated=res.runners[run.runner].pricing_updated, repetition=run.repetition,
        attempt=prep.attempt, snapshot_commit=wt.snapshot_commit if wt else None,
        control=run.control, category=run.category, language=run.language, outcome=outcome,
        flags=list(prep.flags), error=error, started_at=prep.started_at,
        run_dir=f"runs/{run.run_id}", fingerprint=res.fingerprints.get(run.run_id),
        endpoint=cfg.endpoint_kind, design=record_design(cfg.scenario))
    return record.model_copy(update=spend_of(prep.transcript, prep.cost, record.flags))


def record_design(scenario: Scenario) -> Design:
    """The design a run's record names: the scenario's thresholds as run (overrides
    included) and its adaptive schedule (`records.Design`)."""
    key = design_of(scenario.thresholds, scenario.adaptive)
    return Design(thresholds=key.thresholds, adaptive=key.adaptive)


def spend_of(transcript: Transcript | None, cost: RunCost | None,
             flags: list[str]) -> dict[str, object]:
    """The record fields that say what a run spent (empty: the agent never ran)."""
    if transcript is None or cost is None:
        return {}
    extra = [f for f, on in (("cost_unknown", cost.used_usd is None),
                             ("cost_divergence", cost.diverged),
                             ("model_remapped", cost.remapped)) if on and f not in flags]
    return {"tokens": transcript.tokens, "vendor_cost_usd": cost.vendor_usd,
            "computed_cost_usd": cost.computed_usd, "cost_usd": cost.used_usd,
            "cost_source": cost.source, "cost_unknown_reason": cost.unknown_reason,
            "served_model": cost.served_model,
            "subagent_sessions": transcript.subagent_sessions,
            "turns": transcript.num_turns or len(transcript.turns),
            "tool_calls": len(transcript.tool_calls), "flags": [*flags, *extra]}


def _record(cfg: EngineConfig, res: Resolved, prep: Prepared, agent: AgentOutcome) -> RunRecord:
    if prep.error is not None:
        return _base_record(cfg, res, prep, "infra_error", prep.error)
    if agent.skipped is not None:
        return _base_record(cfg, res, prep, agent.skipped, agent.error)
    result = agent.result
    assert result is not None and prep.invocation is not None and prep.task is not None
    assert prep.worktree is not None
    if result.cancelled:
        return _base_record(cfg, res, prep, "infra_error", INTERRUPTED)
    transcript, cost = prep.transcript, prep.cost
    assert transcript is not None and cost is not None  # parsed by start_agent
    outcome, error = _outcome(result, transcript, prep.task)
    started = _tool_start_failure(res.modes[prep.run.arm], result, transcript)
    if started is not None:  # the tool under test never ran: not the agent's answer
        outcome, error = "infra_error", started
    unreachable = res.forwarder.take_failure(prep.run.run_id) if res.forwarder else None
    if unreachable is not None and outcome != "ok":  # the endpoint, not the agent
        outcome, error = "infra_error", f"{ENDPOINT_ERROR}: {unreachable}"
    workdir = Path(prep.worktree.path)
    run_dir = cfg.out.run_dir(prep.run.run_id)
    patch_text = capture_patch(workdir, prep.worktree.commit, Path(prep.worktree.git_dir))
    (run_dir / "patch.diff").write_text(patch_text)
    grade = _grade(cfg, res, prep.task, transcript, workdir, run_dir, patch_text,
                   prep.worktree)
    (run_dir / "grade.json").write_text(grade.model_dump_json(indent=2) + "\n")
    retrieval = _retrieval(cfg, prep, transcript, patch_text)
    correct = grade.correct and outcome == "ok"
    prep.flags += flags_for(
        transcript, correct=correct, cost_usd=cost.used_usd,
        run_budget_usd=cfg.scenario.run_budget_usd, timed_out=result.timed_out,
        rules=cfg.rules)
    mode = res.modes[prep.run.arm]
    adopted = tool_adopted(mode.validity, transcript, workdir)
    if tool_failed(mode, transcript, adopted):
        prep.flags.append("tool_failed")  # it could not serve the agent: not its choice
    if grade.detail.get("tests_modified"):
        prep.flags.append("tests_modified")  # the run changed test or protected files (dropped)
    if "pidns" not in result.isolation:
        prep.flags.append("agent_not_isolated")  # it could read the harness's /proc
    if "private-hidden" not in result.isolation:
        prep.flags.append(AGENT_FILES_VISIBLE)  # other runs, the harness's home and key file
    base = _base_record(cfg, res, prep, outcome, error)
    return base.model_copy(update={
        "cli_version": transcript.cli_version or base.cli_version,
        "correct": correct, "grading": grade.as_record(), "duration_s": result.duration_s,
        "tool_adopted": adopted,
        "viewed_spans": list(getattr(transcript, "viewed_spans", []) or []),
        "retrieval": retrieval})


def _retrieval(cfg: EngineConfig, prep: Prepared, transcript: Transcript,
               patch_text: str) -> RetrievalSummary | None:
    """Retrieval metrics against a clean copy of the tree the agent started from (its own
    edits must not move the gold lines); the worktree path is the alias it saw."""
    task, wt = prep.task, prep.worktree
    assert task is not None and wt is not None
    if not task.gold_context and not task.gold_edit_lines:
        return None
    try:
        clean = clean_tree(Path(wt.git_dir), wt.commit, cfg.out.worktrees / "clean")
        return record_retrieval(transcript, task, clean, patch_text, prep.run.run_id,
                                aliases=(wt.path,))
    except (CopecaError, OSError) as exc:  # metrics are a side result: never fail the run
        prep.flags.append("retrieval_error")
        _LOG.warning("retrieval metrics of %s failed: %s", prep.run.run_id, exc)
        return None


def _tool_start_failure(mode: Mode, result: AgentResult,
                        transcript: Transcript) -> str | None:
    """Why the arm's tool did not start in this run, if it did not: an MCP server the CLI
    reports as failed, a wrapper whose command was not found (exit 127) or not
    executable (126), or a wrapper that failed before the agent printed a line (the
    preflight saw it run a command, so it failed in this run: not the agent's answer)."""
    if transcript.tool_start_failures:
        return "the tool under test did not start: " + "; ".join(transcript.tool_start_failures)
    wrapper = mode.wrapper
    if not wrapper or not result.exit_code or result.timed_out or transcript.turns:
        return None
    if result.exit_code in (126, 127):
        what = "not found" if result.exit_code == 127 else "not executable"
        return (f"the tool under test did not start: wrapper {wrapper[0]!r} exited "
                f"{result.exit_code} ({what}) before any model call")
    if _size(result.stdout_path) == 0:
        said = one_line(_tail(result.stderr_path, 400).strip())
        return (f"the tool under test failed: wrapper {wrapper[0]!r} exited "
                f"{result.exit_code} before the agent printed anything"
                + (f"; its stderr: {said}" if said else ""))
    return None


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


COST_LOWER_BOUND = "cost_lower_bound"
"""Flag of a run the harness stopped (timeout, interrupt) or died during, before the CLI's
closing event: its counted cost may be low."""
INTERRUPTED = "interrupted (SIGINT/SIGTERM); the run is repeated by --resume"
"""The error of a run whose agent a signal stopped."""
ENDPOINT_ERROR = "the model endpoint failed"
"""How an `infra_error` record caused by the endpoint starts (the scheduler counts them)."""
_ENDPOINT_STATUSES = (401, 403, 407, 408, 429)
_CONNECTION = ("econnrefused", "connection refused", "connection error", "connection failed",
               "error sending request", "enotfound", "getaddrinfo", "waiting for network",
               "unable to connect", "fetch failed", "etimedout", "econnreset",
               "name or service not known", "no route to host")


def endpoint_failure(result: AgentResult, transcript: Transcript) -> str | None:
    """Why the run failed because of the model endpoint, not the agent (a refused key, a
    5xx after the CLI's retries, an unreachable base URL); None when it did not."""
    status = transcript.api_error_status
    if status is not None and (status in _ENDPOINT_STATUSES or status >= 500):
        return f"HTTP {status}" + (f": {transcript.error}" if transcript.error else "")
    text = (transcript.error or "").lower()
    if any(marker in text for marker in _CONNECTION):
        return transcript.error
    if result.timed_out or transcript.is_error:  # Codex retries an unreachable host forever
        tail = _tail(result.stdout_path).lower()
        hits = [m for m in _CONNECTION if m in tail]
        if hits and transcript.tokens.total == 0:
            return f"unreachable ({hits[0]}; the CLI never got an answer)"
    return None


def _tail(path: Path, size: int = 65536) -> str:
    try:
        with path.open("rb") as handle:
            handle.seek(max(0, handle.seek(0, 2) - size))
            return handle.read().decode("utf-8", "replace")
    except OSError:
        return ""


def _outcome(result: AgentResult, transcript: Transcript, task: Task) -> tuple[Outcome, str | None]:
    if (why := endpoint_failure(result, transcript)) is not None:
        return "infra_error", f"{ENDPOINT_ERROR}: {why}"
    if result.timed_out:
        return "timeout", "the agent ran past timeout_s; its process group was killed"
    if result.exit_code != 0 and (transcript.api_error_status in (401, 403) or any(
            m in (transcript.error or "") for m in AUTH_FAILURES)):
        return "infra_error", ("the model API refused the key (not the agent's answer): "
                               + (transcript.error or f"HTTP {transcript.api_error_status}"))
    if result.exit_code != 0 or transcript.is_error:
        why = transcript.error or (f"API error {transcript.api_error_status}"
                                   if transcript.api_error_status else None)
        if transcript.max_turns_reached:
            why = "max turns reached"
        return "agent_error", f"exit {result.exit_code}" + (f": {why}" if why else "")
    if transcript.answer is None and task.type == "comprehension":
        detail = "; ".join(transcript.problems[:3])
        return "agent_error", "the CLI's output holds no final answer" + (
            f" ({detail})" if detail else "")
    return "ok", None


def _grade(cfg: EngineConfig, res: Resolved, task: Task, transcript: Transcript,
           workdir: Path, run_dir: Path, patch_text: str, wt: Worktree) -> GradeResult:
    git_dir, commit = Path(wt.git_dir), wt.commit
    grading = task.grading
    if grading.answer is not None:
        return grade_answer(transcript.answer, grading.answer)
    if grading.test is not None:
        env = {k: v for k, v in cfg.host_env.items() if k in GRADER_ENV}
        home = run_dir / "grade-home"
        home.mkdir(exist_ok=True)
        env.update(HOME=str(home), TMPDIR=str(home), PYTHONDONTWRITEBYTECODE="1")
        setup_dir = res.setup_dirs.get(task.repo)
        if setup_dir is not None and (setup_dir / "node_modules").is_dir():
            # as `validate --deep` does: node commands find the set-up's dependencies here
            env["NODE_PATH"] = str(setup_dir / "node_modules")
        values = {"python": cfg.python, "workdir": str(workdir),
                  "setup_dir": str(setup_dir) if setup_dir else ""}
        spec = cfg.store.spec(task.repo).build_cache
        sandbox = res.eval_sandbox("local")
        clean = _CleanGrading(BaseRepo(git_dir, commit), patch_text, TestFileRules.from_patterns(
            cfg.store.spec(task.repo).test_patterns, grading.test.protected),
            cfg.out.worktrees / "grade")
        if spec is None:
            return clean.grade(grading.test, env, values, sandbox, [home])
        return _grade_with_cache(cfg, task, clean, home, env, values, spec, wt, sandbox)
    return _grade_patch(cfg, res, task, run_dir, patch_text, git_dir, commit)


@dataclass(frozen=True)
class _CleanGrading:
    """What grading on a clean tree needs besides the command: the start commit, the run's
    diff, the sanitising rules and where the clean clone goes."""

    base: BaseRepo
    patch_text: str
    rules: TestFileRules
    scratch: Path

    def grade(self, spec: TestGrading, env: dict[str, str], values: dict[str, str],
              sandbox: Sandbox, writable: list[Path]) -> GradeResult:
        return grade_test_clean(self.base, self.patch_text, spec, env, values,
                                rules=self.rules, scratch=self.scratch, sandbox=sandbox,
                                writable=writable)


def _grade_with_cache(cfg: EngineConfig, task: Task, clean: _CleanGrading, home: Path,
                      env: dict[str, str], values: dict[str, str], spec: BuildCacheSpec,
                      wt: Worktree, sandbox: Sandbox) -> GradeResult:
    """The test command with a private copy of the snapshot's warm build cache (warmed from
    the clean snapshot on first use), removed afterwards: the agent's build scripts can write
    only to their own copy. Without a toolchain or after a failed warm-up: a cold build."""
    assert task.grading.test is not None
    t0 = time.perf_counter()
    warm_env = {k: v for k, v in env.items() if k in GRADER_ENV}
    git_dir = Path(wt.git_dir)
    warm = ensure_build_cache(cfg.store.root / "build-cache", task.repo,
                              tree_id(git_dir, wt.snapshot_commit), spec,
                              lambda dest: clean_tree(git_dir, wt.snapshot_commit, dest),
                              warm_env)
    t1 = time.perf_counter()
    copy = home / "build-cache"
    if warm is not None:
        copy_build_cache(warm, copy)
    else:
        copy.mkdir()
    t2 = time.perf_counter()
    try:
        grade = clean.grade(task.grading.test, {**env, spec.env: str(copy)}, values,
                            sandbox, [home])
    finally:
        shutil.rmtree(copy, ignore_errors=True)
    detail = {**grade.detail, "build_cache": {
        "env": spec.env, "warm": warm.name if warm is not None else None,
        "wait_s": round(t1 - t0, 3), "copy_s": round(t2 - t1, 3)}}
    return grade.model_copy(update={"detail": detail})


def _grade_patch(cfg: EngineConfig, res: Resolved, task: Task, run_dir: Path, patch_text: str,
                 git_dir: Path, commit: str) -> GradeResult:
    """The run's sanitised patch on a clean tree of the start commit, plus the task's hidden
    tests, in the sandbox. A harness failure is the harness's, not the agent's: InfraError
    (the run is retried), with eval.json kept for a look."""
    task_file = cfg.corpus.task_files[task.id]
    spec = cfg.store.spec(task.repo)
    assert task.grading.patch is not None
    result = evaluate_task_patch_at(BaseRepo(git_dir, commit), task, task_file, patch_text,
                                    res.eval_sandbox(cfg.eval_backend),
                                    TestFileRules.from_patterns(spec.test_patterns,
                                                                task.grading.patch.protected))
    write_eval(run_dir, result)
    if result.error is not None:
        raise InfraError(f"patch evaluation failed (harness, not agent): {result.error}")
    feature = result.feature1
    return GradeResult(kind="patch", correct=result.both_passed, detail={
        "exit_code": feature.exit_code if feature else None,
        "tests_passed": feature.tests_passed if feature else 0,
        "tests_failed": feature.tests_failed if feature else 0,
        "tests_total": feature.tests_total if feature else 0,
        "timed_out": feature.timed_out if feature else False,
        "applied": {k: v.applied for k, v in result.patches.items()},
        "tests_modified": any(v.dropped for v in result.patches.values()),
        "patch_too_large": any(v.too_large for v in result.patches.values()),
        "reason": feature.reason if feature else None,
        "backend": result.backend, "eval": "eval.json"})

