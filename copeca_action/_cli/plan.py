"""`copeca-action plan SCENARIO [--shard i/n] [--json]`: show the runs a scenario expands to."""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path

from rich.console import Console
from rich.table import Table

from copeca_action.plan import build_plan, parse_shard, shard_plan
from copeca_action.scenario import find_corpus_root, load_corpus, load_scenario, require_prices


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("plan", help="expand a scenario into its runs (optionally one shard)")
    p.add_argument("scenario", type=Path)
    p.add_argument("--shard", help="i/n: only the i-th of n disjoint slices (1-based)")
    p.add_argument("--compare", choices=["baseline", "base-ref", "both"], default="baseline")
    p.add_argument("--corpus", type=Path, help="corpus folder (default: the one holding the "
                   "scenario, else the bundled corpus)")
    p.add_argument("--json", action="store_true", help="print the plan as JSON")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    scenario = load_scenario(args.scenario)
    root = args.corpus or find_corpus_root(args.scenario.resolve())
    corpus = load_corpus(root).require_ok()
    for warning in require_prices(scenario, args.scenario, corpus):
        print(f"warning: {warning}", file=sys.stderr)
    plan = build_plan(scenario, corpus.tasks, compare=args.compare)
    if args.shard:
        plan = shard_plan(plan, parse_shard(args.shard))
    if args.json:
        print(plan.model_dump_json(indent=2))
        return 0
    console = Console()
    shard = f" shard {plan.shard}" if plan.shard else ""
    console.print(f"[bold]{plan.scenario}[/]{shard}: {len(plan.runs)} runs, arms "
                  f"{', '.join(plan.arms)}, plan {plan.plan_digest[:12]}")
    table = Table("run id", "task", "arm", "model", "rep")
    for run in plan.runs:
        table.add_row(run.run_id, run.task_id, run.arm, run.model, str(run.repetition))
    console.print(table)
    per_arm = Counter(r.arm for r in plan.runs)
    console.print(", ".join(f"{arm}: {n}" for arm, n in per_arm.items()))
    return 0
