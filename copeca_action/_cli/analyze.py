"""`copeca-action analyze RESULTS.jsonl [--scenario S] [--format md|json|html] [--gate]`."""

from __future__ import annotations

import argparse
import dataclasses
import datetime as dt
import sys
from pathlib import Path

from pydantic import TypeAdapter, ValidationError

from copeca_action import __version__
from copeca_action._util.paths import runners_dir
from copeca_action.errors import ConfigError, CopecaError
from copeca_action.records import read_rows
from copeca_action.render import (
    CoverageCurve,
    Verification,
    coverage_curves,
    render_html,
    render_json,
    render_markdown,
    run_points,
)
from copeca_action.report import (
    INTERVAL_METHODS,
    RecordTable,
    Report,
    Settings,
    alpha_for,
    build_report,
    table_from_rows,
)
from copeca_action.scenario import Scenario, load_runner, load_scenario

GATE_EXIT = 1
"""Exit code when --gate fails."""


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("analyze", help="cost per correct, intervals and verdict from results",
                       description="Analyze a results.jsonl (copeca-action or copeca format).")
    p.add_argument("results", type=Path, help="results.jsonl")
    p.add_argument("--scenario", type=Path, help="scenario YAML: thresholds, seed, resamples, "
                   "adaptive (default: the built-in thresholds, seed 0)")
    p.add_argument("--format", choices=["md", "json", "html"], default="md",
                   help="html: one self-contained page with charts (write it with --out)")
    p.add_argument("--out", type=Path, help="write the report here instead of stdout")
    p.add_argument("--gate", action="store_true", help=f"exit {GATE_EXIT} when the verdict "
                   "fails the gate (see --fail-on)")
    p.add_argument("--fail-on", choices=["regression", "inconclusive"], default="regression",
                   help="regression: fail on regression only; inconclusive: also on "
                   "inconclusive and invalid")
    p.add_argument("--seed", type=int, help="bootstrap seed (overrides the scenario)")
    p.add_argument("--resamples", type=int, help="bootstrap resamples (overrides the scenario)")
    p.add_argument("--method", choices=INTERVAL_METHODS, help="interval method (default: the "
                   "one the simulation chose)")
    p.add_argument("--no-tasks", action="store_true", help="markdown: leave out per-task lines")
    p.add_argument("--coverage", type=Path, help="html: JSON list of {arm, coverage_by_step, "
                   "runs, granularity} (mean cumulative gold-context coverage by step; default: "
                   "from the records' retrieval metrics, when they carry them)")
    p.add_argument("--bundle-sha256", help="html: the bundle's sha256, shown for verification")
    p.add_argument("--signed-by", metavar="KEYID", help="html: the key id that signed the "
                   "bundle (default: shown as unsigned)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    if not args.results.is_file():
        raise ConfigError("no such results file (expected a .jsonl written by `copeca-action "
                          "run` or `copeca run`)", args.results)
    scenario = load_scenario(args.scenario) if args.scenario else None
    notes: list[str] = []
    rows, fmt = read_rows(args.results, notes)
    points = run_points(rows) if args.format == "html" else []
    curves = (read_coverage(args.coverage) or coverage_curves(rows)
              if args.format == "html" else [])
    table = table_from_rows(rows, scenario.name if scenario else "", notes)
    del rows  # the columns hold what is needed; free the rows before the bootstrap
    report = build_report(table, settings(args, scenario, table), source_format=fmt)
    if args.format == "html":
        text = render_html(report, runs=points, coverage=curves,
                           verification=Verification(bundle_sha256=args.bundle_sha256,
                                                     keyid=args.signed_by),
                           scenario_yaml=args.scenario.read_text() if args.scenario else None,
                           environment={"rendered by": f"copeca-action {__version__}"})
    else:
        text = render_json(report) if args.format == "json" else render_markdown(
            report, tasks=not args.no_tasks)
    if args.out:
        args.out.write_text(text)
    else:
        sys.stdout.write(text)
    return gate(report, args.fail_on) if args.gate else 0


def read_coverage(path: Path | None) -> list[CoverageCurve]:
    if path is None:
        return []
    try:
        return _CURVES.validate_json(path.read_bytes())
    except OSError as exc:
        raise ConfigError(f"--coverage: cannot read: {exc.strerror}", path) from exc
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise ConfigError(f"--coverage: {where or 'top level'}: {first['msg']} (expected a "
                          "JSON list of {arm, coverage_by_step, runs, granularity})",
                          path) from exc


_CURVES: TypeAdapter[list[CoverageCurve]] = TypeAdapter(list[CoverageCurve])


def settings(args: argparse.Namespace, scenario: Scenario | None,
             table: RecordTable) -> Settings:
    base = Settings.from_scenario(scenario) if scenario else Settings()
    overrides: dict[str, object] = {"alpha": alpha_for(scenario, table),
                                    "pricing_updated": pricing_dates()}
    if args.seed is not None:
        overrides["seed"] = args.seed
    if args.resamples is not None:
        if args.resamples < 100:
            raise ConfigError("--resamples: expected at least 100")
        overrides["resamples"] = args.resamples
    if args.method:
        overrides["method"] = args.method
    return dataclasses.replace(base, **overrides)  # type: ignore[arg-type]


def pricing_dates() -> dict[str, dt.date]:
    """When each bundled runner's prices were last checked (for the stale-pricing warning)."""
    out: dict[str, dt.date] = {}
    for path in sorted(runners_dir().glob("*.yaml")):
        try:
            runner = load_runner(path)
        except CopecaError:
            continue
        out[runner.name] = runner.pricing_updated
    return out


def gate(report: Report, fail_on: str) -> int:
    failing = {"regression"} if fail_on == "regression" else {"regression", "inconclusive",
                                                                "invalid"}
    return GATE_EXIT if report.verdict in failing else 0
