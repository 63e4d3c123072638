"""The report a run's records give, and its signed headline: one recipe for `run`, `merge`
and for checking a bundle (`verify`, `analyze` of a bundle recompute it from the bundle's
own records, scenario and signed statement, and compare it with what the bundle publishes).

Kept apart from `_conclude` (which writes bundles and renders the HTML page) so a verifier
imports only the report and its JSON and markdown renderers.
"""

from __future__ import annotations

import dataclasses
import math
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from copeca_action._util.yamlio import parse_model, parse_yaml
from copeca_action.bundle import RenderedReport, Statement, Summary
from copeca_action.bundle._model import SCENARIO
from copeca_action.records import AGENT_FILES_VISIBLE, RunRecord, latest_by_run_id
from copeca_action.report import Report, Settings, build_report, table_from_records
from copeca_action.scenario import Runner, Scenario

RECOMPUTED = ("report.json", "report.md")
"""The report files a bundle's records, scenario and statement determine (report.html also
draws the history's trend, which the bundle does not hold)."""


def _finite(value: float | None) -> float | None:
    return None if value is None or not math.isfinite(value) else value


def summary_of(report: Report) -> Summary:
    """The signed headline: verdict, delta with its interval, control delta, cpc per arm;
    with several tool arms, the deciding comparison (`comparison`) and the alpha split
    (`multiplicity`, as report.json has it: its `level` is 1 − the split alpha)."""
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
    if report.multiplicity is not None:  # several tools: the alpha split the level carries
        extra["multiplicity"] = report.multiplicity.model_dump(mode="json")
    return Summary(verdict=report.verdict, delta=_finite(delta.estimate), delta_ci=ci,
                   control_delta=_finite(head.control_delta.estimate)
                   if head.control_delta else None,
                   cpc={a.arm: _finite(a.cpc_usd) for a in report.arms}, extra=extra)


def signed_summary(report: Report, notes: Sequence[str] = ()) -> Summary:
    """`summary_of`, with a merge's notes (signed with the headline, so no one can strip
    them)."""
    summary = summary_of(report)
    if notes:
        summary = summary.model_copy(update={"extra": {**summary.extra,
                                                       "merge_notes": list(notes)}})
    return summary


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


def key_note(records: Iterable[RunRecord]) -> str | None:
    """Runs whose agent held the harness's real model key (`COPECA_KEY_PROXY=off`, or a
    runner the key forwarder cannot stand in front of): say so, it is the reader's risk."""
    final = list(latest_by_run_id(records).values())
    held = [r for r in final if "key_in_agent_env" in r.flags]
    if not held:
        return None
    return (f"{len(held)} of {len(final)} agent run(s) held the real model key in their "
            "environment (the vendor's own API, where the key forwarder stands in front "
            "only with COPECA_KEY_PROXY=on; COPECA_KEY_PROXY=off; or a runner it cannot "
            "point at): anything they started could read it, and a copy in a form the scrubber "
            "does not decode (compressed, encrypted) would be published with the run's "
            "files (docs/security.md).")


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
                                   key_note(records), redaction_note(redactions))
                       if n is not None)]
    if notes:
        table = dataclasses.replace(table, extra_warnings=(*table.extra_warnings, *notes))
    report = build_report(table, settings, scenario=scenario)
    return report.model_copy(update={"redactions": redactions}) if redactions else report


def settings_for(scenario: Scenario, runners: Mapping[str, Runner]) -> Settings:
    return Settings.from_scenario(
        scenario, pricing_updated={name: r.pricing_updated for name, r in runners.items()})


def bundled_scenario(yaml: str, thresholds: Mapping[str, Any]) -> Scenario:
    """A bundle's scenario.yaml as its runs used it: with `thresholds` (the ones its signed
    statement says they ran with, which carry any action-input overrides) over the YAML's.
    Raises ConfigError when the YAML is not a scenario."""
    scenario = parse_model(parse_yaml(yaml, Path(SCENARIO)), Scenario)
    merged = {**scenario.thresholds.model_dump(), **thresholds}
    return Scenario.model_validate({**scenario.model_dump(), "thresholds": merged})


def _signed_inputs(statement: Statement) -> tuple[int, list[str]]:
    """What a bundle's writer took from outside its records, as its signed summary carries
    it: the secret values redacted from the run's files, and a merge's notes."""
    summary = statement.predicate.summary
    extra = summary.extra if summary is not None else {}
    redactions = extra.get("redactions", 0)
    notes = extra.get("merge_notes", [])
    if not isinstance(redactions, int) or redactions < 0:
        redactions = 0
    if not isinstance(notes, list) or not all(isinstance(n, str) for n in notes):
        notes = []
    return redactions, notes


def bundle_report(statement: Statement, records: list[RunRecord], settings: Settings,
                  scenario: str) -> Report:
    """`report_of` a bundle's records, with the inputs its signed summary carries (the
    redactions, a merge's notes)."""
    redactions, notes = _signed_inputs(statement)
    return report_of(records, settings, scenario, redactions, notes)


def rendered_report(records: list[RunRecord], scenario: Scenario, *, redactions: int = 0,
                    notes: Sequence[str] = ()) -> tuple[Report, RenderedReport]:
    """The report of these records with this scenario's settings (the prices' dates are
    the records' own, else the bundled runners'), and what a bundle publishes of it: the
    `RECOMPUTED` files and the signed summary."""
    from copeca_action._util.pricing import pricing_dates
    from copeca_action.render._json import render_json
    from copeca_action.render._markdown import render_markdown

    runners = {r.runner for r in records if r.runner}
    settings = Settings.from_scenario(scenario, pricing_updated=pricing_dates(runners))
    report = report_of(records, settings, scenario.name, redactions, notes)
    files = {"report.json": render_json(report).encode(),
             "report.md": render_markdown(report).encode()}
    return report, RenderedReport(signed_summary(report, notes), files)


def recompute(statement: Statement, records: list[RunRecord], scenario_yaml: bytes
              ) -> tuple[Report, RenderedReport]:
    """The report a bundle's writer made of these records (`rendered_report`), from what
    the bundle holds: its scenario.yaml with the seed and thresholds its statement signs, and
    the inputs its signed summary carries (the redactions, a merge's notes). Deterministic:
    the same bytes on any machine (one BLAS thread, seeded resamples). Raises ConfigError (or
    ValueError) when scenario.yaml is not a scenario."""
    predicate = statement.predicate
    scenario = bundled_scenario(scenario_yaml.decode(), predicate.thresholds).model_copy(
        update={"seed": predicate.seed})  # the plan's, which `run` took from the scenario
    redactions, notes = _signed_inputs(statement)
    return rendered_report(records, scenario, redactions=redactions, notes=notes)


class Recompute:
    """`recompute` as `verify_bundle`'s report hook, keeping the Report it made (so
    `analyze` of a bundle prints the report its verification compared)."""

    def __init__(self) -> None:
        self.report: Report | None = None

    def __call__(self, statement: Statement, records: list[RunRecord],
                 scenario_yaml: bytes) -> RenderedReport:
        self.report, rendered = recompute(statement, records, scenario_yaml)
        return rendered
