"""Run fingerprints: a digest of everything that, changed, makes a finished run's result
stale. Two runs with the same run id and fingerprint would be measured under the same
conditions, so a result of one may stand for the other (see docs/reuse.md).

The parts, per run: the harness version; the runner's definition and the CLI version probed
before any run; the model; the mode's definition as written (and, when it names
`{tool_dir}`, the content of the tool checkout that arm uses); the task's content hash, its
repository pin and set-up, and the snapshot commit really resolved; the settings that shape a
run (timeout, max turns, per-run budget, model endpoint, evaluation sandbox, flag rules).
"""

from __future__ import annotations

import dataclasses
import hashlib
import logging
from pathlib import Path

from copeca_action._util.hashing import sha256_json
from copeca_action._util.scrub import scrub_log_record
from copeca_action.engine._context import EngineConfig, Resolved
from copeca_action.errors import CopecaError
from copeca_action.plan import BASE_SUFFIX, RunPlan
from copeca_action.workspace import folder_content_id

_LOG = logging.getLogger(__name__)
_LOG.addFilter(scrub_log_record)  # an error it logs may quote a secret
VERSION = 1
"""Bumped when the parts change, so older fingerprints never match newer ones."""


def scripts_id(folder: Path, seed: int) -> str:
    """The scripted model's identity: every script file's name and bytes, and the seed."""
    digest = hashlib.sha256()
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        digest.update(path.relative_to(folder).as_posix().encode() + b"\0"
                      + hashlib.sha256(path.read_bytes()).hexdigest().encode() + b"\n")
    return f"scripted:{digest.hexdigest()}:seed={seed}"


def endpoint_id(cfg: EngineConfig) -> str:
    """What answers the CLIs: `cfg.endpoint` when the caller named it (the scripted server),
    else the given base URL, else the vendors' APIs."""
    if cfg.endpoint:
        return cfg.endpoint
    return f"url:{cfg.base_url}" if cfg.base_url else "vendor"


def _tool_part(cfg: EngineConfig, arm: str, mode_text: str) -> str | None:
    """The content id of the arm's tool checkout; "" when the mode names no `{tool_dir}`,
    None when it cannot be read (then the arm's runs get no fingerprint)."""
    if "{tool_dir}" not in mode_text:
        return ""
    folder = cfg.base_tool_dir if arm.endswith(BASE_SUFFIX) else cfg.tool_dir
    if folder is None:
        return None
    try:
        # the output folder (results, run folders) and the worktrees are the harness's,
        # not the tool's, even when they lie inside a tool folder outside git
        return folder_content_id(folder, (cfg.out.root, cfg.out.worktrees))
    except (CopecaError, OSError) as exc:
        _LOG.warning("no fingerprint for arm %s: its tool folder %s could not be read (%s)",
                     arm, folder, exc)
        return None


def tool_arms(cfg: EngineConfig, plan: RunPlan) -> set[str]:
    """The arms whose fingerprint holds the content of a tool checkout (their mode names
    `{tool_dir}`)."""
    found = set()
    for arm in plan.arms:
        mode = cfg.corpus.modes.get(arm.removesuffix(BASE_SUFFIX))
        if mode is not None and "{tool_dir}" in mode.model_dump_json():
            found.add(arm)
    return found


def fingerprints(cfg: EngineConfig, res: Resolved, plan: RunPlan) -> dict[str, str | None]:
    """Run id → fingerprint; None when a part cannot be known (a CLI that prints no
    version, an unreadable tool folder), so such a run is never taken for another. Each
    part is digested once; a run's fingerprint is the digest of its parts' digests."""
    from copeca_action import __version__  # the package root imports the engine

    scenario = cfg.scenario
    settings = sha256_json({
        "v": VERSION, "harness": __version__, "timeout_s": scenario.timeout_s,
        "max_turns": scenario.max_turns, "run_budget_usd": scenario.run_budget_usd,
        "endpoint": endpoint_id(cfg), "eval_backend": cfg.eval_backend,
        "flag_rules": dataclasses.asdict(cfg.rules)})
    arms: dict[str, str] = {}
    for arm in plan.arms:
        mode = cfg.corpus.modes.get(arm.removesuffix(BASE_SUFFIX))
        tool = _tool_part(cfg, arm, mode.model_dump_json()) if mode is not None else None
        if mode is not None and tool is not None:
            arms[arm] = sha256_json({"arm": arm, "mode": mode.model_dump(mode="json"),
                                     "tool": tool})
    runners = {name: sha256_json({"runner": runner.model_dump(mode="json"),
                                  "cli_version": res.cli_versions[name]})
               for name, runner in res.runners.items() if res.cli_versions.get(name)}
    repos: dict[tuple[str, str | None], str] = {}
    out: dict[str, str | None] = {}
    for run in plan.runs:
        task = cfg.corpus.tasks.get(run.task_id)
        if task is None or run.runner not in runners or run.arm not in arms:
            out[run.run_id] = None
            continue
        key = (task.repo, task.commit)
        if key not in repos:
            snapshot = res.snapshots.get(key)
            repos[key] = sha256_json({
                "repo": cfg.store.spec(task.repo).model_dump(mode="json"),
                "snapshot": snapshot.commit if snapshot is not None else None})
        out[run.run_id] = sha256_json([settings, runners[run.runner], run.model,
                                       arms[run.arm], run.task_hash, repos[key]])[:32]
    return out
