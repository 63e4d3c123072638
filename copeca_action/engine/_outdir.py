"""The output folder: one scenario's plan and results, guarded against a second writer.

```
OUT/scenario.yaml   the scenario as run        OUT/plan.json      the RunPlan
OUT/results.jsonl   one RunRecord per line     OUT/runs/<run_id>/ record.json, stdout.jsonl,
OUT/.worktrees/     per-run checkouts (removed)                   stderr.txt, patch.diff, grade.json
```
"""

from __future__ import annotations

import contextlib
import datetime as dt
import fcntl
import os
import shutil
from collections import Counter
from collections.abc import Collection, Iterator, Mapping
from pathlib import Path
from typing import IO

from copeca_action._util.hashing import sha256_bytes
from copeca_action.errors import ConfigError
from copeca_action.plan import RunPlan
from copeca_action.records import (
    SIMULATED,
    STORED,
    RunRecord,
    latest_by_run_id,
    read_records,
)
from copeca_action.records._kinds import Endpoint

FINISHED = ("ok", "agent_error", "timeout")
"""Outcomes that end a run for good; infra errors and budget stops run again on --resume."""
START_OVER = ("--start-over moves this folder aside to {aside} (nothing is deleted: its "
              "results, run folders and spend stay there) and runs the plan from scratch")
"""What a refusal offers besides another --out; `{aside}` is where the folder would go."""


class StaleResults(ConfigError):
    """A resume refused because the folder's finished runs were measured under other
    conditions than this run's (a changed fingerprint, or simulated against real): `run`
    stops with the message; the demo, simulated and free, moves the folder aside and starts
    again. `reason`: what differs, without the advice."""

    def __init__(self, message: str, reason: str) -> None:
        super().__init__(message)
        self.reason = reason


class OutputDir:
    def __init__(self, root: Path, work_dir: Path | None = None) -> None:
        """`work_dir`: where per-run worktrees go instead of OUT/.worktrees (e.g. a tmpfs:
        checkouts are created and deleted per run, which a busy disk makes slow)."""
        self.root = root.resolve()
        self.results = self.root / "results.jsonl"
        self.plan_path = self.root / "plan.json"
        self.scenario_path = self.root / "scenario.yaml"
        self.runs = self.root / "runs"
        tag = sha256_bytes(str(self.root).encode())[:12]
        self.worktrees = (self.root / ".worktrees" if work_dir is None
                          else work_dir.resolve() / f"copeca-{tag}")
        self._lock_handle: IO[str] | None = None
        self._held = 0
        """How many holders (`acquire` calls not yet released) share the lock."""

    def run_dir(self, run_id: str) -> Path:
        return self.runs / run_id

    def acquire(self) -> None:
        """Hold OUT/.lock for the whole run: a second harness on the same folder is refused.
        Re-entrant: the pipeline holds it from the first run to the bundle, the engine
        again around each round of runs."""
        if self._lock_handle is not None:
            self._held += 1
            return
        self.root.mkdir(parents=True, exist_ok=True)
        handle = (self.root / ".lock").open("a+")
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.seek(0)
            holder = handle.read().strip() or "another process"
            handle.close()
            raise ConfigError(f"{self.root} is in use by another copeca-action run ({holder}); "
                              "wait for it or choose another --out") from None
        handle.truncate(0)
        handle.write(f"pid {os.getpid()}\n")
        handle.flush()
        self._lock_handle = handle
        self._held = 1

    def release(self) -> None:
        if self._lock_handle is None:
            return
        self._held -= 1
        if self._held > 0:
            return
        fcntl.flock(self._lock_handle, fcntl.LOCK_UN)
        self._lock_handle.close()
        self._lock_handle = None

    @contextlib.contextmanager
    def held(self) -> Iterator[None]:
        """The lock, from the first run to the last file written (report, bundle): a second
        `run` on the folder while this one writes its bundle is refused, not interleaved."""
        self.acquire()
        try:
            yield
        finally:
            self.release()

    def existing_plan(self) -> RunPlan | None:
        if not self.plan_path.is_file():
            return None
        try:
            return RunPlan.model_validate_json(self.plan_path.read_text())
        except ValueError as exc:
            raise ConfigError(f"{self.plan_path} is not a readable plan: {exc}") from exc

    def claim(self, plan: RunPlan, scenario_text: str, resume: bool,
              grow: bool = False) -> None:
        """Write the plan, or check that the folder holds this very plan when resuming.
        Two scenarios (or two versions of one) never share an output folder. `grow`: an
        adaptive round may extend the folder's plan (same scenario, a superset of runs)."""
        old = self.existing_plan()
        has_results = self.results.is_file() and self.results.stat().st_size > 0
        grows = (grow and old is not None and old.scenario_hash == plan.scenario_hash
                 and set(old.run_ids()) <= set(plan.run_ids()))
        if old is not None and not grows and (old.scenario != plan.scenario
                                              or old.plan_digest != plan.plan_digest):
            what = (f"scenario {old.scenario!r}" if old.scenario != plan.scenario
                    else f"another version of {plan.scenario!r} (plan "
                         f"{old.plan_digest[:12]}, now {plan.plan_digest[:12]})")
            raise ConfigError(f"{self.root} holds the runs of {what}; refusing to mix results. "
                              f"Choose another --out, or {self.start_over_hint()}")
        if has_results and not resume:
            raise ConfigError(f"{self.root} already holds results of {plan.scenario!r}; pass "
                              "--resume to continue them, choose another --out, or "
                              f"{self.start_over_hint()}")
        if old is None and has_results:
            raise ConfigError(f"{self.root} has results.jsonl but no plan.json; refusing to "
                              "guess what it belongs to. Choose another --out, or "
                              f"{self.start_over_hint()}")
        self.root.mkdir(parents=True, exist_ok=True)
        write_atomic(self.plan_path, plan.model_dump_json(indent=2) + "\n")
        write_atomic(self.scenario_path, scenario_text)

    def records(self) -> list[RunRecord]:
        return read_records(self.results) if self.results.is_file() else []

    def finished(self) -> dict[str, RunRecord]:
        """The final record of each run id that needs no rerun."""
        return {rid: r for rid, r in latest_by_run_id(self.records()).items()
                if r.outcome in FINISHED}

    def check_conditions(self, finished: Mapping[str, RunRecord],
                         fingerprints: Mapping[str, str | None], endpoint: Endpoint,
                         cli_versions: Mapping[str, str | None],
                         tool_arms: Collection[str]) -> str | None:
        """Refuse to resume when finished runs here were measured under other conditions
        than the runs about to start (another tool, CLI version, mode, repository pin, run
        setting or model endpoint: their fingerprints differ), or against the scripted model
        when this run is real (or the other way round): one report would mix two
        populations. `tool_arms`: the arms whose fingerprint holds the tool's content.
        Returns a warning when some finished runs cannot be checked (no fingerprint on
        either side), else None."""
        simulated = endpoint in SIMULATED
        other_endpoint = [r for r in finished.values()
                          if r.endpoint is not None and (r.endpoint in SIMULATED) != simulated]
        if other_endpoint:
            kinds = ", ".join(sorted({str(r.endpoint) for r in other_endpoint}))
            was, now = (("real (a vendor's API or --base-url)", "simulated (--dry-run or the "
                         "scripted model)") if simulated else
                        (f"simulated ({kinds}: the scripted model answered)",
                         "real (a vendor's API or --base-url)"))
            reason = (f"{len(other_endpoint)} finished run(s) here are {was} and this run is "
                      f"{now}")
            raise StaleResults(
                f"{self.results}: {reason}; refusing to resume: one report would mix simulated "
                "and measured numbers. Toggle --dry-run back and resume; or run into a new "
                f"folder (--out {self._sibling('-2')}, say); or {self.start_over_hint()}",
                reason)
        stale = [r for rid, r in finished.items()
                 if r.fingerprint is not None and fingerprints.get(rid) is not None
                 and r.fingerprint != fingerprints[rid]]
        if stale:
            arms = Counter(r.arm for r in stale)
            if set(arms) <= set(tool_arms):
                hint = ("the tool under test (--tool-dir, or --base-tool-dir for @base arms) "
                        "or the arms' modes changed since")
            else:
                now = ", ".join(f"{name} {cli_versions.get(name) or 'unknown'}"
                                for name in sorted({r.runner for r in stale}))
                was = _recorded_versions(stale, cli_versions)
                hint = ("a runner's definition or CLI version (now: " + now
                        + (f"; the runs here recorded {was}" if was else "") + "), a mode, a "
                        "repository pin, timeout_s / max_turns / run_budget_usd, the model "
                        "endpoint (its scripts) or the copeca-action version changed since")
            reason = (f"{len(stale)} finished run(s) here were measured under other conditions "
                      "than this run's (arms: "
                      + ", ".join(f"{arm} {n}" for arm, n in sorted(arms.items()))
                      + f"): {hint}")
            raise StaleResults(
                f"{self.results}: {reason}. Refusing to resume, so that one report never "
                "mixes two populations. Either restore what changed and resume; or keep these "
                f"results and run into a new folder (--out {self._sibling('-2')}, say); or "
                f"{self.start_over_hint()} (docs/running.md, Resume)", reason)
        unchecked = sum(1 for rid, r in finished.items()
                        if r.fingerprint is None or fingerprints.get(rid) is None)
        if not unchecked:
            return None
        return (f"{self.results}: {unchecked} finished run(s) cannot be checked against this "
                "run's conditions (no fingerprint: a CLI that prints no version, an unreadable "
                "tool folder, or a record of an older copeca-action); resuming on trust that "
                "the tool, the CLIs and the settings did not change")

    def start_over_hint(self) -> str:
        """The refusals' way out that keeps this folder's name: --start-over, and where the
        folder would go."""
        return START_OVER.format(aside=self._sibling(".old-<UTC time>"))

    def _sibling(self, suffix: str) -> Path:
        return self.root.with_name(self.root.name + suffix)

    def holds_runs(self) -> bool:
        """The folder holds something of a run (a plan, results or run folders)."""
        return any(p.exists() for p in (self.plan_path, self.results, self.runs))

    def simulated_only(self) -> bool:
        """Every record here was answered by the scripted model (a demo or a dry run, free):
        such a folder may be moved aside without asking. False when any record is real or
        of an unknown endpoint (an older record)."""
        return all(r.endpoint in SIMULATED for r in self.records())

    def unrecorded_attempts(self) -> int:
        """Run folders holding an attempt results.jsonl lacks (a harness killed after the
        agent started, before the line was appended): what resume would recover (see
        engine/_execute.recover_lost), counted here without reading the CLI's output."""
        if not self.runs.is_dir():
            return 0
        have = {(r.run_id, r.attempt, r.started_at) for r in self.records()}
        found = 0
        for folder in self.runs.iterdir():
            record_file = folder / "record.json"
            if record_file.is_file():
                try:
                    r = RunRecord.model_validate_json(record_file.read_bytes(), context=STORED)
                except (ValueError, OSError):
                    found += (folder / "stdout.jsonl").is_file()
                    continue
                found += (r.run_id, r.attempt, r.started_at) not in have
            elif (folder / "stdout.jsonl").is_file():
                found += 1
        return found

    def move_aside(self) -> Path | None:
        """Start over: move the whole folder (plan, results.jsonl, run folders: every record
        of spend) to a sibling OUT.old-<UTC time>, never deleting anything. Refused while
        another run holds the folder. Returns where it went; None when the folder holds no
        run. Called before the caller holds the lock (the lock file moves with the folder)."""
        if self._lock_handle is not None:
            raise RuntimeError("move_aside while holding the folder's lock")
        if not self.root.is_dir() or not self.holds_runs():
            return None
        with self.held():  # refused, naming the holder, while another run writes here
            self.clear_worktrees()  # checkouts, never records; git prunes them on the next run
            stamp = dt.datetime.now(dt.UTC).strftime("%Y%m%dT%H%M%SZ")
            aside = self._sibling(f".old-{stamp}")
            n = 1
            while aside.exists():
                n += 1
                aside = self._sibling(f".old-{stamp}-{n}")
            os.rename(self.root, aside)
        return aside

    def clear_worktrees(self) -> None:
        if self.worktrees.exists():
            shutil.rmtree(self.worktrees, ignore_errors=True)


def _recorded_versions(stale: Collection[RunRecord], now: Mapping[str, str | None]) -> str:
    """The CLI versions the stale records carry, for the runners where one differs from the
    version probed now ("claude 2.1.300"); "" when none differs. Said as recorded, not as
    the cause: a CLI may state a version of its own in its output."""
    seen: dict[str, set[str]] = {}
    for r in stale:
        if r.cli_version and r.cli_version != now.get(r.runner):
            seen.setdefault(r.runner, set()).add(r.cli_version)
    return ", ".join(f"{name} {' / '.join(sorted(was))}" for name, was in sorted(seen.items()))


def write_atomic(path: Path, text: str) -> None:
    """Readers see the old file or the new one, never half of one."""
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text)
    os.replace(tmp, path)
