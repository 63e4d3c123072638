"""The run pipeline, prepare → execute → conclude, as a library: the CLI (`run`, `demo`) and
the GitHub layer call the same three steps, so a check that can fail runs in `prepare`,
before the first paid run, whichever door the user came in by."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import yaml
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from copeca_action._util.paths import corpus_dir
from copeca_action.bundle import ReusableBundle, load_signing_key
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
from copeca_action.errors import ConfigError, CopecaError, InfraError
from copeca_action.pipeline._preflight import check_scripts, preflight
from copeca_action.plan import (
    Compare,
    RunPlan,
    build_plan,
    shard_of,
    unreachable_min_runs,
)
from copeca_action.records import latest_by_run_id
from copeca_action.render import TrendRun
from copeca_action.scenario import (
    Corpus,
    Scenario,
    check_references,
    corpus_folder,
    find_corpus_root,
    load_corpus,
    load_scenario,
    require_prices,
    scripts_folder,
)
from copeca_action.workspace import SnapshotStore, default_cache_dir


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
    dry_run: bool = False
    """The plan runs the real CLIs against the scripted model: simulated numbers."""
    key: Ed25519PrivateKey | None = None
    """The signing key, loaded (and checked) before the first run when `sign` was asked."""


DRY_RUN_HOWTO = (
    "a dry run plays scripts of the model's replies, one per task and arm; write them in a "
    "`scripts/` folder beside tasks/ (or name a folder with the scenario's `scripts:`). "
    "docs/dry-run.md has worked examples for an MCP server, a hook and a wrapper, and "
    "`copeca-action init` scaffolds a set for your tool")


def dry_run_scripts(scenario: Scenario, scenario_path: Path, corpus_root: Path) -> Path:
    """The scripts a dry run of this scenario plays: the scenario's `scripts:` folder, else
    the benchmark's own `scripts/` (beside tasks/). Never the bundled demo scripts for a
    user's benchmark: those do not call the user's tool, so every run would read as
    "0% adoption" and any new task as HTTP 400 "no script matches"."""
    if scenario.scripts:
        found, why = scripts_folder(scenario_path, scenario.scripts, corpus_root)
        if why:
            raise ConfigError(f"{scenario_path}: scripts: {why}; {DRY_RUN_HOWTO}")
        return found
    found = corpus_root / "scripts"
    if found.is_dir() and any(found.rglob("*.yaml")):
        return found.resolve()
    raise ConfigError(f"{scenario_path}: --dry-run needs scripts for this benchmark, and "
                      f"neither the scenario's `scripts:` nor {found} has any; {DRY_RUN_HOWTO}")


def prepare_scenario(scenario_path: Path, *, out: Path | None = None,
                     out_default: Path | None = None, compare: Compare = "baseline",
                     shard: str | None = None, corpus: Path | None = None,
                     cache: Path | None = None, tool_dir: Path | None = None,
                     base_tool_dir: Path | None = None, base_url: str | None = None,
                     workers: int | None = None, budget_usd: float | None = None,
                     work_dir: Path | None = None,
                     overrides: dict[str, object] | None = None,
                     dry_run: bool = False, sign: bool = False,
                     key_file: Path | None = None) -> Prepared:
    """The plan and engine configuration of a scenario, without argparse (the GitHub
    entrypoint calls this too). `overrides` are scenario fields (e.g. thresholds).
    `dry_run`: the real CLIs against the scripted model playing the benchmark's own scripts
    (`dry_run_scripts`); no key, no cost, and every record says `endpoint: dry_run`, so every
    report of it is labelled simulated. With `sign`, the signing key (`key_file`, else
    $COPECA_SIGNING_KEY) is loaded here, before any run is paid for: a bad key stops the job
    now, not after the runs."""
    key = load_signing_key(key_file) if sign else None
    scenario = load_scenario(scenario_path)
    changes: dict[str, object] = dict(overrides or {})
    root = (corpus_folder(corpus, "--corpus") if corpus is not None
            else find_corpus_root(scenario_path.resolve()))
    if dry_run and base_url is None:
        changes["model_endpoint"] = "scripted"
        changes["scripts"] = str(dry_run_scripts(scenario, scenario_path,
                                                 root or corpus_dir()))
    if workers is not None:
        changes["workers"] = workers
    if budget_usd is not None:
        changes["budget_usd"] = budget_usd
    if changes:
        scenario = Scenario.model_validate({**scenario.model_dump(), **changes})
    loaded: Corpus = load_corpus(root).require_ok()
    check_references(scenario, loaded, scenario_path)
    # Refuse before the first paid run: a model no table prices and no CLI reports.
    price_warnings = [str(w) for w in require_prices(scenario, scenario_path, loaded)]
    for warning in price_warnings:
        print(f"warning: {warning}", file=sys.stderr, flush=True)
    plan = build_plan(scenario, loaded.tasks, compare=compare)
    design = unreachable_min_runs(scenario, plan)
    if design:
        print(f"warning: {scenario_path}: {design}", file=sys.stderr, flush=True)
    if shard:
        plan = shard_of(plan, shard)
    outdir = OutputDir(out or out_default or Path("out") / scenario.name, work_dir)
    store = SnapshotStore(cache or default_cache_dir(), loaded.repos, repos_dir=loaded.root)
    cfg = EngineConfig(scenario=scenario, corpus=loaded, out=outdir, store=store,
                       base_url=base_url, tool_dir=tool_dir, base_tool_dir=base_tool_dir,
                       endpoint_kind="dry_run" if dry_run else "real")
    return Prepared(cfg=cfg, plan=plan, scenario_path=scenario_path, dry_run=dry_run,
                    key=key)


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
    scripts, why = scripts_folder(prep.scenario_path, cfg.scenario.scripts, cfg.corpus.root)
    if why:
        raise ConfigError(f"{prep.scenario_path}: scripts: {why}")
    check_scripts(cfg, prep.plan, scripts)  # before the server starts or any run
    cfg.out.root.mkdir(parents=True, exist_ok=True)
    with ScriptedServer(scripts, seed=cfg.scenario.seed,
                        log_path=cfg.out.root / "model-requests.jsonl") as server:
        kind = cfg.endpoint_kind
        cfg.base_url = server.url
        cfg.endpoint = scripts_id(scripts, cfg.scenario.seed)
        cfg.endpoint_kind = "dry_run" if kind == "dry_run" else "scripted"
        try:
            yield server.url
        finally:
            cfg.base_url = None
            cfg.endpoint = None
            cfg.endpoint_kind = kind


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


def scenario_as_run(path: Path, scenario: Scenario) -> str:
    """The scenario file a run keeps beside its results (OUT/scenario.yaml): the file as the
    user wrote it, unless the run's thresholds are not the file's (the action's
    `alert-threshold` / `fail-threshold` inputs): then the file with the thresholds as run
    (its comments lost), so `analyze` of the output folder judges with the design its
    records name (`records.Design`) and not the file's thresholds."""
    text = path.read_text()
    if load_scenario(path).thresholds == scenario.thresholds:
        return text
    data = yaml.safe_load(text)
    data["thresholds"] = {key: _as_written(value) if key in ("alert", "fail") else value
                          for key, value in scenario.thresholds.model_dump(mode="json").items()}
    return ("# the scenario as run: thresholds with the action's threshold inputs over "
            f"{path.name}'s\n" + yaml.safe_dump(data, sort_keys=False, allow_unicode=True))


def _as_written(value: float) -> float | str:
    """A delta threshold as a scenario file may hold it and reads back exactly: a fraction
    below 1 as it is, else a percentage (a bare number of 1 or more is refused there)."""
    if value < 1:
        return value
    for digits in range(15, 18):
        text = f"{value * 100:.{digits}g}%"
        if float(text[:-1]) / 100 == value:
            return text
    return f"{value * 100!r}%"


def execute(prep: Prepared, *, resume: bool, plain: bool) -> RunStats:
    text = scenario_as_run(prep.scenario_path, prep.cfg.scenario)
    with model_endpoint(prep), reuse_offer(prep) as offer:
        preflight(prep.cfg, prep.plan)  # keys and tools, before the first paid run
        prep.cfg.reuse = offer
        try:
            stats = run_plan(prep.cfg, prep.plan, resume=resume, scenario_text=text,
                             progress=make_progress(plain=plain or None))
        finally:
            prep.cfg.reuse = None
    final = list(latest_by_run_id(prep.cfg.out.records()).values())
    if final and not stats.interrupted and all(r.outcome == "infra_error" for r in final):
        raise InfraError(f"every run ({len(final)}) ended in an infra error, so there is "
                         f"nothing to report; the last: {final[-1].error}")
    return stats


def conclude_prepared(prep: Prepared, key: Ed25519PrivateKey | None,
                      bundle: Path | None, trend: Sequence[TrendRun] = ()) -> Concluded:
    """Report files and (with `bundle`) the signed bundle, verified; completeness is checked
    against the tasks only for a whole plan, not a shard."""
    cfg = prep.cfg
    plan = prep.plan
    if cfg.scenario.adaptive is not None and cfg.scenario.adaptive.enabled:
        plan = cfg.out.existing_plan() or plan  # the rounds actually planned
    whole = plan.shard is None
    return conclude(cfg.out.root, prep.scenario_path, cfg.scenario, plan,
                    runners=cfg.corpus.runners, tasks=cfg.corpus.tasks if whole else None,
                    key=key, bundle_path=bundle, trend=trend)
