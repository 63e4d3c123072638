"""`copeca-action validate [PATHS…]`: check inputs; exit 0 only when all is valid."""

from __future__ import annotations

import argparse
from pathlib import Path

from copeca_action._cli._output import print_problems
from copeca_action._util.paths import corpus_dir
from copeca_action.errors import ConfigError
from copeca_action.scenario import load_corpus, validate_paths


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("validate", help="check tasks, scenarios, modes, runners and repo pins",
                       description="Validate corpus files: schema, duplicate ids, references, "
                       "tool-agnostic prompt lint, contamination. Defaults to the bundled corpus.")
    p.add_argument("paths", nargs="*", type=Path, help="files or folders (default: the corpus)")
    p.add_argument("--corpus", type=Path, help="corpus that references resolve against "
                   "(default: the folder holding repos.yaml above each path, else the bundled)")
    p.add_argument("--quiet", "-q", action="store_true", help="hide warnings")
    p.add_argument("--deep", action="store_true",
                   help="also run check-task on every edit task whose checkout and toolchain "
                   "are present (the rest are reported as skipped, with the reason)")
    p.add_argument("--repos-dir", type=Path, default=Path("repos"),
                   help="--deep: folder with one checkout per repository, named as in "
                   "repos.yaml (default: ./repos)")
    p.add_argument("--backend", choices=("local", "docker"), default="local",
                   help="--deep: sandbox the test commands run in")
    p.set_defaults(func=run, fast_exit=True)


def run(args: argparse.Namespace) -> int:
    paths = args.paths or [corpus_dir()]
    result = validate_paths(paths, args.corpus)
    print_problems(result.errors)
    if not args.quiet:
        print_problems(result.warnings, "warning")
    print(("ok: " if result.ok else "invalid: ") + result.summary())
    if not result.ok or not args.deep:
        return 0 if result.ok else 1
    return _deep(args, paths)


def _deep(args: argparse.Namespace, paths: list[Path]) -> int:
    from copeca_action._cli._deep import deep_check

    roots = [p for p in paths if p.is_dir() and (p / "repos.yaml").is_file()]
    if len(roots) != 1:
        raise ConfigError("--deep checks one corpus folder (the one holding repos.yaml)",
                          file="--deep")
    counts = {"ok": 0, "fail": 0, "skip": 0}
    for res in deep_check(load_corpus(roots[0]), args.repos_dir, args.backend):
        counts[res.status] += 1
        mark = {"ok": "ok  ", "fail": "FAIL", "skip": "skip"}[res.status]
        detail = f": {res.detail}" if res.detail and res.status == "skip" else ""
        print(f"{mark} {res.task_id}{detail}", flush=True)
        if res.status == "fail" and res.detail:
            print("     " + res.detail.replace("\n", "\n     "), flush=True)
    print(f"deep: {counts['ok']} checked ok, {counts['fail']} failed, {counts['skip']} skipped")
    return 0 if counts["fail"] == 0 else 1
