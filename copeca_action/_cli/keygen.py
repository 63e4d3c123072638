"""`copeca-action keygen --out DIR`: a new Ed25519 signing key pair for bundles."""

from __future__ import annotations

import argparse
from pathlib import Path

from copeca_action.bundle import SIGNING_KEY_ENV, generate_keypair


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("keygen", help="make an Ed25519 key pair for signing bundles",
                       description="Write copeca-signing.key (PEM, mode 0600) and "
                       "copeca-signing.pub into DIR and print the key id (sha256 of the raw "
                       "public key). Existing keys are never overwritten.")
    p.add_argument("--out", type=Path, required=True, metavar="DIR",
                   help="output folder for the private and public key files")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    private, public, keyid = generate_keypair(args.out)
    print(f"private key: {private} (mode 0600; store it as a CI secret, e.g. "
          f"${SIGNING_KEY_ENV}, and never commit it)")
    print(f"public key:  {public} (publish it: verifiers pass it as --pubkey)")
    print(f"keyid:       {keyid}")
    return 0
