"""Reuse: before a plan runs, the finished runs of a previous, verified bundle whose run id
and fingerprint both match a planned run are copied into the output folder (record and run
folder), marked `reused_from`; resume then skips them. Everything else runs.

The engine knows nothing of bundles: the caller verifies one and hands over a `ReuseOffer`
(the bundle stage reads it, the CLI glues the two).
"""

from __future__ import annotations

import shutil
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from copeca_action.engine._outdir import FINISHED, OutputDir
from copeca_action.errors import CopecaError
from copeca_action.plan import RunPlan
from copeca_action.records import Design, RunRecord, append_records, latest_by_run_id


@dataclass(frozen=True)
class ReuseOffer:
    """Finished records of a verified previous bundle, and a way to get their run files."""

    sha256: str
    """sha256 of the bundle file: what `reused_from` names."""
    name: str
    """The bundle's file name, for messages."""
    records: Mapping[str, RunRecord]
    """Run id → the run's final record in that bundle."""
    extract: Callable[[str, Path], None]
    """Write run `id`'s files (but record.json) into an empty folder; raises CopecaError
    when a file is not what the verified manifest says."""


@dataclass
class ReuseResult:
    """What one adoption did, for the summary line and the tests."""

    bundle: str
    sha256: str
    reused: int = 0
    planned: int = 0
    skipped: Counter[str] = field(default_factory=Counter)
    """Why planned runs were not taken: absent, not final, changed, other scenario."""
    error: str | None = None

    def message(self) -> str:
        why = ", ".join(f"{n} {k}" for k, n in sorted(self.skipped.items()))
        text = (f"reused {self.reused} of {self.planned} planned run(s) from {self.bundle} "
                f"(sha256 {self.sha256[:12]}…)" + (f"; not reused: {why}" if why else ""))
        return text + (f"; reuse stopped: {self.error}" if self.error else "")


def _why_not(old: RunRecord | None, fingerprint: str | None, scenario: str) -> str | None:
    if old is None:
        return "not in the bundle"
    if old.outcome not in FINISHED:
        return "not finished there"
    if old.scenario != scenario:
        return "from another scenario"
    if fingerprint is None or old.fingerprint is None:
        return "without a fingerprint"
    if old.fingerprint != fingerprint:
        return "changed"
    return None


def adopt(out: OutputDir, plan: RunPlan, scenario: str, offer: ReuseOffer,
          fingerprints: Mapping[str, str | None], design: Design | None = None
          ) -> ReuseResult:
    """Copy every matching finished run of `offer` not already finished in `out`. `design`:
    the statistical design of this run, which its reused records then name (they join a
    run judged with it; the fingerprint, which they match, holds no threshold)."""
    result = ReuseResult(bundle=offer.name, sha256=offer.sha256)
    taken: list[RunRecord] = []
    try:
        _adopt_runs(out, plan, scenario, offer, fingerprints, result, taken, design)
    finally:
        # One append for the batch: a run folder without its record (a crash before this)
        # is simply run again, its folder replaced.
        append_records(out.results, taken)
    return result


def _adopt_runs(out: OutputDir, plan: RunPlan, scenario: str, offer: ReuseOffer,
                fingerprints: Mapping[str, str | None], result: ReuseResult,
                taken: list[RunRecord], design: Design | None) -> None:
    finished = {rid for rid, r in latest_by_run_id(out.records()).items()
                if r.outcome in FINISHED}
    for run in plan.runs:
        if run.run_id in finished:
            continue
        result.planned += 1
        old = offer.records.get(run.run_id)
        why = _why_not(old, fingerprints.get(run.run_id), scenario)
        if why is not None or old is None:
            result.skipped[why or "not in the bundle"] += 1
            continue
        if out.holds_spend(run.run_id):  # replacing its folder would drop the output of
            # an agent that ran here (one a killed harness left unrecorded): it runs here
            result.skipped["an agent of it already ran in this folder"] += 1
            continue
        dest = out.run_dir(run.run_id)
        # Written aside and moved into place with its record.json: a harness killed
        # mid-copy leaves no run folder whose transcript would read as an agent it lost.
        partial = dest.with_name(dest.name + ".partial")
        shutil.rmtree(partial, ignore_errors=True)
        partial.mkdir(parents=True)
        try:
            offer.extract(run.run_id, partial)
        except (CopecaError, OSError) as exc:
            shutil.rmtree(partial, ignore_errors=True)
            result.error = str(exc)
            break
        record = old.model_copy(update={"reused_from": offer.sha256,
                                         "run_dir": f"runs/{run.run_id}",
                                         **({"design": design} if design is not None else {})})
        (partial / "record.json").write_text(record.model_dump_json(indent=2) + "\n")
        if dest.exists():
            shutil.rmtree(dest)
        partial.rename(dest)
        taken.append(record)
        result.reused += 1
