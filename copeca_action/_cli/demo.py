"""`copeca-action demo`: the bundled demo end to end, offline: the fastapi snapshot, the
scripted model server, both real agent CLIs, then a summary of what was written."""

from __future__ import annotations

import argparse
from pathlib import Path

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from rich.console import Console
from rich.markdown import Markdown

from copeca_action._cli._output import console as log_console
from copeca_action._cli.run import (
    add_run_arguments,
    conclude_run,
    prepare,
    print_concluded,
    print_summary,
    start_over,
)
from copeca_action._util.paths import corpus_dir
from copeca_action.bundle import generate_keypair, load_signing_key
from copeca_action.bundle._sign import PRIVATE_NAME
from copeca_action.engine import StaleResults
from copeca_action.pipeline import Prepared, execute


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("demo", help="run the bundled offline demo (fastapi, scripted model)",
                       description="Run the bundled demo end to end, offline: the fastapi "
                       "snapshot, the real Claude Code and Codex CLIs with and without the "
                       "bundled code-search MCP server, against the local scripted model "
                       "(no key, no network, no cost: the numbers are the scripts', "
                       "simulated). Then the report and a signed bundle. To try your own tool "
                       "this way: `copeca-action run SCENARIO --dry-run` (docs/dry-run.md).")
    p.add_argument("--scenario", type=Path, help="demo scenario (default: the bundled one)")
    add_run_arguments(p, demo=True)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    console = log_console()
    scenario = args.scenario or corpus_dir() / "scenarios" / "demo.yaml"
    prep = prepare(args, scenario, out_default=Path("out") / "demo")
    console.print(f"[bold]copeca-action demo[/] (scripted model: no key, no cost, simulated "
                  f"numbers): {len(prep.plan.runs)} runs, arms "
                  f"{', '.join(prep.plan.arms)}, models {', '.join(prep.cfg.scenario.models)}")
    for repo in sorted({prep.cfg.corpus.tasks[r.task_id].repo for r in prep.plan.runs}):
        snap = prep.cfg.store.fetch(repo)
        console.print(f"snapshot {repo}: {snap.origin} {snap.commit[:12]} ({snap.source})")
    out = prep.cfg.out
    old = out.existing_plan()
    if args.start_over:
        start_over(console, out, "--start-over")
    elif (old is not None and old.scenario == prep.plan.scenario
          and old.plan_digest != prep.plan.plan_digest and out.simulated_only()):
        # the demo changed since the folder was written (a new copeca-action): simulated
        # and free, so the old one is kept aside and the demo runs afresh
        start_over(console, out, f"{out.root} holds an older version of the demo")
    try:
        return _run_demo(prep, args, console)
    except StaleResults as exc:
        if not out.simulated_only():  # never moves real runs aside unasked
            raise
        # an agent CLI upgrade, new scripts, another copeca-action: the finished demo runs
        # no longer match; rather than refuse (as `run` does), the free demo starts over
        start_over(console, out, f"{out.results}: {exc.reason}. The demo is simulated and "
                   "free, so it does not refuse as `run` would")
        return _run_demo(prep, args, console)


def _run_demo(prep: Prepared, args: argparse.Namespace, console: Console) -> int:
    with prep.cfg.out.held():  # the runs, the report and the bundle: one writer
        resume = args.resume or prep.cfg.out.results.exists()
        stats = execute(prep, resume=resume, plain=args.plain)
        print_summary(console, prep.cfg.out, stats)
        if stats.interrupted:
            return 130
        key = prep.key or demo_key(prep.cfg.out.root / "keys", console)
        done = conclude_run(prep, args, key)
    text = done.files["report.md"].read_text()
    if console.is_terminal:
        console.print(Markdown(text))
    else:  # a log: the markdown as written, never wrapped or cut at 80 columns
        print(text, flush=True)
    print_concluded(console, done)
    return 0


def demo_key(folder: Path, console: Console) -> Ed25519PrivateKey:
    """The demo signs with a key of its own, made once beside its output (never a secret:
    real runs take theirs from --key or $COPECA_SIGNING_KEY)."""
    private = folder / PRIVATE_NAME
    if not private.is_file():
        _, public, keyid = generate_keypair(folder)
        console.print(f"made a demo signing key {keyid[:16]}… ({public})", soft_wrap=True)
    key = load_signing_key(private)
    assert key is not None
    return key
