"""`copeca-action merge SHARD.copeca… --out ALL.copeca`: one signed bundle from shards."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from copeca_action._cli._bundle_args import add_check_flags, pubkey_of, scenario_of
from copeca_action.bundle import ReportFn, load_signing_key, merge_bundles, verify_bundle
from copeca_action.errors import VerificationError

REPORT: ReportFn | None = None
"""The report stage (plan, records → rendered report); None until it is wired in, and then
the merged bundle carries no report and no summary."""


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "merge", help="verify shard bundles and merge them into one signed bundle",
        description="Verify each shard, check they come from one plan, are disjoint and "
        "together complete, and write one bundle. Exit codes as for verify.")
    p.add_argument("shards", nargs="+", type=Path, metavar="SHARD.copeca")
    p.add_argument("--out", type=Path, required=True, metavar="ALL.copeca")
    p.add_argument("--key", type=Path, metavar="PEM", help="signing key (default: "
                   "$COPECA_SIGNING_KEY; neither: the merged bundle is unsigned)")
    add_check_flags(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    key = load_signing_key(args.key)
    pubkey = pubkey_of(args)
    scenario, tasks = scenario_of(args)
    try:
        manifest, shards = merge_bundles(args.shards, args.out, key, pubkey, report=REPORT,
                                         scenario=scenario, tasks=tasks)
        verify_bundle(args.out, key.public_key() if key else None, scenario, tasks)
    except VerificationError as exc:
        print(f"FAILED ({exc.kind}): {exc}", file=sys.stderr)
        return exc.exit_code
    runs = sum(len(s.plan.runs) for s in shards)
    print(f"merged {len(shards)} shard(s), {runs} runs, {len(manifest.files)} files "
          f"into {args.out}")
    if key is None:
        print("UNSIGNED: the merged bundle proves integrity only (pass --key or set "
              "$COPECA_SIGNING_KEY)")
    if REPORT is None:
        print("note: no report stage wired in; the merged bundle carries no report")
    return 0
