"""`copeca-action merge SHARD.copeca… --out ALL.copeca`: one signed bundle from shards."""

from __future__ import annotations

import argparse
import sys
import tempfile
import zipfile
from collections.abc import Callable
from pathlib import Path

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from copeca_action._cli._bundle_args import add_check_flags, pubkey_of, scenario_of
from copeca_action._util.paths import corpus_dir
from copeca_action.bundle import ReportFn, load_signing_key, merge_bundles, verify_bundle
from copeca_action.bundle._model import SCENARIO
from copeca_action.errors import CopecaError, VerificationError
from copeca_action.scenario import Scenario, load_corpus, load_scenario

REPORT: Callable[[Scenario, str, Ed25519PrivateKey | None], ReportFn] | None = None
"""Makes the report stage (plan, records → rendered report) from the scenario, its YAML and
the signing key; set below to `conclude.merged_report`. None: the merged bundle carries no
report and no summary."""


def _conclude_report(scenario: Scenario, scenario_yaml: str,
                     key: Ed25519PrivateKey | None) -> ReportFn:
    from copeca_action.conclude import merged_report  # conclude sits after bundle

    runners = load_corpus(corpus_dir()).runners  # the prices' age, as `run` reports it
    return merged_report(scenario, scenario_yaml, runners=runners, key=key)


REPORT = _conclude_report


def _shard_scenario(path: Path) -> tuple[Scenario | None, str]:
    """The scenario a shard was run from (its scenario.yaml); None when unreadable (then
    merge_bundles reports the shard as broken)."""
    try:
        with zipfile.ZipFile(path) as archive:
            text = archive.read(SCENARIO).decode()
        with tempfile.TemporaryDirectory() as tmp:
            (Path(tmp) / SCENARIO).write_text(text)
            return load_scenario(Path(tmp) / SCENARIO), text
    except (OSError, KeyError, ValueError, zipfile.BadZipFile, CopecaError):
        return None, ""


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
    which, text = _shard_scenario(args.shards[0])
    if scenario is not None:
        which, text = scenario, args.scenario.read_text()
    report = REPORT(which, text, key) if REPORT is not None and which is not None else None
    try:
        manifest, shards = merge_bundles(args.shards, args.out, key, pubkey, report=report,
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
    if report is None:
        print("note: no readable scenario in the shards; the merged bundle carries no report")
    return 0
