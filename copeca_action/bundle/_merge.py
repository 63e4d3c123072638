"""Merging shard bundles into one: each verified, all from one plan and one commit, disjoint,
together the whole plan (their run ids hash to the plan digest every shard signed)."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import ExitStack
from pathlib import Path
from typing import Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import (
    Ed25519PrivateKey,
    Ed25519PublicKey,
)

from copeca_action._util.build import Build
from copeca_action._util.hashing import sha256_json
from copeca_action._util.scrub import Scrubber
from copeca_action.bundle._complete import describe
from copeca_action.bundle._model import (
    ATTEMPTS_DIR,
    RECORD,
    RUNS_DIR,
    SCENARIO,
    FileEntry,
    Manifest,
)
from copeca_action.bundle._verify import VerifiedBundle, verify_bundle
from copeca_action.bundle._write import (
    BundleContents,
    KeptAttempt,
    RenderedReport,
    Source,
    StreamSource,
    write_bundle,
)
from copeca_action.bundle._zipread import Limits, SafeZip
from copeca_action.errors import VerificationError
from copeca_action.plan import PlannedRun, RunPlan, build_plan
from copeca_action.records import RunRecord
from copeca_action.scenario import Scenario, Task

ReportFn = Callable[[RunPlan, list[RunRecord], int], RenderedReport]
"""The report stage: the merged plan and records, and the secret values the shards' reports
say were redacted from the files their runs left, in; the rendered report out."""


def _incomplete(message: str) -> VerificationError:
    return VerificationError("incomplete", message)


def _check_same_batch(shards: Sequence[VerifiedBundle], pinned: bool) -> None:
    first = shards[0].statement.predicate
    for shard in shards[1:]:
        p = shard.statement.predicate
        if (p.plan_digest, p.scenario_sha256, p.compare) != (
                first.plan_digest, first.scenario_sha256, first.compare):
            raise _incomplete(f"{shard.path} comes from another plan or scenario than "
                              f"{shards[0].path} (plan {p.plan_digest[:12]} vs "
                              f"{first.plan_digest[:12]})")
        commits = {p.environment.repo_commit, first.environment.repo_commit}
        if None not in commits and len(commits) > 1:
            raise _incomplete(f"{shard.path} ran at commit {p.environment.repo_commit}, "
                              f"{shards[0].path} at {first.environment.repo_commit}")
        # the seed and the thresholds (with any threshold inputs) decide the merged
        # report: one shard's may not stand for another's
        differ = [f"threshold {k} {p.thresholds.get(k)} vs {first.thresholds.get(k)}"
                  for k in sorted(p.thresholds.keys() | first.thresholds.keys())
                  if p.thresholds.get(k) != first.thresholds.get(k)]
        if p.seed != first.seed:
            differ.insert(0, f"seed {p.seed} vs {first.seed}")
        if differ:
            raise _incomplete(f"{shard.path} and {shards[0].path} ran with other settings "
                              f"({'; '.join(differ)}): the merged report would take the "
                              "first shard's, so the shards of one run must share them")
    _check_same_endpoint(shards)
    keyids = {s.keyid for s in shards}
    if len(keyids) > 1 and not pinned:
        raise VerificationError("signature", "the shards are signed by different keys (or "
                                "some are unsigned): pass --pubkey to require one key")


_ENDPOINTS = {"real": "a real model API", "scripted": "the scripted model (simulated)",
              "dry_run": "the scripted model standing in for a real one (a dry run, "
                         "simulated)"}


def _endpoints(shard: VerifiedBundle) -> set[str]:
    """What answered the shard's runs, as its records say (older records say nothing)."""
    return {r.endpoint for r in shard.records if r.endpoint is not None}


def _check_same_endpoint(shards: Sequence[VerifiedBundle]) -> None:
    """Every shard's runs were answered by the same kind of endpoint: a simulated shard
    merged with a real one would publish real-looking numbers partly from the scripted
    model."""
    seen: tuple[VerifiedBundle, str] | None = None
    for shard in shards:
        for kind in sorted(_endpoints(shard)):
            if seen is None:
                seen = (shard, kind)
            elif kind != seen[1]:
                raise _incomplete(
                    f"{seen[0].path} ran against {_ENDPOINTS[seen[1]]}, {shard.path} against "
                    f"{_ENDPOINTS[kind]}: a merged report would mix simulated numbers with "
                    "measured ones; merge only shards of one kind")


def _check_cover(shards: Sequence[VerifiedBundle]) -> list[PlannedRun]:
    owner: dict[str, Path] = {}
    dupes = []
    runs: list[PlannedRun] = []
    for shard in shards:
        for run in shard.plan.runs:
            if run.run_id in owner:
                dupes.append(f"{run.run_id} in {owner[run.run_id]} and {shard.path}")
            owner[run.run_id] = shard.path
            runs.append(run)
    if dupes:
        raise _incomplete(f"{len(dupes)} run(s) in more than one shard:\n  "
                          + "\n  ".join(dupes[:30]))
    digest = shards[0].plan.plan_digest
    if sha256_json(sorted(owner)) != digest:
        have = sorted({s.statement.predicate.shard or "whole" for s in shards})
        counts = {s.plan.shard.count for s in shards if s.plan.shard}
        hint = ""
        if len(counts) == 1:
            n = counts.pop()
            absent = sorted(set(range(1, n + 1)) - {s.plan.shard.index for s in shards
                                                    if s.plan.shard})
            hint = f"; shard(s) {', '.join(f'{i}/{n}' for i in absent)} absent" if absent \
                else ""
        raise _incomplete(f"the shards ({', '.join(have)}) hold {len(owner)} runs, which are "
                          f"not the whole plan {digest[:12]}{hint}; pass --scenario to name "
                          "the missing runs")
    return runs


def _interleave(shards: Sequence[VerifiedBundle]) -> list[PlannedRun]:
    """The whole plan's order back from round-robin shards (groups of one cell each)."""
    ordered = sorted(shards, key=lambda s: s.plan.shard.index if s.plan.shard else 0)
    cell = max(1, len(ordered[0].plan.arms))
    groups = [[s.plan.runs[i:i + cell] for i in range(0, len(s.plan.runs), cell)]
              for s in ordered]
    runs: list[PlannedRun] = []
    for g in range(max(len(gs) for gs in groups)):
        for gs in groups:
            if g < len(gs):
                runs.extend(gs[g])
    return runs


def _checked(archive: SafeZip, entry: FileEntry) -> Iterator[bytes]:
    """The member's bytes, re-hashed while copied (the file may change after verifying)."""
    sha = hashlib.sha256()
    for chunk in archive.iter_chunks(entry.path):
        sha.update(chunk)
        yield chunk
    if sha.hexdigest() != entry.sha256:
        raise VerificationError("tampered", f"{archive.path}: {entry.path} changed after it "
                                "was verified")


def _run_files(archive: SafeZip, manifest: Manifest) -> dict[str, dict[str, Source]]:
    files: dict[str, dict[str, Source]] = {}
    for entry in manifest.files:
        parts = entry.path.split("/", 2)
        if parts[0] != RUNS_DIR or len(parts) < 3 or parts[2] == RECORD:
            continue
        files.setdefault(parts[1], {})[parts[2]] = StreamSource(
            entry.size, lambda e=entry: _checked(archive, e))  # type: ignore[misc]
    return files


def _attempts(archive: SafeZip, shard: VerifiedBundle) -> dict[str, KeptAttempt]:
    """The shard's earlier attempts (attempts/<run id>/<name>/), each with its record (one
    of the shard's records: verified so) and its files, re-hashed while copied."""
    files: dict[str, dict[str, Source]] = {}
    for entry in shard.manifest.files:
        parts = entry.path.split("/", 3)
        if parts[0] != ATTEMPTS_DIR or len(parts) < 4 or parts[3] == RECORD:
            continue
        files.setdefault(f"{parts[1]}/{parts[2]}", {})[parts[3]] = StreamSource(
            entry.size, lambda e=entry: _checked(archive, e))  # type: ignore[misc]
    return {key: KeptAttempt(record=record, files=files.get(key, {}))
            for key, record in (shard.attempts or {}).items()}


def _redactions(shard: VerifiedBundle) -> int:
    """What the shard's signed summary says was redacted from its run's files (0 for
    bundles written before the summary said)."""
    summary = shard.statement.predicate.summary
    value = summary.extra.get("redactions", 0) if summary is not None else 0
    return value if isinstance(value, int) and value >= 0 else 0


def merge_bundles(paths: Sequence[Path], out: Path, key: Ed25519PrivateKey | None = None,
                  pubkey: Ed25519PublicKey | None = None, report: ReportFn | None = None,
                  scrubber: Scrubber | None = None, limits: Limits | None = None,
                  scenario: Scenario | None = None, tasks: Mapping[str, Task] | None = None,
                  thresholds: Mapping[str, Any] | None = None,
                  check: Callable[[Path], object] | None = None,
                  ) -> tuple[Manifest, list[VerifiedBundle]]:
    """Verify every shard, check they make one whole plan, write one bundle to `out`.
    With `scenario` (and its tasks), each shard must be the runs that scenario plans for
    it (as `verify --scenario` checks), and an incomplete set of shards names its missing
    runs. `thresholds`: those the report stage used, signed as the bundle's (default: the
    shards'), so the merged bundle's analysis is its report. `check`: the merged bundle's
    verification, before it takes `out`'s name (see `write_bundle`)."""
    if not paths:
        raise _incomplete("no shard bundles to merge")
    shards = [verify_bundle(p, pubkey, scenario, tasks, limits=limits) for p in paths]
    _check_same_batch(shards, pinned=pubkey is not None)
    try:
        whole_runs = _check_cover(shards)
    except VerificationError as exc:
        if scenario is None or exc.kind != "incomplete":
            raise
        whole = build_plan(scenario, tasks or {}, compare=shards[0].plan.compare)
        found = {run.run_id for s in shards for run in s.plan.runs}
        missing = [f"{r.run_id} ({describe(r)})" for r in whole.runs if r.run_id not in found]
        raise _incomplete(f"{exc}\n{len(missing)} missing run(s):\n  "
                          + "\n  ".join(missing[:30])) from exc
    first = shards[0]
    runs = _interleave(shards) if all(s.plan.shard for s in shards) else whole_runs
    plan = first.plan.model_copy(update={"runs": runs, "shard": None})
    records = [r for s in shards for r in s.records]
    build = Build.this()  # the merged report is this build's, whichever wrote the shards
    environment = first.statement.predicate.environment.model_copy(update={
        "harness_version": build.version, "report_code": build.report_code,
        "numpy_version": build.numpy,
        "cli_versions": dict(sorted({k: v for s in shards for k, v in
                                     s.statement.predicate.environment.cli_versions.items()
                                     }.items()))})
    scrubber = scrubber if scrubber is not None else Scrubber.from_env()
    for shard in shards:  # the merged manifest reports every redaction made on the way
        scrubber.counts.update(shard.manifest.scrubbed)
    with ExitStack() as stack:
        archives = [stack.enter_context(SafeZip(p, limits)) for p in paths]
        run_files: dict[str, dict[str, Source]] = {}
        attempts: dict[str, KeptAttempt] = {}
        for archive, shard in zip(archives, shards, strict=True):
            run_files.update(_run_files(archive, shard.manifest))
            attempts.update(_attempts(archive, shard))
        scenario_entry = next(f for f in first.manifest.files if f.path == SCENARIO)
        scenario_yaml = b"".join(_checked(archives[0], scenario_entry))
        contents = BundleContents(
            scenario_yaml=scenario_yaml, plan=plan, records=records, environment=environment,
            thresholds=thresholds if thresholds is not None
            else first.statement.predicate.thresholds, run_files=run_files,
            attempts=attempts,
            report=report(plan, records, sum(_redactions(s) for s in shards))
            if report else None)
        manifest = write_bundle(contents, out, key, scrubber, check)
    return manifest, shards
