"""`copeca-action badge REPORT_JSON`: the shields.io endpoint JSON and an SVG badge."""

from __future__ import annotations

import argparse
from pathlib import Path

from copeca_action.github import read_badge_input, write_badge


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("badge", help="write badge.json (shields.io endpoint) and badge.svg",
                       description="Make the release badge from a report JSON (its verdict "
                       "and headline comparison), or from a JSON with top-level verdict, delta, "
                       "ci_low and ci_high. An improvement or a regression is drawn only with "
                       "the interval that decides it (wholly below, or above, zero).")
    p.add_argument("report", type=Path, help="report JSON")
    p.add_argument("--out-dir", type=Path, default=Path("."),
                   help="where badge.json and badge.svg go (default: .)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    js, svg = write_badge(read_badge_input(args.report), args.out_dir)
    print(f"wrote {js} and {svg}")
    return 0
