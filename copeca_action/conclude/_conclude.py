"""Conclude a run: results.jsonl → Report → rendered files → signed bundle, verified.

The one place the report, render and bundle stages meet, so the CLI (`run`, `demo`,
`analyze`-less flows) and the GitHub entrypoint conclude a run the same way.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from copeca_action._util.hashing import sha256_file
from copeca_action._util.scrub import count_redactions, scrub_bytes, scrub_tree, shared_scrubber
from copeca_action.bundle import (
    RenderedReport,
    ReportFn,
    VerifiedBundle,
    contents_from_output,
    keyid_of,
    verify_bundle,
    write_bundle,
)
from copeca_action.conclude._report import (
    report_of,
    settings_for,
    signed_summary,
    summary_of,
)
from copeca_action.errors import ConfigError
from copeca_action.plan import RunPlan
from copeca_action.records import STORED, RunRecord, latest_by_run_id, read_records
from copeca_action.render import TrendRun, coverage_curves, report_files, run_points
from copeca_action.report import Report
from copeca_action.scenario import Runner, Scenario, Task

REPORT_FILES = ("report.json", "report.md", "report.html")


@dataclass(frozen=True)
class Concluded:
    """What a concluded run produced; paths are inside the output folder."""

    report: Report
    files: Mapping[str, Path]
    """report.json, report.md, report.html."""
    bundle_path: Path | None
    bundle_sha256: str | None
    keyid: str | None
    """None: the bundle is unsigned (and says so wherever it is shown)."""


SWEEP_SKIP = (".worktrees", ".lock", "keys")
"""Left out of the output folder's final scrub: checkouts (removed), the lock, the demo's
own key folder (its key file must stay a key)."""


def sweep_output(out_dir: Path) -> int:
    """Scrub every file of the output folder in place, once more (model request logs, run
    folders of resumed or reused runs), and count the redactions it holds."""
    scrub_tree(out_dir, shared_scrubber(), skip=SWEEP_SKIP)
    return count_redactions(out_dir, skip=(*SWEEP_SKIP, *REPORT_FILES))


def conclude(out_dir: Path, scenario_path: Path, scenario: Scenario, plan: RunPlan, *,
             runners: Mapping[str, Runner], tasks: Mapping[str, Task] | None = None,
             key: Ed25519PrivateKey | None = None, bundle_path: Path | None = None,
             image_digest: str | None = None, trend: Sequence[TrendRun] = ()) -> Concluded:
    """Build the report from `out_dir/results.jsonl`, write its files beside it, then (with
    `bundle_path`) write the bundle and verify it before anyone else reads it. `trend`: the
    earlier runs of the history, drawn in report.html (the report never reads them)."""
    results = out_dir / "results.jsonl"
    if not results.is_file():
        raise ConfigError(f"{results}: no results to conclude; run the scenario first")
    redactions = sweep_output(out_dir)
    records = read_records(results)
    check_run_records(out_dir, records)
    keyid = keyid_of(key.public_key()) if key is not None else None
    report, files = report_and_files(records, scenario, scenario_path.read_text(),
                                     runners=runners, keyid=keyid, trend=trend,
                                     redactions=redactions)
    written = {}
    for name, data in files.items():
        (out_dir / name).write_bytes(scrub_bytes(data))
        written[name] = out_dir / name
    if bundle_path is None:
        return Concluded(report, written, None, None, keyid)
    contents = contents_from_output(out_dir, scenario_path, plan,
                                    scenario.thresholds.model_dump(mode="json"),
                                    RenderedReport(summary_of(report), files), image_digest)
    write_bundle(contents, bundle_path, key,
                 check=lambda written: check_bundle(written, key, scenario, tasks))
    return Concluded(report, written, bundle_path, sha256_file(bundle_path), keyid)


def check_run_records(out_dir: Path, records: list[RunRecord]) -> None:
    """Each run's final line in results.jsonl must say what its run folder's record.json
    (written with it) says: a line edited by hand (a cost, a grade) is refused, named,
    before a report of it is written or signed. A record.json of another attempt (a run
    folder an earlier invocation left) is not compared."""
    changed = []
    for rid, record in latest_by_run_id(records).items():
        path = out_dir / (record.run_dir or f"runs/{rid}") / "record.json"
        try:
            kept = RunRecord.model_validate_json(path.read_bytes(), context=STORED)
        except (OSError, ValueError):  # no run folder (a foreign file), or unreadable
            continue
        if (kept.run_id, kept.attempt, kept.started_at) != (rid, record.attempt,
                                                            record.started_at):
            continue
        if kept != record:
            fields = sorted(k for k in RunRecord.model_fields
                            if getattr(kept, k) != getattr(record, k))
            changed.append(f"{rid} ({', '.join(fields[:6])})")
    if changed:
        raise ConfigError(
            f"{out_dir / 'results.jsonl'}: {len(changed)} record(s) differ from their run "
            f"folder's record.json: {'; '.join(changed[:5])}"
            + (f"; and {len(changed) - 5} more" if len(changed) > 5 else "")
            + ". One of the two was edited after the run; no report or bundle is made of "
            "it. Restore the line (or the record.json), or delete the run's line and folder "
            "and run it again with --resume")


def check_bundle(path: Path, key: Ed25519PrivateKey | None, scenario: Scenario,
                 tasks: Mapping[str, Task] | None) -> VerifiedBundle:
    """Verify what was just written, with the public half of the signing key; completeness
    against the scenario only when the tasks are known and the bundle is a whole plan."""
    public = key.public_key() if key is not None else None
    return verify_bundle(path, public, scenario if tasks is not None else None, tasks)


def report_and_files(records: list[RunRecord], scenario: Scenario, scenario_yaml: str, *,
                     runners: Mapping[str, Runner], keyid: str | None,
                     trend: Sequence[TrendRun] = (), redactions: int = 0,
                     notes: Sequence[str] = ()) -> tuple[Report, dict[str, bytes]]:
    """The Report and its files (report.json, .md, .html): one recipe for a run and a
    merge."""
    report = report_of(records, settings_for(scenario, runners), scenario.name, redactions,
                       notes)
    files = report_files(report, runs=run_points(records), coverage=coverage_curves(records),
                         keyid=keyid, scenario_yaml=scenario_yaml, trend=trend)
    return report, dict(files)


def merged_report(scenario: Scenario, scenario_yaml: str, *,
                  runners: Mapping[str, Runner] | None = None,
                  key: Ed25519PrivateKey | None = None,
                  made: dict[str, Report] | None = None,
                  notes: Sequence[str] = ()) -> ReportFn:
    """The report hook of `merge`: the same Report and files `conclude` writes, built from the
    merged plan's records, so a merged bundle reads like an unsharded one. With `made`, the
    Report is also left there under "report"."""
    keyid = keyid_of(key.public_key()) if key is not None else None

    def make(plan: RunPlan, records: list[RunRecord], redactions: int) -> RenderedReport:
        report, files = report_and_files(records, scenario, scenario_yaml,
                                         runners=runners or {}, keyid=keyid, notes=notes,
                                         redactions=redactions)
        if made is not None:
            made["report"] = report
        return RenderedReport(signed_summary(report, notes), files)

    return make
