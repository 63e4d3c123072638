"""`copeca-action init DIR --kind KIND`: scaffold a benchmark and a PR workflow."""

from __future__ import annotations

import argparse
from pathlib import Path

import yaml

from copeca_action.github._pins import ACTION
from copeca_action.github._scaffold import KINDS, scaffold


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("init", help="scaffold a benchmark for your tool and a PR workflow",
                       description="Write DIR/benchmark (a repository pin, 6 example tasks and "
                       "the bundled repository's control tasks, the baseline mode, a mode of "
                       "your integration kind, a scenario with enough runs for a verdict, a "
                       "working stand-in of your tool (none for env), scripts for a dry run) and "
                       "two workflows, DIR/.github/workflows/copeca.yml (pull requests) and "
                       "copeca-approve.yml (a maintainer's `/copeca run SHA` on a fork's pull "
                       "request), pinned to this version. Never overwrites a file.")
    p.add_argument("dir", type=Path, help="your tool's repository (created if missing)")
    p.add_argument("--kind", required=True, choices=KINDS,
                   help="how your tool plugs into the agent")
    p.add_argument("--name", default="my-tool", help="your tool's mode name (default my-tool)")
    p.add_argument("--action", default=ACTION, help=f"the `uses:` reference (default {ACTION})")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    written = scaffold(args.dir, args.kind, args.name, args.action)
    for path in written:
        print(f"wrote {path}")
    print(f"next: cd {args.dir} && copeca-action validate benchmark && copeca-action run "
          "benchmark/scenarios/pr.yaml --dry-run --tool-dir .   (no key, no cost; a few "
          "minutes to a first verdict, docs/dry-run.md)")
    if args.kind in ("env", "setup"):  # no stand-in writes the marker the mode's validity reads
        mode = f"benchmark/modes/{args.name}.yaml"
        try:  # the file init wrote, or one it kept (init never overwrites)
            marker = yaml.safe_load((args.dir / mode).read_text())["validity"]["path"]
        except (OSError, yaml.YAMLError, KeyError, TypeError):
            return 0
        print(f"note: nothing here writes {marker} yet ({mode}, validity), so the dry run's "
              "verdict is `invalid`, the tool used in 0% of runs, until your tool writes it")
    return 0
