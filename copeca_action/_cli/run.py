"""`copeca-action run SCENARIO`: run a scenario's plan into an output folder (resumable)."""

from __future__ import annotations

import argparse
import math
import re
import sys
from collections import defaultdict
from pathlib import Path

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from rich.console import Console
from rich.table import Table

from copeca_action._cli._output import console as log_console
from copeca_action.bundle import load_public_key
from copeca_action.conclude import Concluded
from copeca_action.engine import OutputDir, RunStats
from copeca_action.errors import ConfigError
from copeca_action.pipeline import Prepared, conclude_prepared, execute, prepare_scenario
from copeca_action.records import RunRecord, latest_by_run_id


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("run", help="run a scenario: every task × arm × model × repetition",
                       description="Run a scenario's plan with the real agent CLIs into an "
                       "output folder (results.jsonl, runs/<run_id>/). Resumable.")
    p.add_argument("scenario", type=Path, help="the scenario YAML to run")
    p.add_argument("--dry-run", action="store_true",
                   help="run the real CLIs against the local scripted model playing the "
                   "benchmark's own scripts (its scenario's `scripts:`, else scripts/ beside "
                   "tasks/): no key, no cost, simulated numbers (docs/dry-run.md)")
    add_run_arguments(p)
    p.set_defaults(func=run)


def add_run_arguments(p: argparse.ArgumentParser, *, demo: bool = False) -> None:
    """The options of `run`; `demo` only those that apply to the bundled demo (no corpus,
    tool checkout, comparison, endpoint, budget, shard or reuse: it plays the scripted model
    on the bundled tool)."""
    p.add_argument("--out", type=Path, help="output folder (default: out/<scenario name>)")
    p.add_argument("--resume", action="store_true",
                   help="continue the plan in --out, skipping runs that already finished")
    p.add_argument("--start-over", action="store_true",
                   help="move what --out holds aside to OUT.old-<UTC time> (kept whole, "
                   "nothing deleted) and run the plan from scratch: after an agent CLI "
                   "upgrade or any change that makes the finished runs stale")
    if not demo:
        p.add_argument("--shard", help="i/n: only the i-th of n disjoint slices (1-based)")
        p.add_argument("--compare", choices=["baseline", "base-ref", "both"],
                       default="baseline",
                       help="what the tool is compared with: baseline (no tool), base-ref "
                       "(the tool at --base-tool-dir), or both (default baseline)")
        p.add_argument("--corpus", type=Path, help="corpus folder (default: the one holding "
                       "the scenario, else the bundled corpus)")
    p.add_argument("--cache", type=Path, help="snapshot cache (default: $COPECA_CACHE_DIR or "
                   "~/.cache/copeca-action)")
    if not demo:
        p.add_argument("--tool-dir", type=Path,
                       help="checkout of the tool under test ({tool_dir})")
        p.add_argument("--base-tool-dir", type=Path,
                       help="checkout of the tool at the base ref (for --compare base-ref/both)")
        p.add_argument("--base-url", help="model endpoint for the CLIs (default: the vendors, "
                       "or the scripted server when the scenario says model_endpoint: "
                       "scripted)")
    p.add_argument("--workers", type=int, help="agent runs at once (overrides the scenario)")
    if not demo:
        p.add_argument("--budget-usd", type=float,
                       help="scenario budget (overrides the scenario)")
    p.add_argument("--work-dir", type=Path, help="where per-run worktrees are made (default: "
                   "OUT/.worktrees); a tmpfs such as /dev/shm makes provisioning faster")
    p.add_argument("--plain", action="store_true", help="plain progress lines, no bar")
    p.add_argument("--key", type=Path, help="Ed25519 private key (PEM) that signs the bundle "
                   "(default: $COPECA_SIGNING_KEY; none: the bundle is unsigned)")
    p.add_argument("--bundle", type=Path, help="where the .copeca bundle goes "
                   "(default: OUT/<scenario>.copeca)")
    p.add_argument("--no-bundle", action="store_true",
                   help="write the report files but no bundle")
    if demo:
        p.set_defaults(shard=None, compare="baseline", corpus=None, tool_dir=None,
                       base_tool_dir=None, base_url=None, budget_usd=None, reuse=None,
                       reuse_pubkey=None)
        return
    p.add_argument("--reuse", type=Path, metavar="BUNDLE",
                   help="a previous .copeca bundle: after it verifies, its finished runs whose "
                   "run id and fingerprint match a planned run are copied, not run again "
                   "(see docs/reuse.md)")
    p.add_argument("--reuse-pubkey", type=Path, metavar="PEM",
                   help="require the --reuse bundle to be signed by this Ed25519 public key "
                   "(default: the signing key's public half when --key or "
                   "$COPECA_SIGNING_KEY is set, else any intact bundle)")


def prepare(args: argparse.Namespace, scenario_path: Path,
            out_default: Path | None = None) -> Prepared:
    if args.start_over and args.resume:
        raise ConfigError("--start-over and --resume: choose one (--resume continues the "
                          "folder's runs, --start-over moves them aside and runs afresh)",
                          file="--start-over")
    if args.workers is not None and not 1 <= args.workers <= 256:
        raise ConfigError(f"--workers {args.workers}: expected 1 to 256")
    if args.budget_usd is not None and not (math.isfinite(args.budget_usd)
                                            and args.budget_usd > 0):
        raise ConfigError(f"--budget-usd {args.budget_usd}: expected a positive number of "
                          "dollars")
    check_paths(args)
    prep = prepare_scenario(
        scenario_path, out=args.out, out_default=out_default, compare=args.compare,
        shard=args.shard, corpus=args.corpus, cache=args.cache, tool_dir=args.tool_dir,
        base_tool_dir=args.base_tool_dir, base_url=args.base_url, workers=args.workers,
        budget_usd=args.budget_usd, work_dir=args.work_dir,
        dry_run=getattr(args, "dry_run", False),
        sign=not getattr(args, "no_bundle", False), key_file=args.key)
    if args.reuse is not None:
        if not args.reuse.is_file():
            raise ConfigError(f"--reuse {args.reuse}: no such bundle file")
        prep.reuse = args.reuse
        if args.reuse_pubkey is not None:
            prep.reuse_pubkey = load_public_key(args.reuse_pubkey)
        elif prep.key is not None:
            prep.reuse_pubkey = prep.key.public_key()
    return prep


def check_paths(args: argparse.Namespace) -> None:
    """Folders and files named by flags, checked before anything is planned or paid for."""
    for flag, value, want in (("--out", args.out, "dir"), ("--work-dir", args.work_dir, "dir"),
                              ("--cache", args.cache, "dir"), ("--corpus", args.corpus, "dir!"),
                              ("--tool-dir", args.tool_dir, "dir!"),
                              ("--base-tool-dir", args.base_tool_dir, "dir!"),
                              ("--bundle", getattr(args, "bundle", None), "file")):
        if value is None:
            continue
        if want.startswith("dir") and value.exists() and not value.is_dir():
            raise ConfigError(f"{flag} {value}: is a file, expected a folder", file=flag)
        if want == "dir!" and not value.exists():
            raise ConfigError(f"{flag} {value}: no such folder", file=flag)
        if want == "file" and value.is_dir():
            raise ConfigError(f"{flag} {value}: is a folder, expected a file", file=flag)
    if args.base_url is not None and not re.match(r"^https?://[^\s/]+", args.base_url):
        raise ConfigError(f"--base-url {args.base_url!r}: expected http://HOST[:PORT][/PATH] "
                          "or https://…", file="--base-url")


def run(args: argparse.Namespace) -> int:
    prep = prepare(args, args.scenario)
    if args.start_over:
        start_over(log_console(), prep.cfg.out, "--start-over")
    with prep.cfg.out.held():  # the runs, the report and the bundle: one writer
        stats = execute(prep, resume=args.resume, plain=args.plain)
        console = log_console()
        print_summary(console, prep.cfg.out, stats)
        if stats.interrupted:
            return 130
        done = conclude_run(prep, args, prep.key)
    print_concluded(console, done)
    return 0


def start_over(console: Console, out: OutputDir, why: str) -> None:
    """Move the output folder aside (whole: its records of spend are kept) and say where."""
    records = out.records() if out.results.is_file() else []
    simulated = " (simulated)" if records and out.simulated_only() else ""
    lost = out.unrecorded_attempts()
    aside = out.move_aside()
    if aside is None:
        console.print(f"{why}: {out.root} holds no runs; nothing to move aside", soft_wrap=True)
        return
    spent = sum(r.cost_usd for r in records if r.cost_usd is not None)
    unknown = sum(r.cost_usd is None and r.reached_agent for r in records)
    console.print(f"{why}: moved {out.root} aside to {aside} ({len(records)} record(s), "
                  f"${spent:.4f} spent{simulated}"
                  + (f", {unknown} of unknown cost" if unknown else "")
                  + "; nothing deleted); starting over", soft_wrap=True)
    if lost:  # a killed harness's attempts: spent, in their folders, not in that sum
        console.print(f"[yellow]warning[/]: {lost} run folder(s) in {aside} hold an attempt "
                      "its results.jsonl lacks (a harness killed mid-run): their spend is not "
                      f"in the sum above; `run --resume --out {aside}` under the same "
                      "conditions records it", soft_wrap=True)


def conclude_run(prep: Prepared, args: argparse.Namespace,
                 key: Ed25519PrivateKey | None) -> Concluded:
    """Report and bundle of the output folder, the same way for `run` and `demo`."""
    bundle = None if args.no_bundle else (
        args.bundle or prep.cfg.out.root / f"{prep.cfg.scenario.name}.copeca")
    return conclude_prepared(prep, key, bundle)


def print_concluded(console: Console, done: Concluded) -> None:
    head = done.report.headline_comparison
    if done.report.simulated:
        console.print(f"[bold yellow]SIMULATED[/]: {done.report.simulation_note}",
                      soft_wrap=True)
    line = f"verdict: [bold]{done.report.verdict}[/]"
    if head is not None and (estimate := head.delta.estimate) is not None:
        from copeca_action.report import pct_text

        # as the report writes them: an unbounded side as ∞ (never "+inf%"), each bound
        # with the decimals that keep it on its side of zero and the fail threshold
        low, high, lines = head.delta.low, head.delta.high, (0.0, done.report.thresholds.fail)
        ci = (f" (CI {pct_text(low, lines)} to {pct_text(high, lines)})"
              if low is not None and high is not None else "")
        line += f", cost per correct {pct_text(estimate, lines)}{ci} {head.tool} vs {head.base}"
    console.print(line, soft_wrap=True)
    for name, path in done.files.items():
        console.print(f"{name}: {path}", soft_wrap=True)
    if done.bundle_path is not None:
        signed = f"signed by {done.keyid[:16]}…" if done.keyid else "UNSIGNED (no key given)"
        console.print(f"bundle: {done.bundle_path} sha256 {done.bundle_sha256} — verified, "
                      f"{signed}", soft_wrap=True)


def summary_rows(records: list[RunRecord]) -> list[tuple[str, str, int, int, int, float, int]]:
    """Per (arm, model): runs, finished, infra errors, spend, correct. No statistics here:
    the report stage computes those."""
    rows: dict[tuple[str, str], list[RunRecord]] = defaultdict(list)
    for record in records:
        rows[(record.arm, record.model)].append(record)
    out = []
    for (arm, model), recs in sorted(rows.items()):
        finished = [r for r in recs if r.outcome in ("ok", "agent_error", "timeout")]
        spend = sum(r.cost_usd for r in recs if r.cost_usd is not None)  # every attempt
        out.append((arm, model, len(recs), len(finished),
                    sum(r.outcome == "infra_error" for r in recs), spend,
                    sum(r.correct for r in recs)))
    return out


def print_summary(console: Console, out: OutputDir, stats: RunStats | None = None) -> None:
    records = list(latest_by_run_id(out.records()).values())
    table = Table(title=f"{out.root}", show_lines=False)
    for col in ("arm", "model", "runs", "done", "infra", "spend $", "correct"):
        if col in ("arm", "model"):
            table.add_column(col, no_wrap=True)
        else:
            table.add_column(col, justify="right")
    for arm, model, n, fin, infra, spend, correct in summary_rows(records):
        table.add_row(arm, model, str(n), str(fin), str(infra), f"{spend:.4f}", str(correct))
    console.print(table)
    outcomes: dict[str, int] = defaultdict(int)
    flags: dict[str, int] = defaultdict(int)
    for r in records:
        outcomes[r.outcome] += 1
        for f in r.flags:
            flags[f] += 1
    console.print("outcomes: " + ", ".join(f"{k} {v}" for k, v in sorted(outcomes.items())))
    if flags:
        console.print("flags: " + ", ".join(f"{k} {v}" for k, v in sorted(flags.items())))
    if stats is not None:
        extra = []
        if stats.reuse is not None:
            extra.append(stats.reuse.message())
        if stats.skipped_finished:
            extra.append(f"{stats.skipped_finished} already finished (resumed or reused)")
        if stats.retries:
            extra.append(f"{stats.retries} infra retries")
        if stats.budget_stopped:
            extra.append("budget reached: remaining runs recorded as budget_stop")
        if stats.interrupted:
            extra.append("interrupted: continue with --resume")
        if extra:
            console.print("; ".join(extra))
    console.print(f"results: {out.results}", soft_wrap=True)
    sys.stdout.flush()
