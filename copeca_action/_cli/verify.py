"""`copeca-action verify BUNDLE [--pubkey PEM] [--scenario S]`: check a bundle offline."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from copeca_action._cli._bundle_args import (
    add_check_flags,
    describe_signature,
    pubkey_of,
    scenario_of,
)
from copeca_action.errors import VerificationError

if TYPE_CHECKING:
    from copeca_action.bundle import RenderedReport, Statement
    from copeca_action.records import RunRecord


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "verify", help="verify a .copeca bundle: hashes, signature, completeness",
        description="Read a .copeca bundle without extracting it, recompute every hash, check "
        "the DSSE signature and that the statement binds the manifest, check the runs "
        "against the plan, and recompute the report from the records (report.json, "
        "report.md and the signed summary must be it). Exit codes: 0 ok, 10 corrupt, "
        "11 tampered, 12 bad signature, 13 unsigned (a key was required), 14 incomplete, "
        "15 report (what it publishes is not the report its records give), 16 build (its "
        "report was made by another build, and this build recomputes it otherwise: not "
        "confirmed; verify it with the build named), 17 newer (a later copeca-action made "
        "it, in a format or with a field this build does not understand: upgrade to "
        "verify it).")
    p.add_argument("bundle", type=Path, help="the .copeca bundle to verify")
    add_check_flags(p)
    p.add_argument("--require-signature", action="store_true", help="fail (exit 13) on an "
                   "unsigned bundle even without --pubkey")
    p.add_argument("--json", action="store_true", help="print the outcome as JSON")
    p.set_defaults(func=run)


def _recompute(statement: Statement, records: list[RunRecord], scenario_yaml: bytes
               ) -> RenderedReport:
    """`conclude.recompute` as verify's report hook, imported only when a bundle has a
    report to check (numpy and the report's modules)."""
    from copeca_action.conclude._report import recompute

    return recompute(statement, records, scenario_yaml)[1]


def _size(n: int) -> str:
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if n >= scale:
            return f"{n / scale:.1f} {unit}"
    return f"{n} bytes"


def run(args: argparse.Namespace) -> int:
    import threading

    from copeca_action._util.blas import pin_before_load
    from copeca_action.bundle._prehash import ForkedMemberHashes, MemberHashes

    # hashing starts now, beside the imports below: in a child process while this one has
    # a single thread (fork copies only the calling thread), else on a thread
    hashes = (ForkedMemberHashes(args.bundle) if threading.active_count() == 1
              and hasattr(os, "fork") else MemberHashes(args.bundle))
    pin_before_load()  # the report recomputed below: verify starts no program
    from copeca_action._util.text import log_safe, shown

    try:
        from copeca_action.bundle import verify_bundle

        pubkey = pubkey_of(args)
        scenario, tasks = scenario_of(args)
        result = verify_bundle(args.bundle, pubkey, scenario, tasks, hashes=hashes,
                               report=_recompute)
        if args.require_signature and not result.signed:
            raise VerificationError("unsigned", "the bundle is unsigned and "
                                    "--require-signature was given")
    except VerificationError as exc:
        return _failed(args, exc)
    finally:  # a bad --pubkey or --scenario: stop hashing (and reap the child) at once
        hashes.cancel()
    if args.json:
        from copeca_action.bundle import summary_json

        print(summary_json(result))
        return 0
    from copeca_action.bundle import simulation_line

    # every value the bundle chose is escaped where it is put in a line (`shown`), and each
    # line passes `log_safe`: nothing a bundle holds moves a terminal's cursor, forges a
    # line of its own or is a workflow command to a CI runner
    predicate = result.statement.predicate
    shard = f" (shard {shown(predicate.shard)})" if predicate.shard else ""
    against = f", checked against {args.scenario}" if result.scenario_checked else \
        " (pass --scenario to check against the scenario as it is today)"
    lines = [f"OK {result.path}: {len(result.manifest.files)} files, "
             f"{_size(result.bytes_hashed)} hashed",
             f"signature: {describe_signature(result)}",
             f"runs: {len(result.plan.runs)}/{len(result.plan.runs)} of plan "
             f"{shown(predicate.plan_digest[:12])} ({shown(predicate.scenario)}){shard}"
             f"{against}"]
    if result.simulated:
        lines.append(f"SIMULATED: {simulation_line(result)}")
    if predicate.summary:
        s = predicate.summary
        from copeca_action.report import pct_text

        # as the report writes them: an unbounded side as ∞, never "+inf%"
        delta = pct_text(s.delta, (0.0,)) if s.delta is not None else "n/a"
        ci = (f" [{pct_text(s.delta_ci[0], (0.0,))}, {pct_text(s.delta_ci[1], (0.0,))}]"
              if s.delta_ci else "")
        lines.append(f"verdict: {shown(s.verdict, 40)}, delta {delta}{ci}{_level(s.extra)}")
        look = _look_note(s.extra)
        if look:
            lines.append(look)
    if result.report_checked:
        lines.append(f"report: {result.report_checked}")
    if result.attempts_checked:
        lines.append(f"earlier attempts: {result.attempts_checked}")
    if result.design_checked:
        lines.append(f"design: {result.design_checked}")
    scrubbed = result.manifest.scrubbed
    if scrubbed:
        lines.append(f"scrubbed: {sum(scrubbed.values())} redaction(s): "
                     + ", ".join(f"{shown(k, 80)} {v}" for k, v in scrubbed.items()))
    for line in lines:
        print(log_safe(line.replace("\n", " ")))
    return 0


def _level(extra: dict[str, object]) -> str:
    """The signed interval's level, as every output names it (an adaptive look's or a
    split alpha's is not 95%)."""
    from copeca_action._util.percent import level_text

    level = extra.get("level")
    return f" ({level_text(level)} interval)" if isinstance(level, float) else ""


def _look_note(extra: dict[str, object]) -> str:
    """Under adaptive sampling, the signed look: which, at which alpha, how much spent (the
    line report.md and the comment print beside the verdict)."""
    from pydantic import ValidationError

    from copeca_action.report import Look, Multiplicity

    try:
        look = Look.model_validate(extra["look"]) if "look" in extra else None
        split = (Multiplicity.model_validate(extra["multiplicity"]).comparisons
                 if "multiplicity" in extra else 1)
    except ValidationError:  # the signed summary is checked against its records elsewhere
        return ""
    return look.split_note(split) if look is not None else ""


def _failed(args: argparse.Namespace, exc: VerificationError) -> int:
    """`FAILED (kind): ...` on stderr, and with --json the same on stdout as JSON."""
    from copeca_action._util.text import log_safe

    if args.json:
        from copeca_action.bundle import failure_json

        print(failure_json(args.bundle, exc))
    print(f"FAILED ({exc.kind}): {log_safe(str(exc))}", file=sys.stderr)
    return exc.exit_code
