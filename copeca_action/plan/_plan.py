"""Scenario → RunPlan: the full matrix with stable run ids, and deterministic shards."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Annotated, Literal

from pydantic import Field

from copeca_action._util.hashing import sha256_json
from copeca_action._util.model import RecordModel
from copeca_action._util.text import one_line
from copeca_action.errors import ConfigError

if TYPE_CHECKING:  # a plan read from a bundle needs no scenario code
    from copeca_action.scenario import Scenario, Task

Compare = Literal["baseline", "base-ref", "both"]
BASE_SUFFIX = "@base"


class PlannedRun(RecordModel):
    """One cell of the matrix: what to run, not yet how it went."""

    run_id: str
    task_id: str
    task_hash: str
    arm: str
    """Mode name; `<mode>@base` runs the mode against the base ref of the tool."""
    model: str
    runner: str
    repetition: Annotated[int, Field(ge=0)]
    control: bool
    category: str
    language: str

    @property
    def mode(self) -> str:
        return self.arm.removesuffix(BASE_SUFFIX)


class Shard(RecordModel):
    index: Annotated[int, Field(ge=1)]
    """1-based."""
    count: Annotated[int, Field(ge=1)]

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"


class RunPlan(RecordModel):
    """The runs of a scenario (or of one shard of it), in execution order."""

    schema_version: Literal[1] = 1
    scenario: str
    scenario_hash: str
    """Digest of the scenario as loaded."""
    plan_digest: str
    """Digest of every run id of the whole plan: shards of one plan share it."""
    compare: Compare
    seed: int
    arms: list[str]
    shard: Shard | None = None
    runs: list[PlannedRun]

    def run_ids(self) -> list[str]:
        return [r.run_id for r in self.runs]


def run_id_for(task_id: str, task_hash: str, arm: str, model: str, repetition: int) -> str:
    """Stable across machines and reorderings; changes when the task's content changes."""
    return sha256_json([task_id, task_hash, arm, model, repetition])[:16]


def arms_for(scenario: Scenario, compare: Compare) -> list[str]:
    """`baseline`: the scenario's modes; `base-ref`: each tool mode at head and at base;
    `both`: baseline plus both."""
    tools = [m for m in scenario.modes if m != "baseline"]
    base = [f"{m}{BASE_SUFFIX}" for m in tools]
    if compare == "baseline":
        return list(scenario.modes)
    if compare == "base-ref":
        return [*tools, *base]
    return [*scenario.modes, *base]


MAX_PLANNED_RUNS = 1_000_000
"""Runs one plan may hold; each is a paid agent run. 664,000 (the bundled corpus, 2 models,
1000 repetitions) take 12 s to plan here; 20 models would take minutes and gigabytes before
anything else is checked."""


def build_plan(scenario: Scenario, tasks: Mapping[str, Task], compare: Compare = "baseline",
               repetitions: int | None = None) -> RunPlan:
    """Expand the matrix. Order: repetition-major, so a partial run covers every task early."""
    from copeca_action.scenario import select_task_ids

    ids = select_task_ids(scenario, list(tasks))
    if not ids:
        raise ConfigError(f"scenario {scenario.name!r}: no task matches include "
                          f"{scenario.tasks.include} minus exclude {scenario.tasks.exclude}")
    arms = arms_for(scenario, compare)
    if not arms:
        raise ConfigError(f"scenario {scenario.name!r}: --compare {compare} runs each tool mode "
                          "at head and at the base ref, and the scenario's only mode is "
                          "baseline: there is nothing to compare (the plan would be empty)",
                          "--compare")
    reps = repetitions if repetitions is not None else scenario.repetitions
    total = len(ids) * len(scenario.models) * len(arms) * reps
    if total > MAX_PLANNED_RUNS:
        raise ConfigError(f"scenario {scenario.name!r}: {len(ids)} tasks × "
                          f"{len(scenario.models)} models × {len(arms)} arms × {reps} "
                          f"repetitions is {total:,} runs; a plan holds at most "
                          f"{MAX_PLANNED_RUNS:,} (fewer repetitions, models or tasks)")
    runs = []
    for rep in range(reps):
        for task_id in ids:
            task = tasks[task_id]
            digest = task.content_hash()
            for model in scenario.models:
                for arm in arms:
                    runs.append(PlannedRun(
                        run_id=run_id_for(task_id, digest, arm, model, rep), task_id=task_id,
                        task_hash=digest, arm=arm, model=model,
                        runner=scenario.model_runner_map[model], repetition=rep,
                        control=task.control, category=task.category, language=task.language))
    return RunPlan(scenario=scenario.name, scenario_hash=sha256_json(scenario.model_dump(
        mode="json"))[:16], plan_digest=sha256_json(sorted(r.run_id for r in runs)),
        compare=compare, seed=scenario.seed, arms=arms, runs=runs)


def unreachable_min_runs(scenario: Scenario, plan: RunPlan) -> str | None:
    """Why no verdict of this plan can be other than `inconclusive`: an arm plans fewer
    runs (every task and model, at the most repetitions adaptive sampling may reach) than
    `thresholds.min_runs`, so the runs would be paid for a verdict decided in advance.
    None when every arm can reach it."""
    reps = scenario.repetitions
    if scenario.adaptive is not None and scenario.adaptive.enabled:
        reps = scenario.adaptive.max_repetitions
    cells: dict[str, set[tuple[str, str]]] = {arm: set() for arm in plan.arms}
    for run in plan.runs:
        cells.setdefault(run.arm, set()).add((run.task_id, run.model))
    most = {arm: len(found) * reps for arm, found in cells.items()}
    arm = min(most, key=lambda a: (most[a], a), default=None)
    need = scenario.thresholds.min_runs
    if arm is None or most[arm] >= need:
        return None
    return (f"thresholds.min_runs: arm {arm!r} has at most {most[arm]} run(s) "
            f"({len(cells[arm])} task × model pair(s) × {reps} repetition(s)), below "
            f"min_runs {need}: every verdict of this scenario would be `inconclusive`, "
            "whatever the runs show. Add tasks or repetitions, or lower thresholds.min_runs")


MAX_SHARDS = 10_000
"""More shards than any matrix runs (GitHub's holds 256 jobs)."""


def parse_shard(text: str) -> Shard:
    """`i/n` with 1 ≤ i ≤ n ≤ MAX_SHARDS, in ASCII digits."""
    shown = repr(one_line(text, 40))
    match = re.fullmatch(r"\s*([0-9]+)\s*/\s*([0-9]+)\s*", text)
    if not match:
        raise ConfigError(f"--shard {shown}: expected i/n in digits, e.g. 2/3")
    if max(len(match.group(1)), len(match.group(2))) > len(str(MAX_SHARDS)):
        raise ConfigError(f"--shard {shown}: n is at most {MAX_SHARDS:,}")
    index, count = int(match.group(1)), int(match.group(2))
    if count > MAX_SHARDS:
        raise ConfigError(f"--shard {shown}: n is at most {MAX_SHARDS:,}")
    if count < 1 or not 1 <= index <= count:
        raise ConfigError(f"--shard {shown}: i must be between 1 and n (shards are 1-based)")
    return Shard(index=index, count=count)


def _groups(plan: RunPlan) -> list[list[PlannedRun]]:
    """The plan's runs in shardable groups: every arm of a task-repetition together."""
    cell = max(1, len(plan.arms))
    return [plan.runs[i:i + cell] for i in range(0, len(plan.runs), cell)]


def shard_plan(plan: RunPlan, shard: Shard) -> RunPlan:
    """Round-robin over the plan's order: shards are disjoint, their union is the plan, and
    each shard gets every arm of a task-repetition together when arms divide evenly."""
    mine = [run for g, group in enumerate(_groups(plan)) if g % shard.count == shard.index - 1
            for run in group]
    return plan.model_copy(update={"runs": mine, "shard": shard})


def shard_of(plan: RunPlan, text: str) -> RunPlan:
    """The runs of `--shard i/n` (`text`) of `plan`, for `plan` and `run`. Refused when n is
    more than the plan's groups (a task, model and repetition with all its arms): some
    shards would run nothing, a matrix wider than the work (`1/999999999999` was accepted)."""
    shard = parse_shard(text)
    shown = repr(one_line(text, 40))
    groups = len(_groups(plan))
    if shard.count > groups:
        raise ConfigError(f"--shard {shown}: the plan splits into {groups:,} group(s) of runs "
                          "(a task, model and repetition with all its arms), so shards past "
                          f"{groups:,} would run nothing; use at most {groups:,} shards")
    return shard_plan(plan, shard)
