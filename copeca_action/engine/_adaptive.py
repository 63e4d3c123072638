"""Adaptive sampling in the engine: repetitions in rounds, `report.decide` after each round,
stop as soon as the verdict is decided.

The runs of rounds never started are not planned: OUT/plan.json always holds the *effective*
plan (every repetition up to the last round run), so the bundle's completeness check sees a
whole plan, and `verify` against the scenario rebuilds that plan from the scenario's adaptive
schedule (the repetition count must be one of its looks). Every look is logged in
OUT/adaptive.json.

The published report (conclude, the bundle, the comment, the gate) is the decision of the last
look at that look's alpha: `build_report` resolves the look from the records' repetitions
(`Settings.adaptive`), exactly as `decide` does here, so adaptive.json and report.json cannot
disagree (tests/unit/engine/test_scheduler.py runs both).
"""

from __future__ import annotations

import json
from collections.abc import Callable

from copeca_action.engine._context import EngineConfig
from copeca_action.engine._outdir import write_atomic
from copeca_action.errors import ConfigError
from copeca_action.plan import RunPlan, build_plan
from copeca_action.records import latest_by_run_id
from copeca_action.report import decide
from copeca_action.scenario import Adaptive

ADAPTIVE_LOG = "adaptive.json"


def adaptive_of(cfg: EngineConfig) -> Adaptive | None:
    adaptive = cfg.scenario.adaptive
    return adaptive if adaptive is not None and adaptive.enabled else None


def run_rounds(cfg: EngineConfig, plan: RunPlan, adaptive: Adaptive,
               run_round: Callable[[RunPlan, bool], tuple[bool, bool]], resume: bool) -> RunPlan:
    """Run rounds until decided, stopped or at max_repetitions; returns the effective plan.
    `run_round(plan, resume)` runs one round and says (interrupted, budget_stopped)."""
    if plan.shard is not None:
        raise ConfigError("adaptive sampling needs every run of a round in one place; it "
                          "cannot run sharded (--shard): drop `adaptive:` or the shard")
    reps = adaptive.min_repetitions
    old = cfg.out.existing_plan() if resume else None
    if old is not None and old.scenario == plan.scenario and old.runs:
        reps = max(reps, max(r.repetition for r in old.runs) + 1)
    # a resumed run keeps the looks it already took (their alpha is spent): the log shows
    # every one, up to the round it resumes
    looks = [look for repetitions, look in (_logged_looks(cfg, adaptive) if resume else [])
             if repetitions < reps]
    current = plan
    first = True
    while True:
        current = build_plan(cfg.scenario, cfg.corpus.tasks, compare=plan.compare,
                             repetitions=reps)
        interrupted, budget_stopped = run_round(current, resume or not first)
        first = False
        if interrupted or budget_stopped:
            break
        records = list(latest_by_run_id(cfg.out.records()).values())
        decision = decide(records, cfg.scenario)
        looks.append(json.loads(decision.model_dump_json()))
        write_atomic(cfg.out.root / ADAPTIVE_LOG, json.dumps(
            {"adaptive": adaptive.model_dump(mode="json"), "looks": looks,
             "planned_repetitions": reps}, indent=2) + "\n")
        if decision.stop or decision.next_repetitions is None:
            break
        reps = decision.next_repetitions
    return current


def _logged_looks(cfg: EngineConfig,
                  adaptive: Adaptive) -> list[tuple[int, dict[str, object]]]:
    """The looks OUT/adaptive.json logged before a resume, each with its repetitions.
    Refused when they were taken on another schedule: the alpha those looks spent was their
    schedule's share, and the union bound holds only if every look of the run spends from
    one schedule."""
    path = cfg.out.root / ADAPTIVE_LOG
    if not path.is_file():
        return []
    try:
        data = json.loads(path.read_text())
        before = Adaptive.model_validate(data["adaptive"])
        looks = [(int(look["repetitions"]), dict(look)) for look in data["looks"]]
    except (ValueError, KeyError, TypeError) as exc:
        raise ConfigError(f"not the log of an adaptive run's looks ({exc}); expected "
                          "{adaptive: ..., looks: [{repetitions: ...}, ...]} as the engine "
                          "writes it", path) from exc
    if before != adaptive:
        raise ConfigError(f"adaptive: the looks logged here were taken on the schedule "
                          f"{before.model_dump(mode='json')}, the scenario now has "
                          f"{adaptive.model_dump(mode='json')}; a resumed run must spend its "
                          "alpha on the schedule it started with (restore `adaptive:` or run "
                          "into a new output folder)", path)
    return looks
