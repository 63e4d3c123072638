"""`copeca-action demo`: the bundled demo end to end, offline: the fastapi snapshot, the
scripted model server, both real agent CLIs, then a summary of what was written."""

from __future__ import annotations

import argparse
from pathlib import Path

from rich.console import Console

from copeca_action._cli.run import add_run_arguments, execute, prepare, print_summary
from copeca_action._util.paths import corpus_dir
from copeca_action.engine import OutputDir


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("demo", help="run the bundled offline demo (fastapi, scripted model)")
    p.add_argument("--scenario", type=Path, help="demo scenario (default: the bundled one)")
    add_run_arguments(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    console = Console()
    scenario = args.scenario or corpus_dir() / "scenarios" / "demo.yaml"
    prep = prepare(args, scenario, out_default=Path("out") / "demo")
    console.print(f"[bold]copeca-action demo[/]: {len(prep.plan.runs)} runs, arms "
                  f"{', '.join(prep.plan.arms)}, models {', '.join(prep.cfg.scenario.models)}")
    for repo in sorted({prep.cfg.corpus.tasks[r.task_id].repo for r in prep.plan.runs}):
        snap = prep.cfg.store.fetch(repo)
        console.print(f"snapshot {repo}: {snap.origin} {snap.commit[:12]} ({snap.source})")
    old = prep.cfg.out.existing_plan()
    if old is not None and old.plan_digest != prep.plan.plan_digest and args.out is None:
        # the demo changed since the folder was written: keep it, write beside it
        root = prep.cfg.out.root.with_name(f"demo-{prep.plan.plan_digest[:8]}")
        prep.cfg.out = OutputDir(root, args.work_dir)
        console.print(f"{prep.cfg.out.root.parent / 'demo'} holds an older demo; writing to "
                      f"{root}")
    resume = args.resume or prep.cfg.out.results.exists()
    stats = execute(prep, resume=resume, plain=args.plain)
    print_summary(console, prep.cfg.out, stats)
    console.print("The statistics (cost per correct answer, intervals, verdict) come from "
                  "the report stage over results.jsonl.")
    return 130 if stats.interrupted else 0
