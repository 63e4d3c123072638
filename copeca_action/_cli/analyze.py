"""`copeca-action analyze RESULTS.jsonl|OUTPUT_DIR|BUNDLE.copeca [--scenario S]
[--format md|json|html] [--gate]`: by default the run's own scenario (thresholds, seed,
resamples), so the report reproduces the run's."""

from __future__ import annotations

import argparse
import dataclasses
import functools
import gc
import sys
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from copeca_action.errors import ConfigError
from copeca_action.report._methods import INTERVAL_METHODS

if TYPE_CHECKING:
    from pydantic import TypeAdapter

    from copeca_action.records import DesignKey, Format
    from copeca_action.render import CoverageCurve, RunPoint
    from copeca_action.report import RecordTable, Report, Settings
    from copeca_action.scenario import Scenario

# Each path imports what it uses when it runs: `analyze results.jsonl --format md` does not
# load the bundle, signing, HTML or conclude code (start-up is most of the time on small
# files).

GATE_EXIT = 1
"""Exit code when --gate fails."""


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("analyze", help="cost per correct, intervals and verdict from results",
                       description="Analyze a results.jsonl (copeca-action or copeca format).")
    p.add_argument("results", type=Path, help="results.jsonl, a run's output folder, or a "
                   ".copeca bundle (verified first)")
    p.add_argument("--scenario", type=Path, help="scenario YAML: thresholds, seed, resamples, "
                   "adaptive (default: the scenario.yaml the run wrote beside its results, so "
                   "the report is the run's own; else the built-in thresholds, seed 0). Records "
                   "that name another design (adaptive sampling, thresholds) give `invalid`")
    p.add_argument("--format", choices=["md", "json", "html"], default="md",
                   help="html: one self-contained page with charts (write it with --out)")
    p.add_argument("--report", "--out", dest="out", type=Path, metavar="FILE",
                   help="write the report to this file instead of stdout (--out, the old "
                   "spelling, is kept: elsewhere --out is a folder)")
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
    p.set_defaults(func=run, fast_exit=True)


def run(args: argparse.Namespace) -> int:
    from copeca_action._util.blas import pin_before_load

    pin_before_load()  # analyze starts no program, so nothing else inherits it
    gc.disable()  # a short life that makes no cyclic garbage worth collecting: collections
    # walked the 100k records' columns again and again (0.05 s), and none frees anything
    if _is_bundle(args.results):
        return _run_bundle(args)
    if args.results.is_dir():  # an output folder: its results and its own scenario
        args.results = args.results / "results.jsonl"
    beside = False
    if args.scenario is None and (args.results.parent / "scenario.yaml").is_file():
        # the scenario the run wrote beside its results: its thresholds, seed and resamples,
        # so the report is the run's own
        args.scenario = args.results.parent / "scenario.yaml"
        beside = True
    scenario = None
    if args.scenario:
        from copeca_action.scenario import load_scenario

        scenario = load_scenario(args.scenario)
    return _analyze(args, scenario, beside)


def _is_bundle(path: Path) -> bool:
    """A .copeca bundle, to be verified before anything in it is read: a file named
    `*.copeca`, or one that starts as a zip does (a results file starts with `{`). So an
    empty, truncated or prefixed bundle is named as what it is, not read as results."""
    if not path.is_file():  # a folder, a pipe (opening one waits for a writer), nothing
        return False
    if path.suffix == ".copeca":
        return True
    try:
        with path.open("rb") as handle:
            return handle.read(2) == b"PK"
    except OSError:  # unreadable: `_analyze` says so
        return False


def _run_bundle(args: argparse.Namespace) -> int:
    """A .copeca bundle: verified (any signature), with its report recomputed from its
    records and compared with what it publishes (a bundle whose report.json, report.md or
    signed summary is not that report fails, exit 15; one another build made is printed
    as this build recomputes it, with a note naming both builds). The report printed is
    that one: the records with the scenario they ran (its scenario.yaml and the signed
    thresholds) and the notes the writer added, so `analyze` of a bundle is its
    report.json; with --scenario, --seed, --resamples or --method, the same recipe with
    those settings."""
    from copeca_action._util.hashing import sha256_file
    from copeca_action.bundle import verify_bundle
    from copeca_action.conclude import Recompute, bundle_report, recompute, shard_scenario
    from copeca_action.scenario import load_scenario

    check = Recompute()
    bundle = verify_bundle(args.results, report=check, other_build_fails=False)
    which = shard_scenario(args.results, verified=bundle)
    if args.bundle_sha256 is None:
        args.bundle_sha256 = sha256_file(args.results)
    if args.signed_by is None:
        args.signed_by = bundle.keyid
    scenario_yaml = which.yaml if which is not None else None
    own = args.scenario is None and args.seed is None and args.resamples is None and \
        args.method is None
    report = check.report if own else None
    if report is None and own and which is not None:  # not compared: no report to compare
        report = recompute(bundle.statement, bundle.records, which.yaml.encode())[0]
    if bundle.report_checked.startswith("not confirmed"):
        from copeca_action._util.text import log_safe

        print(log_safe(f"note: {args.results}: its report was {bundle.report_checked}"),
              file=sys.stderr)
    why = None
    if report is None:
        scenario = load_scenario(args.scenario) if args.scenario else (
            which.scenario if which is not None else None)
        chosen = settings(args, scenario, {r.runner for r in bundle.records if r.runner})
        if args.scenario:
            from copeca_action.records import last_design

            scenario_yaml = args.scenario.read_text()
            # the bundle's own scenario is the one it decided with (`verify` checks its
            # records name it); another one given must be of the records' design
            why = design_mismatch(last_design([r.design for r in bundle.records]), scenario,
                                  f"--scenario {args.scenario}")
            chosen = dataclasses.replace(chosen, design_mismatch=why)
        report = bundle_report(bundle.statement, bundle.records, chosen,
                               scenario.name if scenario is not None else "")
    points: list[RunPoint] = []
    curves: list[CoverageCurve] = []
    if args.format == "html":
        from copeca_action.render import coverage_curves, run_points

        points = run_points(bundle.records)
        curves = read_coverage(args.coverage) or coverage_curves(bundle.records)
    return _emit(args, report, points, curves, scenario_yaml, why)


def _analyze(args: argparse.Namespace, scenario: Scenario | None, beside: bool = False) -> int:
    if args.results.exists() and not args.results.is_file():
        raise ConfigError("not a regular file (a pipe or a device): analyze may read the "
                          "results twice, so write them to a file first", args.results)
    if not args.results.is_file():
        raise ConfigError("no such results file (expected a .jsonl written by `copeca-action "
                          "run` or `copeca run`, a run's output folder, or a .copeca bundle)",
                          args.results)
    table, fmt = ((None, None) if args.format == "html"
                  else fast_table(args.results, scenario, lambda: _load(args.format)))
    from copeca_action.report import build_report, table_from_rows

    points: list[RunPoint] = []
    curves: list[CoverageCurve] = []
    if table is None or fmt is None:
        from copeca_action.records import read_rows

        notes: list[str] = []
        rows, fmt = read_rows(args.results, notes)
        if args.format == "html":
            from copeca_action.render import coverage_curves, run_points

            points = run_points(rows)
            curves = read_coverage(args.coverage) or coverage_curves(rows)
        table = table_from_rows(rows, scenario.name if scenario else "", notes,
                                source=str(args.results))
        del rows  # the columns hold what is needed; free the rows before the bootstrap
    _give_back_freed_memory()  # before the report forks its power child: less to share
    carried = {name for name, _ in table.pricing}
    chosen = settings(args, scenario, [n for n in table.runner.names if n not in carried])
    why = design_mismatch(table.design, scenario,
                          "the scenario.yaml beside the results" if beside
                          else f"--scenario {args.scenario}")
    if why is not None:
        chosen = dataclasses.replace(chosen, design_mismatch=why)
    if args.format != "json":  # only report.json holds the minimum detectable effects
        chosen = dataclasses.replace(chosen, power_experiments=0)  # (`Comparison.power`)
    report = build_report(table, chosen, source_format=fmt)
    if scenario is None and fmt == "copeca-action" and report.records and why is None:
        if table.design is None:
            # records of an older copeca-action do not say how the run was designed: a copy
            # of an adaptive run's results judged here at the full alpha would drop the
            # alpha its looks spent (newer records name their design: `design_mismatch`)
            print(f"copeca-action: {args.results}: no scenario.yaml beside it and no "
                  "--scenario: judged with the default settings (one look at alpha 0.05, the "
                  "default thresholds); a run with adaptive sampling or its own thresholds is "
                  "judged as it was only with --scenario (or its output folder)",
                  file=sys.stderr)
        else:  # the records' design is the default one; the bootstrap's seed is not in it
            print(f"copeca-action: {args.results}: no scenario.yaml beside it and no "
                  "--scenario: the records name the default design (the built-in thresholds, "
                  f"no adaptive sampling); the bootstrap ran with seed {chosen.seed} and "
                  f"{chosen.resamples:,} resamples, and the run's own report with its "
                  "scenario's, so their intervals may differ slightly: pass --scenario (or "
                  "the output folder) for its exact figures",
                  file=sys.stderr)
    return _emit(args, report, points, curves,
                 args.scenario.read_text() if args.scenario else None, why)


def design_mismatch(records: DesignKey | None, scenario: Scenario | None, where: str
                    ) -> str | None:
    """Why the report cannot judge these records as their run decided, or None: the
    records name a design (`records.Design`) other than the one `scenario` gives (`where`
    names it), or, with no scenario, other than the defaults (adaptive sampling, or
    thresholds of its own). Records that name no design (older ones, copeca's) are judged
    as before."""
    if records is None:
        return None
    from copeca_action.records import design_of

    how = ("pass the scenario the run used (--scenario FILE: the run's output folder keeps "
           "it as scenario.yaml), or analyze the run's output folder or its .copeca bundle")
    if scenario is None:
        if records.ordinary:
            return None
        return (f"these records were run with {records.described()} (design "
                f"{records.text()}) and no scenario was given: judged with the defaults (one "
                "look at alpha 0.05, the built-in thresholds), the verdict would not be the "
                f"one the run decided; {how}")
    mine = design_of(scenario.thresholds, scenario.adaptive)
    if mine == records:
        return None
    differ = [part for part, a, b in (("thresholds", mine.thresholds, records.thresholds),
                                      ("adaptive sampling", mine.adaptive, records.adaptive))
              if a != b]
    return (f"{where} is not the design these records were run under: its "
            f"{' and '.join(differ)} differ (the records: {records.described()}, "
            f"{records.text()}; the scenario: {mine.described()}, {mine.text()}), so its "
            f"verdict would not be the one the run decided; {how}")


def _emit(args: argparse.Namespace, report: Report, points: list[RunPoint],
          curves: list[CoverageCurve], scenario_yaml: str | None,
          undesigned: str | None = None) -> int:
    """The report in the chosen format, scrubbed, to --report or stdout; the gate's exit
    code. `undesigned`: why the report is not judged with the records' design; the gate
    then fails whatever --fail-on says (it cannot be judged)."""
    if args.format == "html":
        from copeca_action import __version__
        from copeca_action.render import Verification, render_html

        text = render_html(report, runs=points, coverage=curves,
                           verification=Verification(bundle_sha256=args.bundle_sha256,
                                                     keyid=args.signed_by),
                           scenario_yaml=scenario_yaml,
                           environment={"rendered by": f"copeca-action {__version__}"})
    elif args.format == "json":
        from copeca_action.render import render_json

        text = render_json(report)
    else:
        from copeca_action.render import render_markdown

        text = render_markdown(report, tasks=not args.no_tasks)
    from copeca_action._util.scrub import scrub_bytes

    text = scrub_bytes(text.encode()).decode()  # results and scenario from anywhere
    if args.out:
        args.out.write_text(text)
    else:
        sys.stdout.write(text)
    if args.gate and undesigned is not None and report.verdict == "invalid":
        print("copeca-action: gate failed: verdict invalid: the gate cannot be judged without "
              "the design these records were run under (see the report's first reason)",
              file=sys.stderr)
        return GATE_EXIT
    return gate(report, args.fail_on) if args.gate else 0


def _give_back_freed_memory() -> None:
    """The C heap's free pages returned to the system (glibc's malloc_trim): the read's
    lists and buffers, freed, leave about 26 MB of a 100k-record read resident otherwise,
    and the report's child and this process would hold them at their peak together.
    Nothing where the C library has no malloc_trim (musl, macOS)."""
    if sys.platform != "linux":
        return
    import ctypes

    try:
        trim = ctypes.CDLL(None).malloc_trim
    except AttributeError:
        return
    trim(0)


def fast_table(path: Path, scenario: Scenario | None,
               meanwhile: Callable[[], object] | None = None
               ) -> tuple[RecordTable | None, Format | None]:
    """The table from the typed columnar reader (`read_coded`), or (None, None) when it
    is not sure: then `read_rows` reads the file, raising the exact error (file, line,
    field) or accepting what only its lax rules accept; the report is the same either way.
    `meanwhile` runs while the reader's helper process decodes part of a large file."""
    from copeca_action.records import read_coded

    read = read_coded(path, meanwhile)
    if read is None:
        return None, None
    from copeca_action.report import table_from_coded

    parts, fmt, notes = read
    return table_from_coded(parts, scenario.name if scenario else "", notes), fmt


def _load(fmt: str) -> None:
    """The modules the report and its rendering need, imported while the results are read
    (see `fast_table`)."""
    import copeca_action.report._build
    import copeca_action.report._table

    if fmt == "json":
        import copeca_action.render._json
    else:
        import copeca_action.render._markdown  # noqa: F401


def read_coverage(path: Path | None) -> list[CoverageCurve]:
    if path is None:
        return []
    from pydantic import ValidationError

    try:
        return _curves().validate_json(path.read_bytes())
    except OSError as exc:
        raise ConfigError(f"--coverage: cannot read: {exc.strerror}", path) from exc
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise ConfigError(f"--coverage: {where or 'top level'}: {first['msg']} (expected a "
                          "JSON list of {arm, coverage_by_step, runs, granularity})",
                          path) from exc


@functools.cache
def _curves() -> TypeAdapter[list[CoverageCurve]]:
    from pydantic import TypeAdapter

    from copeca_action.render import CoverageCurve

    return TypeAdapter(list[CoverageCurve])


def settings(args: argparse.Namespace, scenario: Scenario | None,
             runners: Iterable[str]) -> Settings:
    """The scenario's settings (else the defaults) with the flags' over them, and the
    bundled price tables' dates of `runners` (those whose records carry none)."""
    from copeca_action._util.pricing import pricing_dates
    from copeca_action.report import Settings

    base = Settings.from_scenario(scenario) if scenario else Settings()
    overrides: dict[str, object] = {"pricing_updated": pricing_dates(runners)}
    if args.seed is not None:
        if args.seed < 0:
            raise ConfigError(f"{args.seed}: expected a whole number ≥ 0", file="--seed")
        overrides["seed"] = args.seed
    if args.resamples is not None:
        if not 100 <= args.resamples <= 1_000_000:
            raise ConfigError(f"{args.resamples}: expected 100 to 1,000,000",
                              file="--resamples")
        overrides["resamples"] = args.resamples
    if args.method:
        overrides["method"] = args.method
    return dataclasses.replace(base, **overrides)  # type: ignore[arg-type]


def gate(report: Report, fail_on: str) -> int:
    """GATE_EXIT when the verdict fails; with several tools, stderr names those that fail."""
    failing = {"regression"} if fail_on == "regression" else {"regression", "inconclusive",
                                                                "invalid"}
    if report.verdict not in failing:
        return 0
    head = report.headline_comparison
    named = [f"{c.name}: {c.verdict}" for c in report.comparisons
             if report.multiplicity is not None and head is not None
             and c.kind == head.kind and c.verdict in failing]
    print(f"copeca-action: gate failed: verdict {report.verdict} (fail-on {fail_on})"
          + (": " + ", ".join(named) if named else ""), file=sys.stderr)
    return GATE_EXIT
