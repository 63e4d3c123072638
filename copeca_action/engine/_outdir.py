"""The output folder: one scenario's plan and results, guarded against a second writer.

```
OUT/scenario.yaml   the scenario as run        OUT/plan.json      the RunPlan
OUT/results.jsonl   one RunRecord per line     OUT/runs/<run_id>/ record.json, stdout.jsonl,
OUT/.worktrees/     per-run checkouts (removed)                   stderr.txt, patch.diff, grade.json
OUT/attempts/<run_id>/<attempt>-<started>/  each earlier attempt's record.json and output,
                    kept (`new_attempt`), outside the run folder the next agent may write
```
"""

from __future__ import annotations

import contextlib
import datetime as dt
import fcntl
import os
import shutil
from collections import Counter
from collections.abc import Collection, Iterator, Mapping, Sequence
from pathlib import Path
from typing import IO

from copeca_action._util.hashing import sha256_bytes
from copeca_action._util.scrub import scrub_bytes
from copeca_action.errors import ConfigError
from copeca_action.plan import RunPlan
from copeca_action.records import (
    SIMULATED,
    STORED,
    RunRecord,
    append_records,
    latest_by_run_id,
    read_records,
)
from copeca_action.records._kinds import Endpoint

FINISHED = ("ok", "agent_error", "timeout")
"""Outcomes that end a run for good; infra errors and budget stops run again on --resume."""
START_OVER = ("--start-over moves this folder aside to {aside} (nothing is deleted: its "
              "results, run folders and spend stay there) and runs the plan from scratch")
"""What a refusal offers besides another --out; `{aside}` is where the folder would go."""


RECORD = "record.json"
STDOUT = "stdout.jsonl"
AGENT_STATE = frozenset({"config", "home", "tmp", "grade-home"})
"""The agent CLI's own state in a run folder (as bundle/_collect.AGENT_STATE_DIRS): no
evidence, dropped when an attempt with its record is put aside."""


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
        self.attempts = self.root / "attempts"
        tag = sha256_bytes(str(self.root).encode())[:12]
        self.worktrees = (self.root / ".worktrees" if work_dir is None
                          else work_dir.resolve() / f"copeca-{tag}")
        self._lock_handle: IO[str] | None = None
        self._held = 0
        """How many holders (`acquire` calls not yet released) share the lock."""

    def run_dir(self, run_id: str) -> Path:
        return self.runs / run_id

    def new_attempt(self, run_id: str) -> Path:
        """The run folder, empty but for `attempts/`, for a new attempt of the run. What an
        earlier attempt left (its record.json, its agent's output) is moved to
        OUT/attempts/<run id>/<attempt>-<started>/ first, never deleted (and out of reach
        of the next agent, which may write its run folder): results.jsonl can always be
        restored from the run folders (`attempt_folders`), each attempt once, also after a
        retried infra error whose line was lost. A folder with neither (a provisioning that
        died) spent nothing and is cleared. Safe against a kill at any point: the record
        is copied aside first, the output moved (one rename each), the record.json left
        here removed last; a half-made `.<name>.partial` is finished by the next call."""
        run_dir = self.run_dir(run_id)
        run_dir.mkdir(parents=True, exist_ok=True)
        record = read_record(run_dir / RECORD)
        if record is not None or (run_dir / STDOUT).is_file():
            _put_aside(run_dir, self.attempts / run_id, record)
        for entry in run_dir.iterdir():
            if entry.name != RECORD:
                _remove(entry)
        (run_dir / RECORD).unlink(missing_ok=True)
        return run_dir

    def attempt_folders(self, run_id: str) -> list[Path]:
        """The folders that may hold one attempt of the run: the run folder (its latest
        attempt) and each earlier attempt kept in OUT/attempts/<run id>/ (a `.partial` one
        too: the record is copied in first and the output moved by rename, so no attempt is
        in two of them without its record, which names it)."""
        run_dir, kept = self.run_dir(run_id), self.attempts / run_id
        aside = sorted(p for p in kept.iterdir() if p.is_dir()) if kept.is_dir() else []
        return [run_dir, *aside] if run_dir.is_dir() else aside

    def holds_spend(self, run_id: str) -> bool:
        """An agent of the run ran here: its output is in the run folder or is kept as an
        earlier attempt's (what it spent is recorded, or recovered on resume)."""
        return any((f / STDOUT).is_file() for f in self.attempt_folders(run_id))

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

    def restore(self, lost: Sequence[RunRecord]) -> None:
        """Put records results.jsonl lacks (found in the run folders) back into it, each
        where `merge_records` places it, so the last line of each run stays its latest
        attempt. The lines there are kept byte for byte; the file is appended to when every
        record goes at its end, else replaced whole (written aside, synced, renamed)."""
        if not lost:
            return
        data = self.results.read_bytes() if self.results.is_file() else b""
        lines = [line for line in data.split(b"\n") if line.strip()]
        existing = [RunRecord.model_validate_json(line, context=STORED) for line in lines]
        at = _positions(existing, lost)
        if all(i == len(existing) for i in at):
            append_records(self.results, sorted(lost, key=_started))
            return
        out = [*lines]
        for i, record in _insertions(at, lost):
            out.insert(i, scrub_bytes(record.model_dump_json().encode()))
        tmp = self.results.with_name(self.results.name + ".tmp")
        with tmp.open("wb") as handle:
            handle.write(b"".join(line + b"\n" for line in out))
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, self.results)

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
        return any(p.exists() for p in (self.plan_path, self.results, self.runs,
                                        self.attempts))

    def simulated_only(self) -> bool:
        """Every record here was answered by the scripted model (a demo or a dry run, free):
        such a folder may be moved aside without asking. False when any record is real or
        of an unknown endpoint (an older record)."""
        return all(r.endpoint in SIMULATED for r in self.records())

    def unrecorded_attempts(self) -> int:
        """Run folders holding an attempt results.jsonl lacks (a harness killed after the
        agent started, before the line was appended): what resume would recover (see
        engine/_execute.recover_lost), counted here without reading the CLI's output."""
        have = {record_key(r) for r in self.records()}
        found = 0
        ids = {p.name for root in (self.runs, self.attempts) if root.is_dir()
               for p in root.iterdir() if p.is_dir()}
        for run_id in sorted(ids):
            for folder in self.attempt_folders(run_id):
                record = read_record(folder / RECORD)
                if record is not None:
                    found += record_key(record) not in have
                    have.add(record_key(record))
                elif (folder / STDOUT).is_file():
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


def merge_records(existing: Sequence[RunRecord],
                  lost: Sequence[RunRecord]) -> list[RunRecord]:
    """`existing` (results.jsonl's records, in order) with the `lost` ones restored: each
    before the first record of its run that started after it (an earlier attempt kept in
    OUT/attempts/ whose line was removed), else at the end; so the last record of each run
    id stays its latest attempt (`latest_by_run_id`). As `OutputDir.restore` writes it."""
    out = [*existing]
    for i, record in _insertions(_positions(existing, lost), lost):
        out.insert(i, record)
    return out


def _insertions(at: list[int], lost: Sequence[RunRecord]) -> list[tuple[int, RunRecord]]:
    """(position, record) in the order to insert them one by one: from the end backwards,
    and at one position the latest first, so that they end up in order of start."""
    return sorted(zip(at, lost, strict=True), key=lambda p: (p[0], _started(p[1])),
                  reverse=True)


def _positions(existing: Sequence[RunRecord], lost: Sequence[RunRecord]) -> list[int]:
    later: dict[str, list[tuple[int, dt.datetime]]] = {}
    for i, r in enumerate(existing):
        if r.started_at is not None:
            later.setdefault(r.run_id, []).append((i, r.started_at))
    out = []
    for record in lost:
        start = record.started_at
        out.append(next((i for i, when in later.get(record.run_id, ())
                         if start is not None and when > start), len(existing)))
    return out


def _started(record: RunRecord) -> tuple[bool, dt.datetime]:
    """Sort key: by start, an undated record last."""
    start = record.started_at
    return start is None, start or dt.datetime.max.replace(tzinfo=dt.UTC)


def record_key(record: RunRecord) -> tuple[str, int, dt.datetime | None]:
    """What names one attempt across results.jsonl and the run folders."""
    return record.run_id, record.attempt, record.started_at


def read_record(path: Path) -> RunRecord | None:
    """A run folder's record.json; None when absent or unreadable (torn by a crash)."""
    try:
        return RunRecord.model_validate_json(path.read_bytes(), context=STORED)
    except (ValueError, OSError):
        return None


def _put_aside(run_dir: Path, kept: Path, record: RunRecord | None) -> None:
    """Move the attempt in `run_dir` to `kept/<name>/` (see `OutputDir.new_attempt`)."""
    kept.mkdir(parents=True, exist_ok=True)
    if record is not None:
        stamp = record.started_at
        name = f"{record.attempt}-"
    else:  # an agent's output without its record: recovered on resume from where it is
        stamp = dt.datetime.fromtimestamp((run_dir / STDOUT).stat().st_mtime, dt.UTC)
        name = "unrecorded-"
    name += stamp.strftime("%Y%m%dT%H%M%S%fZ") if stamp is not None else "undated"
    dest = kept / name
    if dest.is_dir():  # put aside before a kill cut the clearing short
        return
    partial = kept / f".{name}.partial"
    partial.mkdir(exist_ok=True)
    if record is not None:  # first: every folder the output is in names its attempt
        write_atomic(partial / RECORD, (run_dir / RECORD).read_text())
    for entry in sorted(run_dir.iterdir(), key=lambda e: e.name != STDOUT):
        if entry.name == RECORD:
            continue
        if record is not None and entry.name in AGENT_STATE:
            _remove(entry)  # without a record, its config may be needed to read the output
            continue
        os.replace(entry, partial / entry.name)
    os.rename(partial, dest)


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    else:
        path.unlink(missing_ok=True)


def write_atomic(path: Path, text: str) -> None:
    """Readers see the old file or the new one, never half of one."""
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text)
    os.replace(tmp, path)
