"""Conclude a run: results.jsonl → Report → rendered files → signed bundle, verified.

The one place the report, render and bundle stages meet, so the CLI (`run`, `demo`,
`analyze`-less flows) and the GitHub entrypoint conclude a run the same way.
"""

from __future__ import annotations

import dataclasses
import math
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from copeca_action._util.hashing import sha256_file
from copeca_action._util.scrub import count_redactions, scrub_bytes, scrub_tree, shared_scrubber
from copeca_action.agent._process import AGENT_FILES_VISIBLE
from copeca_action.bundle import (
    RenderedReport,
    ReportFn,
    Summary,
    VerifiedBundle,
    contents_from_output,
    keyid_of,
    verify_bundle,
    write_bundle,
)
from copeca_action.errors import ConfigError
from copeca_action.plan import RunPlan
from copeca_action.records import RunRecord, latest_by_run_id, read_records
from copeca_action.render import TrendRun, coverage_curves, report_files, run_points
from copeca_action.report import Report, Settings, build_report, table_from_records
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


def _finite(value: float | None) -> float | None:
    return None if value is None or not math.isfinite(value) else value


def summary_of(report: Report) -> Summary:
    """The signed headline: verdict, delta with its interval, control delta, cpc per arm."""
    head = report.headline_comparison
    extra: dict[str, object] = {"records": report.records, "verdict_reasons":
                                report.verdict_reasons}
    if report.redactions:
        extra["redactions"] = report.redactions
    if report.spend is not None:
        extra["spend_total"] = report.spend.total_usd
    if head is None:
        return Summary(verdict=report.verdict, cpc={a.arm: _finite(a.cpc_usd)
                                                    for a in report.arms}, extra=extra)
    delta = head.delta
    ci = (delta.low, delta.high) if delta.low is not None and delta.high is not None else None
    extra.update(comparison=head.name, level=delta.level,
                 spend={a.arm: a.spend_usd for a in report.arms},
                 adoption={a.arm: a.adoption_rate for a in report.arms})
    if head.overall is not None:  # the delta's own population: cpc_tool / cpc_base − 1 = delta
        extra["overall_cpc"] = {head.tool: _finite(head.overall.cpc_tool),
                                head.base: _finite(head.overall.cpc_base)}
    if report.look is not None:
        extra["look"] = report.look.model_dump(mode="json")
    return Summary(verdict=report.verdict, delta=_finite(delta.estimate), delta_ci=ci,
                   control_delta=_finite(head.control_delta.estimate)
                   if head.control_delta else None,
                   cpc={a.arm: _finite(a.cpc_usd) for a in report.arms}, extra=extra)


def reuse_note(records: Iterable[RunRecord]) -> str | None:
    """How many runs were copied from earlier bundles by `reuse`, and from which (by the
    bundle file's sha256); None when every run was measured here."""
    final = list(latest_by_run_id(records).values())
    sources = Counter(r.reused_from for r in final if r.reused_from)
    if not sources:
        return None
    parts = "; ".join(f"{n} from the bundle with sha256 {sha}"
                      for sha, n in sorted(sources.items()))
    return (f"{sum(sources.values())} of {len(final)} run(s) reused, not run again (same run "
            f"id and fingerprint): {parts}. Their spend is what they cost when measured.")


def isolation_note(records: Iterable[RunRecord]) -> str | None:
    """Test gradings run the agent's code; say so when the host could not confine them: no
    network isolation, or no file-system isolation (under `unshare` the code could read the
    harness's keys and change other runs). Agents that shared the harness's pid namespace,
    or whose view hid none of the harness's files, are counted too."""
    final = list(latest_by_run_id(records).values())
    graded = [r for r in final if r.grading.get("kind") == "test" and "isolation" in r.grading]
    open_net = [r for r in graded if "netns" not in (r.grading.get("isolation") or [])]
    open_fs = [r for r in graded if "ro-host" not in (r.grading.get("isolation") or [])]
    open_agents = [r for r in final if "agent_not_isolated" in r.flags]
    open_views = [r for r in final if AGENT_FILES_VISIBLE in r.flags]
    notes = []
    if open_net:
        notes.append(f"{len(open_net)} of {len(graded)} test grading(s) ran the agent's code "
                     "without network isolation (neither bubblewrap nor unshare works on "
                     "this host)")
    if open_fs:
        notes.append(f"{len(open_fs)} of {len(graded)} test grading(s) ran the agent's code "
                     "without file-system isolation (no working bubblewrap): it could read "
                     "the harness's files and write outside its worktree")
    if open_agents:
        notes.append(f"{len(open_agents)} of {len(final)} agent run(s) shared the harness's "
                     "pid namespace (no bubblewrap or unshare): they could read its "
                     "environment through /proc")
    if open_views:
        notes.append(f"{len(open_views)} of {len(final)} agent run(s) could read the "
                     "harness's files (no working bubblewrap; `unshare` cannot hide them): "
                     "the output folder with the other runs' transcripts and records, the "
                     "harness user's home with its credentials, and the signing-key file")
    if not notes:
        return None
    return "; ".join(notes) + ". The grades stand, but that code was not confined."


def redaction_note(redactions: int) -> str | None:
    if not redactions:
        return None
    return (f"{redactions} secret value(s) were redacted from the files this run left (an "
            "agent or a test printed a key or token; counts only, see docs/security.md).")


def report_of(records: list[RunRecord], settings: Settings, scenario: str,
              redactions: int = 0, notes: Sequence[str] = ()) -> Report:
    """build_report, with the reuse, isolation and redaction notes (and `notes`) among its
    warnings."""
    table = table_from_records(records)
    notes = [*notes, *(n for n in (reuse_note(records), isolation_note(records),
                                   redaction_note(redactions)) if n is not None)]
    if notes:
        table = dataclasses.replace(table, extra_warnings=(*table.extra_warnings, *notes))
    report = build_report(table, settings, scenario=scenario)
    return report.model_copy(update={"redactions": redactions}) if redactions else report


SWEEP_SKIP = (".worktrees", ".lock", "keys")
"""Left out of the output folder's final scrub: checkouts (removed), the lock, the demo's
own key folder (its key file must stay a key)."""


def sweep_output(out_dir: Path) -> int:
    """Scrub every file of the output folder in place, once more (model request logs, run
    folders of resumed or reused runs), and count the redactions it holds."""
    scrub_tree(out_dir, shared_scrubber(), skip=SWEEP_SKIP)
    return count_redactions(out_dir, skip=(*SWEEP_SKIP, *REPORT_FILES))


def settings_for(scenario: Scenario, runners: Mapping[str, Runner]) -> Settings:
    return Settings.from_scenario(
        scenario, pricing_updated={name: r.pricing_updated for name, r in runners.items()})


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
        summary = summary_of(report)
        if notes:  # signed with the headline, so no one can strip it
            summary = summary.model_copy(update={"extra": {**summary.extra,
                                                           "merge_notes": list(notes)}})
        return RenderedReport(summary, files)

    return make
