"""`copeca-action context --pred PRED.json --gold GOLD.json [--repo DIR]`: ContextBench-format
retrieval metrics for one prediction, computed with our definitions."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from copeca_action.errors import ConfigError, Problem
from copeca_action.retrieval import Repo, RunRetrieval, evaluate_files


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("context", help="retrieval metrics of a ContextBench-format prediction",
                       description="Coverage, precision and F1 at file, symbol, span and EditLoc "
                       "granularity, plus AUC-coverage and redundancy, for a prediction in "
                       "ContextBench's format (pred_steps, pred_files, pred_spans, model_patch) "
                       "against a gold file (ContextBench's init_ctx/add_ctx/patch or our "
                       "gold_context/gold_edit_lines).")
    p.add_argument("--pred", type=Path, required=True, help="prediction JSON")
    p.add_argument("--gold", type=Path, required=True, help="gold JSON or YAML")
    p.add_argument("--repo", type=Path, default=Path("."),
                   help="checkout at the instance's commit (default: the current directory)")
    p.add_argument("--alias", action="append", default=[], metavar="DIR",
                   help="another absolute root the agent saw the checkout under (repeatable)")
    p.add_argument("--no-strip", dest="strip", action="store_false",
                   help="drop paths outside the checkout and its aliases instead of stripping "
                   "their leading components until a file of the checkout matches "
                   "(ContextBench's rule, the default)")
    p.add_argument("--json", action="store_true", help="print the full result as JSON")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    if not args.repo.is_dir():
        raise ConfigError(Problem("--repo", f"{args.repo} is not a directory"))
    for flag, path in (("--pred", args.pred), ("--gold", args.gold)):
        if not path.is_file():
            raise ConfigError(Problem(flag, f"{path}: no such file"))
    result = evaluate_files(args.pred, args.gold, Repo(args.repo, args.alias,
                                                           strip_prefixes=args.strip))
    covered = result.file.coverage if result.file is not None else 0.0
    if result.dropped_paths and not covered:  # the checkout is not the instance's: refuse
        shown = ", ".join(result.dropped_paths[:3])
        raise ConfigError(Problem("--repo", f"none of the predicted paths is a file under "
                                  f"{args.repo.resolve()} ({shown}…): metrics against the "
                                  "wrong tree would be garbage; pass --repo, a checkout at "
                                  "the instance's commit"))
    if result.dropped_paths:
        shown = ", ".join(result.dropped_paths[:5])
        more = f" (+{len(result.dropped_paths) - 5} more)" if len(result.dropped_paths) > 5 else ""
        print(f"warning: {len(result.dropped_paths)} predicted paths are not files under "
              f"{args.repo}: {shown}{more}", file=sys.stderr)
    print(result.model_dump_json(indent=2) if args.json else render(result))
    return 0


def render(result: RunRetrieval) -> str:
    rows = [f"{'granularity':<12}{'coverage':>10}{'precision':>11}{'f1':>8}{'AUC':>8}"
            f"{'redundancy':>12}"]
    for name in ("file", "symbol", "span", "editloc"):
        score = getattr(result, name)
        traj = getattr(result, f"trajectory_{name}", None)
        if score is None:
            rows.append(f"{name:<12}{'-':>10}{'-':>11}{'-':>8}")
            continue
        tail = f"{traj.auc:>8.3f}{traj.redundancy:>12.3f}" if traj is not None else ""
        rows.append(f"{name:<12}{score.coverage:>10.3f}{score.precision:>11.3f}"
                    f"{score.f1:>8.3f}{tail}")
    rows.append(f"steps: {result.steps}")
    return "\n".join(rows)
