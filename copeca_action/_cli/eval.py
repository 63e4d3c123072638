"""`copeca-action eval -n NAME …`: evaluate an experiment's patches, CooperBench-style."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from copeca_action.errors import ConfigError
from copeca_action.evaluate import (
    ApplyOptions,
    discover_runs,
    evaluate_experiment,
    sandbox_names,
    summarize_experiment,
)
from copeca_action.evaluate._apply import FUZZ
from copeca_action.evaluate._logs import Outcome, write_summary
from copeca_action.evaluate._models import FeatureResult
from copeca_action.evaluate._resolve import CorpusResolver, parse_repo_dirs
from copeca_action.scenario import load_corpus

STYLE = {"pass": "green", "fail": "red", "error": "yellow", "pending": "dim"}


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("eval", help="evaluate the patches of an experiment's log tree",
                       description="Evaluate logs/NAME/{solo,coop}/REPO/TASK/fA_fB/ run folders: "
                       "sanitise each patch, apply it to a clean checkout, run the hidden tests "
                       "(corpus tasks REPO/TASK/fN) in a sandbox, write eval.json per run and "
                       "eval_summary.json for the whole experiment.")
    p.add_argument("-n", "--name", required=True, help="experiment name (a folder of --logs)")
    p.add_argument("--logs", type=Path, default=Path("logs"), help="log root (default: logs)")
    p.add_argument("-s", "--subset", help="file of REPO/TASK globs, one a line (or a name under "
                   "the corpus's subsets/ folder)")
    p.add_argument("-r", "--repo", help="only this repository")
    p.add_argument("-t", "--task", help="only this task")
    p.add_argument("-f", "--features", help="only this feature pair, e.g. 1,2")
    p.add_argument("-c", "--concurrency", type=int, default=2, help="parallel evaluations")
    p.add_argument("--backend", choices=sandbox_names(), default="local",
                   help="where the tests run: local (a sandbox on this machine) or docker")
    p.add_argument("--image", help="docker backend: local image to use (default: build the "
                   "repo's `dockerfile` from repos.yaml)")
    p.add_argument("--repo-dir", action="append", default=[], metavar="[REPO=]PATH",
                   help="checkout of a repository (repeatable); for now snapshots come from here")
    p.add_argument("--corpus", type=Path, help="corpus with the feature tasks (default: bundled)")
    p.add_argument("--force", action="store_true", help="evaluate again runs with an eval.json")
    p.add_argument("--fuzz", type=int, default=FUZZ, metavar="N",
                   help=f"last rung of the apply ladder: GNU patch --fuzz=N (default {FUZZ})")
    p.add_argument("--no-fuzz", action="store_true", help="no fuzz rung (exact context only)")
    p.add_argument("--no-ignore-whitespace", action="store_true",
                   help="no `git apply --ignore-whitespace` rung")
    p.set_defaults(func=run)


MAX_FUZZ = 100
"""The largest `--fuzz` taken: more context lines than any diff carries (the default is 3)."""


def _features(value: str | None) -> list[int] | None:
    if not value:
        return None
    try:
        numbers = [int(x) for x in value.split(",") if x.strip()]
    except ValueError:
        numbers = []
    if len(numbers) != 2:
        raise ConfigError(f"-f {value}: expected two feature numbers like 1,2", file="--features")
    return numbers


def _subset(value: str | None, corpus_root: Path) -> list[str]:
    if not value:
        return []
    for path in (Path(value), corpus_root / "subsets" / f"{value}.txt"):
        if path.is_file():
            return [ln.strip() for ln in path.read_text().splitlines()
                    if ln.strip() and not ln.lstrip().startswith("#")]
    raise ConfigError(f"-s {value}: no such file, and no {corpus_root}/subsets/{value}.txt",
                      file="--subset")


def run(args: argparse.Namespace) -> int:
    if args.concurrency < 1:
        raise ConfigError("-c: concurrency must be at least 1", file="--concurrency")
    if not (args.logs / args.name).is_dir():
        raise ConfigError(f"-n {args.name}: no folder {args.logs / args.name}", file="--name")
    if not 0 <= args.fuzz <= MAX_FUZZ:
        raise ConfigError(f"--fuzz {args.fuzz}: expected 0 to {MAX_FUZZ} (GNU patch ignores "
                          "that many context lines; diffs carry 3)", file="--fuzz")
    corpus = load_corpus(args.corpus).require_ok()
    runs = discover_runs(args.logs, args.name, subset=_subset(args.subset, corpus.root),
                         repo=args.repo, task=args.task, features=_features(args.features))
    if not runs:
        chosen = [f"{flag} {value}" for flag, value in (
            ("-s", args.subset), ("-r", args.repo), ("-t", args.task), ("-f", args.features))
            if value]
        raise ConfigError(f"-n {args.name}: no run folder in {args.logs / args.name} "
                          "(expected {solo,coop}/REPO/TASK/fA_fB/ folders"
                          + (f" matching {', '.join(chosen)}" if chosen else "") + ")",
                          file="--name")
    options = ApplyOptions(ignore_whitespace=not args.no_ignore_whitespace,
                           fuzz=None if args.no_fuzz else args.fuzz)
    resolver = CorpusResolver(corpus, parse_repo_dirs(args.repo_dir), args.backend, args.image,
                              apply_options=options)
    for repo in sorted({r.repo for r in runs}):
        resolver.checkout(repo)  # every repository needs a checkout and a sandbox up front
        resolver.sandbox(repo)
    err = Console(stderr=True)
    err.print(f"[bold]copeca-action eval[/] {args.name}: {len(runs)} runs, backend "
              f"{args.backend}, concurrency {args.concurrency}")
    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                  TimeElapsedColumn(), console=err, transient=True) as progress:
        bar = progress.add_task("evaluating", total=len(runs))

        def done(outcome: Outcome) -> None:
            status = outcome.result.status
            tag = "reused" if outcome.reused else status
            progress.console.print(f"[{STYLE[status]}]{tag:>6}[/] {outcome.run.name}")
            progress.advance(bar)

        try:
            outcomes = evaluate_experiment(runs, resolver, concurrency=args.concurrency,
                                           force=args.force, on_done=done)
        finally:
            resolver.close()
    summary = summarize_experiment(args.logs, args.name)
    path = write_summary(args.logs, summary)
    _print_table(outcomes)
    rate = "n/a" if summary.pass_rate is None else f"{summary.pass_rate:.1%}"
    print(f"experiment {args.name}: {summary.passed} passed, {summary.failed} failed, "
          f"{summary.errors} errors, {summary.skipped} not evaluated; pass rate {rate} "
          f"(errors excluded) → {path}")
    return 1 if any(o.result.status == "error" and not o.reused for o in outcomes) else 0


def _print_table(outcomes: list[Outcome]) -> None:
    table = Table("run", "status", "merge", "f1", "f2", "tests", "note",
                  title=f"{len(outcomes)} runs evaluated")
    for o in outcomes:
        r = o.result
        feats = [f for f in (r.feature1, r.feature2) if f is not None]
        marks = [_mark(f) for f in feats] + ["", ""]
        tests = " ".join(f"{f.tests_passed}/{f.tests_total}" for f in feats)
        note = (r.error or "").splitlines()[0][:60] if r.error else ("reused" if o.reused else "")
        merge = "" if r.merge is None else f"{r.merge.status}/{r.merge.strategy or '-'}"
        table.add_row(o.run.name, f"[{STYLE[r.status]}]{r.status}[/]", merge, marks[0],
                      marks[1], tests, note)
    Console(file=sys.stdout, width=160).print(table)


def _mark(feature: FeatureResult) -> str:
    """✓ or ✗; a feature killed at its timeout says so, apart from a wrong answer."""
    if feature.timed_out:
        return "✗ timeout"
    return "✓" if feature.passed else "✗"
