"""`copeca-action merge SHARD.copeca… --bundle ALL.copeca`: one signed bundle from shards."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from copeca_action._cli._bundle_args import add_check_flags, pubkey_of, scenario_of
from copeca_action._util.paths import corpus_dir
from copeca_action.bundle import load_signing_key
from copeca_action.errors import VerificationError
from copeca_action.scenario import load_corpus


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "merge", help="verify shard bundles and merge them into one signed bundle",
        description="Verify each shard, check they come from one plan, are disjoint and "
        "together complete, and write one bundle with the report of all their runs (the "
        "scenario and thresholds the shards ran with). With --scenario, each shard must be "
        "the runs that scenario plans for it (as verify --scenario checks; a scenario with "
        "other settings is refused), and missing runs are named. A merged bundle that does "
        "not verify is never written. Exit codes as for verify.")
    p.add_argument("shards", nargs="+", type=Path, metavar="SHARD.copeca",
                   help="the shard bundles (from `run --shard i/n`)")
    p.add_argument("--bundle", "--out", dest="out", type=Path, required=True,
                   metavar="ALL.copeca", help="the merged bundle file to write, as run's "
                   "--bundle (--out, the old spelling, is kept: elsewhere --out is a folder)")
    p.add_argument("--key", type=Path, metavar="PEM", help="signing key (default: "
                   "$COPECA_SIGNING_KEY; neither: the merged bundle is unsigned)")
    p.add_argument("--allow-unsigned", action="store_true",
                   help="merge shards that are unsigned or signed by another key than --pubkey "
                   "/ --key's (the merged bundle and its report say so)")
    add_check_flags(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    # conclude sits after bundle in the stage order; the verbs below it import it lazily
    from copeca_action.conclude import merge_shards

    key = load_signing_key(args.key)
    pubkey = pubkey_of(args)
    # --scenario checks the shards; the report is made with the scenario they ran (their
    # scenario.yaml and signed thresholds), so analyze of the merged bundle is its report
    scenario, tasks = scenario_of(args)
    runners = load_corpus(corpus_dir()).runners  # the prices' age, as `run` reports it
    try:
        merged = merge_shards(args.shards, args.out, key=key, runners=runners, pubkey=pubkey,
                              check=scenario, tasks=tasks,
                              allow_unsigned=args.allow_unsigned)
    except VerificationError as exc:
        from copeca_action._util.text import log_safe

        print(f"FAILED ({exc.kind}): {log_safe(str(exc))}", file=sys.stderr)  # quotes shards
        return exc.exit_code
    runs = sum(len(s.plan.runs) for s in merged.shards)
    print(f"merged {len(merged.shards)} shard(s), {runs} runs, {len(merged.manifest.files)} "
          f"files into {args.out}")
    if key is None:
        print("UNSIGNED: the merged bundle proves integrity only (pass --key or set "
              "$COPECA_SIGNING_KEY)")
    if merged.report is None:
        print("note: no readable scenario in the shards; the merged bundle carries no report")
    return 0
