"""Flags shared by verify and merge: the pinned public key and the scenario to check against."""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # loaded when used: verify without --scenario reads no scenario code
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

    from copeca_action.bundle import VerifiedBundle
    from copeca_action.scenario import Scenario, Task


def add_check_flags(p: argparse.ArgumentParser) -> None:
    p.add_argument("--pubkey", type=Path, metavar="PEM", help="require a signature by this "
                   "public key (without it a signature only shows the bundle is unchanged "
                   "since someone signed it)")
    p.add_argument("--scenario", type=Path, help="also check the runs against the plan this "
                   "scenario and its corpus give today (names missing, duplicated, "
                   "unexpected runs)")
    p.add_argument("--corpus", type=Path, help="corpus for --scenario (default: the one "
                   "holding the scenario, else the bundled corpus)")


def pubkey_of(args: argparse.Namespace) -> Ed25519PublicKey | None:
    from copeca_action.bundle import load_public_key

    return load_public_key(args.pubkey) if args.pubkey else None


def scenario_of(args: argparse.Namespace) -> tuple[Scenario | None, Mapping[str, Task]]:
    if not args.scenario:
        return None, {}
    from copeca_action.scenario import find_corpus_root, load_corpus, load_scenario

    scenario = load_scenario(args.scenario)
    root = args.corpus or find_corpus_root(args.scenario.resolve())
    return scenario, load_corpus(root).require_ok().tasks


def describe_signature(result: VerifiedBundle) -> str:
    if result.keyid is None:
        return ("UNSIGNED: integrity only; anyone could have written this bundle "
                "(sign with --key or $COPECA_SIGNING_KEY)")
    if result.pinned:
        return f"signed by key {result.keyid} (checked against --pubkey)"
    return (f"signed by key {result.keyid}, NOT pinned: this shows the bundle is unchanged "
            "since that key signed it, not whose key it is; pass --pubkey")
