"""`copeca-action run SCENARIO`: run a scenario's plan into an output folder (resumable)."""

from __future__ import annotations

import argparse
import contextlib
import sys
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from rich.console import Console
from rich.table import Table

from copeca_action.bundle import ReusableBundle, load_public_key, load_signing_key
from copeca_action.conclude import Concluded, conclude
from copeca_action.engine import (
    EngineConfig,
    OutputDir,
    ReuseOffer,
    RunStats,
    make_progress,
    run_plan,
    scripts_id,
)
from copeca_action.errors import ConfigError, CopecaError
from copeca_action.plan import Compare, RunPlan, build_plan, parse_shard, shard_plan
from copeca_action.records import RunRecord, latest_by_run_id
from copeca_action.scenario import Corpus, Scenario, find_corpus_root, load_corpus, load_scenario
from copeca_action.workspace import SnapshotStore, default_cache_dir


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("run", help="run a scenario: every task × arm × model × repetition",
                       description="Run a scenario's plan with the real agent CLIs into an "
                       "output folder (results.jsonl, runs/<run_id>/). Resumable.")
    p.add_argument("scenario", type=Path)
    add_run_arguments(p)
    p.set_defaults(func=run)


def add_run_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--out", type=Path, help="output folder (default: out/<scenario name>)")
    p.add_argument("--resume", action="store_true",
                   help="continue the plan in --out, skipping runs that already finished")
    p.add_argument("--shard", help="i/n: only the i-th of n disjoint slices (1-based)")
    p.add_argument("--compare", choices=["baseline", "base-ref", "both"], default="baseline")
    p.add_argument("--corpus", type=Path, help="corpus folder (default: the one holding the "
                   "scenario, else the bundled corpus)")
    p.add_argument("--cache", type=Path, help="snapshot cache (default: $COPECA_CACHE_DIR or "
                   "~/.cache/copeca-action)")
    p.add_argument("--tool-dir", type=Path, help="checkout of the tool under test ({tool_dir})")
    p.add_argument("--base-tool-dir", type=Path,
                   help="checkout of the tool at the base ref (for --compare base-ref/both)")
    p.add_argument("--base-url", help="model endpoint for the CLIs (default: the vendors, or "
                   "the scripted server when the scenario says model_endpoint: scripted)")
    p.add_argument("--workers", type=int, help="agent runs at once (overrides the scenario)")
    p.add_argument("--budget-usd", type=float, help="scenario budget (overrides the scenario)")
    p.add_argument("--work-dir", type=Path, help="where per-run worktrees are made (default: "
                   "OUT/.worktrees); a tmpfs such as /dev/shm makes provisioning faster")
    p.add_argument("--plain", action="store_true", help="plain progress lines, no bar")
    p.add_argument("--key", type=Path, help="Ed25519 private key (PEM) that signs the bundle "
                   "(default: $COPECA_SIGNING_KEY; none: the bundle is unsigned)")
    p.add_argument("--bundle", type=Path, help="where the .copeca bundle goes "
                   "(default: OUT/<scenario>.copeca)")
    p.add_argument("--no-bundle", action="store_true",
                   help="write the report files but no bundle")
    p.add_argument("--reuse", type=Path, metavar="BUNDLE",
                   help="a previous .copeca bundle: after it verifies, its finished runs whose "
                   "run id and fingerprint match a planned run are copied, not run again "
                   "(see docs/reuse.md)")
    p.add_argument("--reuse-pubkey", type=Path, metavar="PEM",
                   help="require the --reuse bundle to be signed by this Ed25519 public key "
                   "(default: the signing key's public half when --key or "
                   "$COPECA_SIGNING_KEY is set, else any intact bundle)")


@dataclass
class Prepared:
    cfg: EngineConfig
    plan: RunPlan
    scenario_path: Path
    reuse: Path | None = None
    """A previous bundle whose unchanged finished runs are taken instead of run."""
    reuse_pubkey: Ed25519PublicKey | None = None
    """The key that must have signed `reuse` (None: any intact bundle, signed or not)."""
    reuse_warning: str | None = None
    """Set by `execute` when the `reuse` bundle was refused (nothing was reused)."""


def prepare(args: argparse.Namespace, scenario_path: Path,
            out_default: Path | None = None) -> Prepared:
    if args.workers is not None and args.workers < 1:
        raise ConfigError("--workers must be at least 1")
    if args.budget_usd is not None and args.budget_usd <= 0:
        raise ConfigError("--budget-usd must be positive")
    prep = prepare_scenario(
        scenario_path, out=args.out, out_default=out_default, compare=args.compare,
        shard=args.shard, corpus=args.corpus, cache=args.cache, tool_dir=args.tool_dir,
        base_tool_dir=args.base_tool_dir, base_url=args.base_url, workers=args.workers,
        budget_usd=args.budget_usd, work_dir=args.work_dir)
    if args.reuse is not None:
        if not args.reuse.is_file():
            raise ConfigError(f"--reuse {args.reuse}: no such bundle file")
        prep.reuse = args.reuse
        if args.reuse_pubkey is not None:
            prep.reuse_pubkey = load_public_key(args.reuse_pubkey)
        elif (key := load_signing_key(args.key)) is not None:
            prep.reuse_pubkey = key.public_key()
    return prep


def prepare_scenario(scenario_path: Path, *, out: Path | None = None,
                     out_default: Path | None = None, compare: Compare = "baseline",
                     shard: str | None = None, corpus: Path | None = None,
                     cache: Path | None = None, tool_dir: Path | None = None,
                     base_tool_dir: Path | None = None, base_url: str | None = None,
                     workers: int | None = None, budget_usd: float | None = None,
                     work_dir: Path | None = None,
                     overrides: dict[str, object] | None = None) -> Prepared:
    """The plan and engine configuration of a scenario, without argparse (the GitHub
    entrypoint calls this too). `overrides` are scenario fields (e.g. thresholds)."""
    scenario = load_scenario(scenario_path)
    changes: dict[str, object] = dict(overrides or {})
    if workers is not None:
        changes["workers"] = workers
    if budget_usd is not None:
        changes["budget_usd"] = budget_usd
    if changes:
        scenario = Scenario.model_validate({**scenario.model_dump(), **changes})
    root = corpus or find_corpus_root(scenario_path.resolve())
    loaded: Corpus = load_corpus(root).require_ok()
    plan = build_plan(scenario, loaded.tasks, compare=compare)
    if shard:
        plan = shard_plan(plan, parse_shard(shard))
    outdir = OutputDir(out or out_default or Path("out") / scenario.name, work_dir)
    store = SnapshotStore(cache or default_cache_dir(), loaded.repos)
    cfg = EngineConfig(scenario=scenario, corpus=loaded, out=outdir, store=store,
                       base_url=base_url, tool_dir=tool_dir, base_tool_dir=base_tool_dir)
    return Prepared(cfg=cfg, plan=plan, scenario_path=scenario_path)


@contextlib.contextmanager
def model_endpoint(prep: Prepared) -> Iterator[str | None]:
    """The scripted server for `model_endpoint: scripted` scenarios (unless --base-url)."""
    cfg = prep.cfg
    if cfg.base_url or cfg.scenario.model_endpoint != "scripted":
        yield cfg.base_url
        return
    from copeca_action.scripted import ScriptedServer

    if not cfg.scenario.scripts:
        raise ConfigError(f"{prep.scenario_path}: model_endpoint is scripted but `scripts` "
                          "names no folder of scripts")
    scripts = (prep.scenario_path.resolve().parent / cfg.scenario.scripts).resolve()
    if not scripts.is_dir():
        raise ConfigError(f"{prep.scenario_path}: scripts folder {scripts} does not exist")
    cfg.out.root.mkdir(parents=True, exist_ok=True)
    with ScriptedServer(scripts, seed=cfg.scenario.seed,
                        log_path=cfg.out.root / "model-requests.jsonl") as server:
        cfg.base_url = server.url
        cfg.endpoint = scripts_id(scripts, cfg.scenario.seed)
        try:
            yield server.url
        finally:
            cfg.base_url = None
            cfg.endpoint = None


@contextlib.contextmanager
def reuse_offer(prep: Prepared) -> Iterator[ReuseOffer | None]:
    """The `reuse` bundle, verified, as the engine's offer; a bundle that does not verify
    gives a warning (prep.reuse_warning) and no offer: it is never trusted in part."""
    if prep.reuse is None:
        yield None
        return
    try:
        bundle = ReusableBundle(prep.reuse, prep.reuse_pubkey)
    except CopecaError as exc:
        prep.reuse_warning = (f"reuse: {prep.reuse.name} was not reused, every planned run "
                              f"runs: it does not verify ({exc})")
        print(f"warning: {prep.reuse_warning}", file=sys.stderr, flush=True)
        yield None
        return
    with bundle:
        yield ReuseOffer(sha256=bundle.sha256, name=prep.reuse.name, records=bundle.records,
                         extract=bundle.extract)


def execute(prep: Prepared, *, resume: bool, plain: bool) -> RunStats:
    text = prep.scenario_path.read_text()
    with model_endpoint(prep), reuse_offer(prep) as offer:
        prep.cfg.reuse = offer
        try:
            return run_plan(prep.cfg, prep.plan, resume=resume, scenario_text=text,
                            progress=make_progress(plain=plain or None))
        finally:
            prep.cfg.reuse = None


def run(args: argparse.Namespace) -> int:
    prep = prepare(args, args.scenario)
    stats = execute(prep, resume=args.resume, plain=args.plain)
    console = Console()
    print_summary(console, prep.cfg.out, stats)
    if stats.interrupted:
        return 130
    done = conclude_run(prep, args, load_signing_key(args.key))
    print_concluded(console, done)
    return 0


def conclude_run(prep: Prepared, args: argparse.Namespace,
                 key: Ed25519PrivateKey | None) -> Concluded:
    """Report and bundle of the output folder, the same way for `run` and `demo`."""
    bundle = None if args.no_bundle else (
        args.bundle or prep.cfg.out.root / f"{prep.cfg.scenario.name}.copeca")
    return conclude_prepared(prep, key, bundle)


def conclude_prepared(prep: Prepared, key: Ed25519PrivateKey | None,
                      bundle: Path | None) -> Concluded:
    """Report files and (with `bundle`) the signed bundle, verified; completeness is checked
    against the tasks only for a whole plan, not a shard."""
    cfg = prep.cfg
    plan = prep.plan
    if cfg.scenario.adaptive is not None and cfg.scenario.adaptive.enabled:
        plan = cfg.out.existing_plan() or plan  # the rounds actually planned
    whole = plan.shard is None
    return conclude(cfg.out.root, prep.scenario_path, cfg.scenario, plan,
                    runners=cfg.corpus.runners, tasks=cfg.corpus.tasks if whole else None,
                    key=key, bundle_path=bundle)


def print_concluded(console: Console, done: Concluded) -> None:
    head = done.report.headline_comparison
    line = f"verdict: [bold]{done.report.verdict}[/]"
    if head is not None and head.delta.estimate is not None:
        d = head.delta
        ci = (f" (CI {d.low:+.1%} to {d.high:+.1%})" if d.low is not None and d.high is not None
              else "")
        line += f", cost per correct {d.estimate:+.1%}{ci} {head.tool} vs {head.base}"
    console.print(line)
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
        spend = sum(r.cost_usd for r in recs if r.reached_agent)
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
