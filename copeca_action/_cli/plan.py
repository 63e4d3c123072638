"""`copeca-action plan SCENARIO [--shard i/n] [--json] [--power [--pilot FILE]]`: show the runs
a scenario expands to, or what it can detect and what it will cost."""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections import Counter
from pathlib import Path

from rich.console import Console
from rich.table import Table

from copeca_action.errors import ConfigError
from copeca_action.plan import (
    RunPlan,
    build_plan,
    shard_of,
    unreachable_min_runs,
)
from copeca_action.records import read_rows
from copeca_action.report import (
    Design,
    Pilot,
    PowerResult,
    Settings,
    alpha_shares,
    pilot_from_rows,
    power,
)
from copeca_action.scenario import (
    Scenario,
    check_references,
    corpus_folder,
    find_corpus_root,
    load_corpus,
    load_scenario,
    require_prices,
)

MAX_EXPERIMENTS = 20_000
"""The simulation holds every experiment's resampled statistics at once."""
MAX_SIMULATED_RUNS = 20_000_000
"""Runs the largest simulated design may draw (experiments × tasks × repetitions × models),
about 57 bytes each at peak: 1000 experiments of 139 tasks × 1000 repetitions asked for
1 GiB per array and ended in a MemoryError (or the kernel's OOM kill)."""


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("plan", help="expand a scenario into its runs (optionally one shard), "
                       "or (--power) say what it can detect and what it will cost",
                       description="Check the scenario as `validate` does (its tasks, modes, "
                       "runners and scripts resolve), then list every run it expands to: "
                       "task × arm × model × repetition, with run ids. Runs nothing. With "
                       "--power: the smallest effect it detects at 80% power and its "
                       "expected spend.")
    p.add_argument("scenario", type=Path, help="the scenario YAML")
    p.add_argument("--shard", help="i/n: only the i-th of n disjoint slices (1-based)")
    p.add_argument("--compare", choices=["baseline", "base-ref", "both"], default="baseline",
                   help="what the tool is compared with: baseline (no tool), base-ref (the "
                   "tool at the base ref, arms `<mode>@base`), or both (default baseline)")
    p.add_argument("--corpus", type=Path, help="corpus folder (default: the one holding the "
                   "scenario, else the bundled corpus)")
    p.add_argument("--json", action="store_true", help="print the plan (or the power) as JSON")
    p.add_argument("--power", action="store_true", help="minimum detectable effect at 80%% "
                   "power and expected spend, by simulation (docs/methodology.md)")
    p.add_argument("--pilot", type=Path, help="with --power: a results.jsonl or .copeca bundle "
                   "whose base-arm runs are the population (default: documented defaults)")
    p.add_argument("--experiments", type=int, help="with --power: simulated "
                   f"experiments per design (default 1000, at most {MAX_EXPERIMENTS:,})")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    scenario = load_scenario(args.scenario)  # the file's own errors first, precisely
    root = (corpus_folder(args.corpus, "--corpus") if args.corpus
            else find_corpus_root(args.scenario.resolve()))
    corpus = load_corpus(root).require_ok()
    check_references(scenario, corpus, args.scenario)  # modes, runners, scripts: as validate
    for warning in require_prices(scenario, args.scenario, corpus):
        print(f"warning: {warning}", file=sys.stderr)
    plan = build_plan(scenario, corpus.tasks, compare=args.compare)
    design = unreachable_min_runs(scenario, plan)
    if design:
        print(f"warning: {args.scenario}: {design}", file=sys.stderr)
    if args.pilot and not args.power:
        raise ConfigError("--pilot: only with --power")
    if args.experiments is not None and not args.power:
        raise ConfigError("--experiments: only with --power")
    if args.power:
        if args.shard:
            raise ConfigError("--shard: not with --power (the power is the whole design's)")
        return print_power(scenario, plan, args)
    if args.shard:
        plan = shard_of(plan, args.shard)
    if args.json:
        print(plan.model_dump_json(indent=2))
        return 0
    console = Console()
    shard = f" shard {plan.shard}" if plan.shard else ""
    console.print(f"[bold]{plan.scenario}[/]{shard}: {len(plan.runs)} runs, arms "
                  f"{', '.join(plan.arms)}, plan {plan.plan_digest[:12]}")
    table = Table("run id", "task", "arm", "model", "rep")
    for r in plan.runs:
        table.add_row(r.run_id, r.task_id, r.arm, r.model, str(r.repetition))
    console.print(table)
    per_arm = Counter(r.arm for r in plan.runs)
    console.print(", ".join(f"{arm}: {n}" for arm, n in per_arm.items()))
    return 0


def load_pilot(path: Path) -> Pilot:
    if not path.is_file():
        what = "a folder" if path.is_dir() else "no such file"
        raise ConfigError(f"--pilot: {what} (expected a results.jsonl or a .copeca bundle)",
                          path)
    if path.suffix == ".copeca":
        from copeca_action.bundle import verify_bundle

        rows = [r.model_dump(mode="json") for r in verify_bundle(path).records]
    else:
        rows = [dict(r) for r in read_rows(path)[0]]
    try:
        return pilot_from_rows(rows, str(path))
    except ValueError as exc:
        raise ConfigError(f"--pilot: {exc}", path) from exc


def print_power(scenario: Scenario, plan: RunPlan, args: argparse.Namespace) -> int:
    if args.experiments is None:
        args.experiments = 1000
    if not 200 <= args.experiments <= MAX_EXPERIMENTS:
        raise ConfigError(f"{args.experiments}: expected 200 to {MAX_EXPERIMENTS:,} (memory "
                          "grows with it: 10,000 take about 0.5 GB)", file="--experiments")
    tasks = {r.task_id for r in plan.runs if not r.control}
    control = {r.task_id for r in plan.runs if r.control}
    reps = max((r.repetition for r in plan.runs), default=0) + 1
    arms = len(plan.arms)
    models = len(scenario.models)
    if len(tasks) < 2:
        raise ConfigError(f"{args.scenario}: --power needs at least 2 non-control tasks "
                          f"(the plan has {len(tasks)})")
    adaptive = scenario.adaptive if scenario.adaptive and scenario.adaptive.enabled else None
    most = adaptive.max_repetitions if adaptive else reps
    reps = most  # adaptive: the looks are simulated up to the schedule's maximum
    cells = args.experiments * 2 * len(tasks) * most * models  # the 2x designs' draws
    if cells > MAX_SIMULATED_RUNS:
        raise ConfigError(f"{args.experiments:,} experiments of {2 * len(tasks)} tasks × "
                          f"{most} repetitions × {models} model(s) (the doubled design) are "
                          f"{cells:,} simulated runs, over {MAX_SIMULATED_RUNS:,} (about 1 GB); "
                          "use fewer --experiments (at least 200) or plan fewer repetitions",
                          file="--power")
    pilot = load_pilot(args.pilot) if args.pilot else None
    # several tool arms: the report splits the alpha between their comparisons (Bonferroni),
    # so each is sized at its share, never at the whole alpha (which overstates the power)
    shares = max(1, alpha_shares(plan.arms))
    # the alpha the report judges with: the adaptive schedule's (spent over its looks)
    kw = {"fail": scenario.thresholds.fail, "adaptive": adaptive, "pilot": pilot,
          "alpha": adaptive.alpha if adaptive else Settings().alpha,
          "experiments": args.experiments, "resamples": 1000, "seed": scenario.seed,
          "comparisons": shares}
    n, c = len(tasks), len(control)
    results = {"planned": power(Design(n, reps, arms, c, models), **kw)}
    results["2x tasks"] = power(Design(2 * n, reps, arms, c, models),
                                **kw)
    if adaptive is None:
        results["2x repetitions"] = power(Design(n, 2 * reps, arms, c, models),
                                          **kw)
    over = _over_budget(scenario, results["planned"])
    if over:
        print(f"warning: {args.scenario}: {over}", file=sys.stderr)
    if args.json:
        print(json.dumps({k: _as_json(v) for k, v in results.items()}, indent=2))
        return 0
    head = results["planned"]
    # said beside the alpha: the effects shown are at each comparison's share of it
    bonferroni = (f"split between {shares} tool comparisons (Bonferroni, as the report will "
                  "judge them)")
    if adaptive:
        looks = (f"adaptive looks at {adaptive.min_repetitions}..{adaptive.max_repetitions} "
                 f"repetitions, alpha {adaptive.alpha} spent over them")
        if shares > 1:
            looks += f", {bonferroni}: each look's share divided by {shares}"
    elif shares > 1:
        looks = (f"alpha {head.alpha_family} {bonferroni}: each at alpha {head.alpha:.4g} "
                 "(two-sided)")
    else:
        looks = f"alpha {head.alpha} (two-sided)"
    print(f"{scenario.name}: {len(tasks)} tasks (+{len(control)} control) × "
          f"{'up to ' if adaptive else ''}{reps} repetition(s) × {models} model(s) × {arms} "
          f"arm(s); {looks}; fail threshold {scenario.thresholds.fail:+.0%}; "
          f"{head.experiments} simulated experiments")
    print(f"  population: {pilot.source if pilot else 'documented defaults (docs/methodology.md)'}")
    print(f"  minimum detectable improvement (80% power): {_pct(head.improvement)}")
    print(f"  minimum detectable regression (80% power): {_pct(head.regression)}")
    print(f"  runs: {head.expected_runs:.0f}{' at most' if adaptive else ''}; expected spend: "
          f"${head.expected_spend_usd:,.2f} (${head.cost_per_run_usd:.4f} per run, "
          f"{head.cost_source})")
    for label, r in results.items():
        if label != "planned":
            print(f"  with {label}: {_pct(r.improvement)} / {_pct(r.regression)}, "
                  f"${r.expected_spend_usd:,.2f}")
    return 0


def _over_budget(scenario: Scenario, result: PowerResult) -> str | None:
    """The design's expected spend passes `budget_usd`: the run stops early (the rest is
    `budget_stop`), so the effects shown for the whole design are not what it detects."""
    budget = scenario.budget_usd
    if budget is None or result.expected_spend_usd <= budget:
        return None
    runs = int(budget / result.cost_per_run_usd) if result.cost_per_run_usd > 0 else 0
    return (f"budget_usd: the expected spend ${result.expected_spend_usd:,.2f} is above the "
            f"budget ${budget:,.2f}: at ${result.cost_per_run_usd:.4f} per run about {runs:,} "
            f"of {result.expected_runs:,.0f} runs start before the rest stop as budget_stop, "
            "and the detectable effects shown are those of the whole design, not of what the "
            "budget buys. Raise budget_usd or shrink the design")


def _pct(value: float) -> str:
    if value <= -1:
        return "none (no reduction is detected in 80% of runs)"
    if math.isinf(value):
        return "none (no increase is detected in 80% of runs)"
    return f"{value:+.0%}"


def _as_json(r: PowerResult) -> dict[str, object]:
    return {"tasks": r.design.tasks, "control_tasks": r.design.control_tasks,
            "repetitions": r.design.repetitions, "models": r.design.models,
            "arms": r.design.arms,
            "min_detectable_improvement": r.improvement if r.improvement > -1 else None,
            "min_detectable_regression": r.regression if math.isfinite(r.regression) else None,
            "expected_runs": r.expected_runs, "expected_spend_usd": r.expected_spend_usd,
            "cost_per_run_usd": r.cost_per_run_usd, "cost_source": r.cost_source,
            "alpha": r.alpha, "adaptive": r.adaptive, "experiments": r.experiments,
            "power": 0.8,
            # several tools: the alpha each comparison is judged at, and the split
            **({"comparisons": r.comparisons, "alpha_family": r.alpha_family}
               if r.comparisons > 1 else {})}
