"""`copeca-action validate [PATHS…]`: check inputs; exit 0 only when all is valid."""

from __future__ import annotations

import argparse
from pathlib import Path

from copeca_action._cli._output import print_problems
from copeca_action._util.paths import corpus_dir
from copeca_action.scenario import validate_paths


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("validate", help="check tasks, scenarios, modes, runners and repo pins",
                       description="Validate corpus files: schema, duplicate ids, references, "
                       "tool-agnostic prompt lint, contamination. Defaults to the bundled corpus.")
    p.add_argument("paths", nargs="*", type=Path, help="files or folders (default: the corpus)")
    p.add_argument("--corpus", type=Path, help="corpus that references resolve against "
                   "(default: the folder holding repos.yaml above each path, else the bundled)")
    p.add_argument("--quiet", "-q", action="store_true", help="hide warnings")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    paths = args.paths or [corpus_dir()]
    result = validate_paths(paths, args.corpus)
    print_problems(result.errors)
    if not args.quiet:
        print_problems(result.warnings, "warning")
    print(("ok: " if result.ok else "invalid: ") + result.summary())
    return 0 if result.ok else 1
