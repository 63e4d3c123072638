"""The scheduler: provisioning, agent slots and finishing run as three overlapping stages, so
an agent slot never waits for a worktree to be made or a test to be graded.

```
todo ─► provisioners (≤2) ─► ready (≤ workers) ─► agent slots ─► finishers ─► results.jsonl
  ▲                                                                          │
  └──────────────────────────── infra error, attempts left ◄─────────────────┘
```
The scenario budget is checked when a slot is about to start an agent (spend + expected cost
of runs in flight + of this run); once it says no, every remaining run is `budget_stop`.
SIGINT/SIGTERM cancel: running agents are killed as a group, interrupted runs are recorded as
infra errors (so `--resume` repeats them), queued worktrees are removed, nothing is left.
"""

from __future__ import annotations

import contextlib
import errno
import os
import queue
import signal
import statistics
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType

import yaml

from copeca_action._util.scrub import register_private_dir, register_readable_dir
from copeca_action.agent._process import check_isolation, files_visible_warning
from copeca_action.engine._adaptive import adaptive_of, run_rounds
from copeca_action.engine._budget import Budget
from copeca_action.engine._context import EngineConfig, Resolved, resolve
from copeca_action.engine._execute import (
    COST_LOWER_BOUND,
    ENDPOINT_ERROR,
    INTERRUPTED,
    AgentOutcome,
    Prepared,
    cleanup,
    finish,
    provision,
    record_design,
    recover_lost,
    start_agent,
)
from copeca_action.engine._fingerprint import fingerprints, tool_arms
from copeca_action.engine._keys import check_key_proxy, start_forwarder
from copeca_action.engine._outdir import FINISHED, merge_records
from copeca_action.engine._progress import NullProgress, ProgressSink
from copeca_action.engine._reuse import ReuseResult, adopt
from copeca_action.errors import CopecaError, InfraError
from copeca_action.plan import PlannedRun, RunPlan
from copeca_action.records import RunRecord, append_record, latest_by_run_id
from copeca_action.records._io import repair_torn_tail
from copeca_action.transcript import pricing_age_warning
from copeca_action.workspace import WorktreePool, prune_worktrees

POLL_S = 0.05
ENDPOINT_STOP = 5
"""Endpoint failures in a row (attempts included) that stop the run: the key, the URL or the
provider is broken, and every further run would fail the same way."""


@dataclass
class RunStats:
    """What one invocation did (the records are in results.jsonl)."""

    planned: int = 0
    skipped_finished: int = 0
    records: list[RunRecord] = field(default_factory=list)
    retries: int = 0
    interrupted: bool = False
    budget_stopped: bool = False
    slot_waits_s: list[float] = field(default_factory=list)
    """Per agent slot, the time between one agent's end and the next agent's start."""
    timings: list[dict[str, float]] = field(default_factory=list)
    wall_s: float = 0.0
    warnings: list[str] = field(default_factory=list)
    """Shown when the run started (e.g. a runner's prices not checked for 60 days)."""
    plan: RunPlan | None = None
    """The plan that was run: under adaptive sampling, every round up to the last one."""
    reuse: ReuseResult | None = None
    """What `reuse` took from a previous bundle (None: no bundle offered)."""

    @property
    def final(self) -> list[RunRecord]:
        return list(latest_by_run_id(self.records).values())

    def median_wait(self) -> float:
        return statistics.median(self.slot_waits_s) if self.slot_waits_s else 0.0


class _Scheduler:
    def __init__(self, cfg: EngineConfig, res: Resolved, plan: RunPlan,
                 todo: list[PlannedRun], budget: Budget, progress: ProgressSink) -> None:
        self.cfg, self.res, self.plan, self.budget, self.progress = (
            cfg, res, plan, budget, progress)
        self.workers = cfg.scenario.workers
        self.todo: queue.Queue[tuple[PlannedRun, int]] = queue.Queue()
        for run in todo:
            self.todo.put((run, 1))
        self.ready: queue.Queue[Prepared] = queue.Queue(maxsize=self.workers)
        self.done: queue.Queue[tuple[Prepared, AgentOutcome]] = queue.Queue()
        self.unrecorded = threading.BoundedSemaphore(UNRECORDED_PER_WORKER * self.workers)
        """Agents started whose record is not written yet: a slot waits for one to be
        recorded before it starts another, so a slow grader holds back new (paid) runs
        instead of piling up finished ones a killed harness would pay for again."""
        self.outstanding = len(todo)
        self.lock = threading.Lock()
        self.all_done = threading.Event()
        self.cancel = threading.Event()
        self.provisioners_done = threading.Event()
        self.slots_done = threading.Event()
        self.stats = RunStats(planned=len(plan.runs))
        self.endpoint_streak = 0
        """Records in a row that the model endpoint failed (reset by any finished run)."""
        self.fatal: BaseException | None = None
        """What killed a stage thread (a full disk, a bug): the run stops, then raises it."""
        if not todo:
            self.all_done.set()

    def _guarded(self, stage: Callable[[], None]) -> Callable[[], None]:
        """A stage thread that fails stops the whole run instead of dying silently (which
        left the main thread waiting for records that never came)."""
        def run() -> None:
            try:
                stage()
            except BaseException as exc:  # re-raised by the main thread, named
                with self.lock:
                    if self.fatal is None:
                        self.fatal = exc
                self.cancel.set()
        return run

    # ------------------------------------------------------------ stages

    def provisioner(self) -> None:
        while not (self.all_done.is_set() or self.cancel.is_set()):
            try:
                run, attempt = self.todo.get(timeout=POLL_S)
            except queue.Empty:
                continue
            if self.budget.stopped:
                self.done.put((Prepared(run=run, attempt=attempt),
                               AgentOutcome(skipped="budget_stop", error=_BUDGET_MSG)))
                continue
            prep = provision(self.cfg, self.res, run, attempt)
            while not self.cancel.is_set():
                try:
                    self.ready.put(prep, timeout=POLL_S)
                    break
                except queue.Full:
                    continue
            else:
                cleanup(prep)

    def slot(self) -> None:
        last_end: float | None = None
        while True:
            try:
                prep = self.ready.get(timeout=POLL_S)
            except queue.Empty:
                if self.all_done.is_set() or (self.provisioners_done.is_set()
                                              and self.ready.empty()):
                    return
                continue
            if self.cancel.is_set():
                cleanup(prep)
                continue
            if prep.error is not None:
                self.done.put((prep, AgentOutcome()))
                continue
            if not self._wait_to_start():
                cleanup(prep)
                continue
            key = f"{prep.run.arm}|{prep.run.model}"
            if not self.budget.try_start(_attempt(prep), key):
                self.unrecorded.release()
                self.stats.budget_stopped = True
                self.done.put((prep, AgentOutcome(skipped="budget_stop", error=_BUDGET_MSG)))
                continue
            now = time.perf_counter()
            if last_end is not None:
                with self.lock:
                    self.stats.slot_waits_s.append(now - last_end)
            prep.holds_start = True
            outcome = start_agent(self.cfg, self.res, prep, self.cancel)
            last_end = time.perf_counter()
            if prep.cost is not None:
                self.budget.settle(_attempt(prep), key, prep.cost.used_usd)
            self.done.put((prep, outcome))

    def finisher(self) -> None:
        while True:
            try:
                prep, outcome = self.done.get(timeout=POLL_S)
            except queue.Empty:
                if self.all_done.is_set() or (self.slots_done.is_set() and self.done.empty()):
                    return
                continue
            try:
                record = finish(self.cfg, self.res, prep, outcome)
                self._settle(prep, record)
            finally:
                if prep.holds_start:
                    prep.holds_start = False
                    self.unrecorded.release()

    def _wait_to_start(self) -> bool:
        """Takes a start (`unrecorded`); False when the run is cancelled meanwhile."""
        while not self.unrecorded.acquire(timeout=POLL_S):
            if self.cancel.is_set():
                return False
        if self.cancel.is_set():
            self.unrecorded.release()
            return False
        return True

    def _settle(self, prep: Prepared, record: RunRecord) -> None:
        retry = (record.outcome == "infra_error" and not self.cancel.is_set()
                 and prep.attempt < self.cfg.max_attempts)
        key = f"{prep.run.arm}|{prep.run.model}"
        with self.lock:
            append_record(self.cfg.out.results, record)
            if record.outcome == "infra_error" and (record.error or "").startswith(
                    ENDPOINT_ERROR):
                self.endpoint_streak += 1
                if self.endpoint_streak >= ENDPOINT_STOP and self.fatal is None:
                    self.fatal = InfraError(
                        f"{ENDPOINT_ERROR} {self.endpoint_streak} times in a row (last: "
                        f"{(record.error or '').removeprefix(ENDPOINT_ERROR + ': ')}); stopped "
                        "before spending more: check the API key, --base-url and the "
                        "provider's status, then run again with --resume")
                    self.cancel.set()
            elif record.outcome in FINISHED:
                self.endpoint_streak = 0
            if prep.cost is not None:  # the agent ran: this attempt's spend counts
                self.budget.settle(_attempt(prep), key, record.cost_usd)
            else:
                self.budget.release(_attempt(prep))
            self.stats.records.append(record)
            self.stats.timings.append(dict(prep.timings))
            self.progress.update(record, final=not retry)
            if retry:
                self.stats.retries += 1
                self.todo.put((prep.run, prep.attempt + 1))
                return
            self.outstanding -= 1
            if self.outstanding <= 0:
                self.all_done.set()

    # ------------------------------------------------------------ driving

    def run(self) -> RunStats:
        start = time.perf_counter()
        provisioners = [threading.Thread(target=self._guarded(self.provisioner),
                                         name=f"provision-{i}", daemon=True)
                        for i in range(min(2, self.workers))]
        slots = [threading.Thread(target=self._guarded(self.slot), name=f"agent-{i}",
                                  daemon=True)
                 for i in range(self.workers)]
        finishers = [threading.Thread(target=self._guarded(self.finisher), name=f"finish-{i}",
                                      daemon=True)
                     for i in range(self.workers)]
        for t in (*provisioners, *slots, *finishers):
            t.start()
        with _signals(self._on_signal):
            while not self.all_done.wait(POLL_S):
                if self.cancel.is_set():
                    break
            for t in provisioners:
                t.join()
            self.provisioners_done.set()
            for t in slots:
                t.join()
            self.slots_done.set()
            for t in finishers:
                t.join()
        while not self.ready.empty():  # provisioned but never started (cancel)
            with contextlib.suppress(Exception):
                cleanup(self.ready.get_nowait())
        while not self.done.empty():  # finished agents a dead finisher never recorded
            prep, _ = self.done.get_nowait()
            with contextlib.suppress(Exception):
                cleanup(prep)
        # Interrupted: a signal stopped the run before every run was done, or stopped agents
        # (their runs were settled as interrupted, so the plan can look done; it is not).
        self.stats.interrupted = self.cancel.is_set() and (
            not self.all_done.is_set()
            or any(r.error == INTERRUPTED for r in self.stats.records))
        self.stats.wall_s = time.perf_counter() - start
        if self.fatal is not None:
            raise _fatal_error(self.fatal)
        return self.stats

    def _on_signal(self, signum: int, _frame: FrameType | None) -> None:
        self.cancel.set()


_BUDGET_MSG = "the scenario budget would be passed by starting this run"


UNRECORDED_PER_WORKER = 2
"""Agents per worker that may have started and not be recorded yet: one running, one
waiting for a finisher."""


def _fatal_error(exc: BaseException) -> CopecaError:
    """The error a failed stage thread ends the run with: named, never a traceback."""
    if isinstance(exc, CopecaError):
        return exc
    if isinstance(exc, OSError) and exc.errno in (errno.ENOSPC, errno.EDQUOT):
        where = f" writing {exc.filename}" if exc.filename else ""
        return InfraError(f"the disk is full{where} ({exc.strerror}); the runs recorded so "
                          "far are kept: free some space, then run again with --resume")
    if isinstance(exc, OSError):
        return InfraError(f"the harness could not go on: {exc}; the runs recorded so far are "
                          "kept: fix it, then run again with --resume")
    return InfraError(f"the harness failed ({type(exc).__name__}: {exc}); the runs recorded "
                      "so far are kept, --resume continues them")


def _lost_warnings(results: Path, restored: list[RunRecord],
                   killed: list[RunRecord]) -> list[str]:
    out = []
    if restored:
        done = sum(r.outcome in FINISHED for r in restored)
        ids = ", ".join(sorted({r.run_id for r in restored})[:5])
        more = len({r.run_id for r in restored}) - 5
        out.append(f"{results}: restored {len(restored)} record(s) ({done} of finished runs, "
                   "not run again) from their runs/<run id>/record.json (" + ids
                   + (f" and {more} more" if more > 0 else "") + "): the harness died "
                   "before appending them, or the lines were removed by hand. results.jsonl is "
                   "the ledger of what was spent: a missing line comes back from its run "
                   "folder, never paid for twice; to measure the runs again, use another --out "
                   "or --start-over (the folder is moved aside, kept)")
    running = [r for r in killed if COST_LOWER_BOUND in r.flags]
    ungraded = [r for r in killed if COST_LOWER_BOUND not in r.flags]
    for group, what, bound in (
            (running, "were in flight when the harness died", "a lower bound, flag "
             "cost_lower_bound: a request in flight is billed but reported to no one"),
            (ungraded, "had finished their agent but were not graded when the harness died",
             "exact: each output is complete")):
        if not group:
            continue
        spent = sum(r.cost_usd or 0.0 for r in group)
        unknown = sum(r.cost_usd is None for r in group)
        out.append(f"{results}: {len(group)} run(s) {what}; recorded as infra errors "
                   f"(flag harness_died) with the spend their output shows (${spent:.4f}"
                   + (f", {unknown} of unknown cost" if unknown else "")
                   + f"; {bound}), and run again")
    return out


def _attempt(prep: Prepared) -> str:
    """The budget's key for one attempt of a run: every attempt's spend counts."""
    return f"{prep.run.run_id}#{prep.attempt}"


@contextlib.contextmanager
def _signals(handler: signal.Handlers | object) -> Iterator[None]:
    """Route SIGINT/SIGTERM to `handler` while running (main thread only)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    old = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}
    for s in old:
        signal.signal(s, handler)  # type: ignore[arg-type]
    try:
        yield
    finally:
        for s, h in old.items():
            signal.signal(s, h)


def run_plan(cfg: EngineConfig, plan: RunPlan, *, resume: bool = False,
             scenario_text: str = "", progress: ProgressSink | None = None) -> RunStats:
    """Run (or continue) a plan into cfg.out. Raises before any run when preflight fails.
    `scenario_text`: the scenario file as the user wrote it, kept beside the results (by
    default the scenario as loaded, so `analyze` of the folder reads its settings).
    With `adaptive:` in the scenario the plan's repetitions are replaced by rounds (see
    engine/_adaptive.py); `RunStats.plan` is then the effective plan."""
    if not scenario_text.strip():
        scenario_text = yaml.safe_dump(cfg.scenario.model_dump(mode="json", exclude_unset=True),
                                       sort_keys=False)
    adaptive = adaptive_of(cfg)
    if adaptive is None:
        stats = _run_once(cfg, plan, resume, scenario_text, progress)
        stats.plan = plan
        return stats
    total = RunStats()

    def one_round(round_plan: RunPlan, round_resume: bool) -> tuple[bool, bool]:
        stats = _run_once(cfg, round_plan, round_resume, scenario_text, progress, grow=True,
                          warn=not total.records)
        total.warnings += stats.warnings
        total.records += stats.records
        total.retries += stats.retries
        total.slot_waits_s += stats.slot_waits_s
        total.timings += stats.timings
        total.wall_s += stats.wall_s
        total.interrupted, total.budget_stopped = stats.interrupted, stats.budget_stopped
        total.planned, total.skipped_finished = stats.planned, stats.skipped_finished
        if stats.reuse is not None:
            if total.reuse is None:
                total.reuse = stats.reuse
            else:  # a later round: the runs it added
                total.reuse.reused += stats.reuse.reused
                total.reuse.planned += stats.reuse.planned
                total.reuse.skipped.update(stats.reuse.skipped)
        return stats.interrupted, stats.budget_stopped

    total.plan = run_rounds(cfg, plan, adaptive, one_round, resume)
    return total


def _run_once(cfg: EngineConfig, plan: RunPlan, resume: bool, scenario_text: str,
              progress: ProgressSink | None, grow: bool = False, warn: bool = True) -> RunStats:
    progress = progress or NullProgress()
    check_key_proxy(cfg.host_env)  # before anything: a typo must not hand agents the key
    check_isolation(os.environ)  # what each agent's start reads (`agent_prefix`)
    stats_warnings: list[str] = []
    out = cfg.out
    out.acquire()
    try:
        out.claim(plan, scenario_text, resume, grow=grow)
        if (torn := repair_torn_tail(out.results)):
            progress.warn(f"{out.results}: removed a torn last line ({torn} bytes, an append "
                          "a crash or a full disk interrupted); its record is restored from "
                          "its run folder's record.json, else its run runs again")
        register_private_dir(out.root)  # graded code and agents never see other runs
        register_private_dir(out.worktrees.parent if out.worktrees.parent != out.root
                             else out.worktrees)
        register_readable_dir(cfg.store.root)
        res = resolve(cfg, plan)
        if warn and (text := files_visible_warning()) is not None:
            stats_warnings.append(text)
            progress.warn(text)
        if warn:
            for runner in res.runners.values():
                if (text := pricing_age_warning(runner)) is not None:
                    stats_warnings.append(text)
                    progress.warn(text)
        out.clear_worktrees()
        for snap in res.snapshots.values():
            prune_worktrees(Path(snap.git_dir))
        res.fingerprints = fingerprints(cfg, res, plan)
        reuse = None
        if cfg.reuse is not None:
            reuse = adopt(out, plan, cfg.scenario.name, cfg.reuse, res.fingerprints,
                          record_design(cfg.scenario))
            progress.warn(f"reuse: {reuse.message()}")
        recorded = out.records()  # read once: every record, superseded attempts included
        # what a harness that died left in the run folders but not in results.jsonl
        lost = recover_lost(cfg, res, plan, recorded)
        # in place: an earlier attempt restored never passes for its run's latest
        latest = latest_by_run_id(merge_records(recorded, lost.records))
        finished = {rid for rid, r in latest.items() if r.outcome in FINISHED}
        unchecked = out.check_conditions({rid: latest[rid] for rid in finished},
                                         res.fingerprints, cfg.endpoint_kind,
                                         res.cli_versions, tool_arms(cfg, plan))
        if unchecked is not None and warn:
            stats_warnings.append(unchecked)
            progress.warn(unchecked)
        if lost.records:
            out.restore(lost.records)
            recorded += lost.records
            for text in _lost_warnings(out.results, lost.restored, lost.killed):
                stats_warnings.append(text)
                progress.warn(text)
        history = [(f"{r.arm}|{r.model}", r.cost_usd) for r in latest.values()
                   if r.reached_agent and r.cost_usd is not None]
        # Every attempt ever recorded counts (an infra error after the agent ran, an
        # interrupted run, a superseded retry spent money too). Reused runs cost nothing
        # now: they inform the expected cost but do not use up this invocation's budget.
        spent = sum(r.cost_usd for r in recorded
                    if r.cost_usd is not None and r.reused_from is None)
        budget = Budget(cfg.scenario.budget_usd, spent, history)
        for r in recorded:  # spent at a price nobody knows (an attempt that never
            # reached the agent costs 0, not None): its expected cost, never 0
            if r.cost_usd is None and r.reused_from is None:
                budget.count_unknown(f"{r.arm}|{r.model}")
        todo = [r for r in plan.runs if r.run_id not in finished]
        if cfg.reuse_worktrees:
            res.pool = WorktreePool(out.worktrees)
        if cfg.endpoint_kind == "real" and todo:  # the key stays here (closed by res.close)
            res.forwarder = start_forwarder(res.runners, cfg.host_env, cfg.base_url)
        correct = sum(1 for rid in finished if latest[rid].correct)
        progress.start(len(plan.runs), len(plan.runs) - len(todo), budget.spent, correct)
        try:
            stats = _Scheduler(cfg, res, plan, todo, budget, progress).run()
        finally:
            progress.close()
            if res.pool is not None:
                res.pool.close()
            res.close()
            out.clear_worktrees()
        stats.skipped_finished = len(plan.runs) - len(todo)
        stats.warnings = stats_warnings
        stats.reuse = reuse
        return stats
    finally:
        out.release()
