"""Checks before the first paid run: every runner in the plan has its key (or an endpoint),
and every tool the plan's modes start does start (an MCP server answers `initialize`, a
wrapper's command exists and is executable). A failure here is a named error before any spend,
never a row of "0% adoption" runs."""

from __future__ import annotations

import tempfile
from pathlib import Path

from copeca_action.agent._probe import MCP_START_TIMEOUT_S, mode_start_problems
from copeca_action.engine._context import EngineConfig, _resolve_mode
from copeca_action.errors import ConfigError, InfraError, Problem
from copeca_action.plan import RunPlan


def check_keys(cfg: EngineConfig, plan: RunPlan) -> None:
    """Each runner of the plan has one of its `credential_env` variables set, unless the CLIs
    talk to an endpoint (`--base-url`, the scripted model)."""
    if cfg.base_url or cfg.scenario.model_endpoint == "scripted":
        return
    missing: list[str] = []
    for name in sorted({r.runner for r in plan.runs}):
        runner = cfg.corpus.runners.get(name)
        if runner is None or not runner.credential_env:
            continue
        if not any(cfg.host_env.get(k, "").strip() for k in runner.credential_env):
            n = sum(r.runner == name for r in plan.runs)
            missing.append(f"runner {name!r} ({n} planned run(s)) needs "
                           f"{' or '.join(runner.credential_env)}")
    if missing:
        raise ConfigError(
            "no model key, so nothing was run and nothing was charged: " + "; ".join(missing)
            + ". Set the variable (in the action: the `anthropic-api-key` / `openai-api-key` "
            "inputs), or try the tool first against the scripted model with --dry-run "
            "(the action's `dry-run: true`)")


BASE_HINT = ("{arm!r} is the tool at the comparison's base commit: when the change under test "
             "adds the tool (the pull request that sets up copeca-action), the base has none "
             "yet; compare with the baseline (`compare: baseline`) until it is merged")


def check_tools(cfg: EngineConfig, plan: RunPlan,
                timeout_s: float = MCP_START_TIMEOUT_S) -> None:
    """Start each arm's MCP servers once and look up its wrapper, before any run."""
    problems: list[str] = []
    base = {k: v for k, v in cfg.host_env.items()
            if k in ("PATH", "LANG", "LC_ALL", "LC_CTYPE", "TZ", "SYSTEMROOT")}
    with tempfile.TemporaryDirectory(prefix="copeca-preflight-") as tmp:
        cwd = Path(tmp)
        env = {**base, "HOME": tmp, "TMPDIR": tmp}
        for arm in plan.arms:
            mode = _resolve_mode(cfg, arm)
            tool_dir = cfg.base_tool_dir if arm.endswith("@base") else cfg.tool_dir
            found = mode_start_problems(mode, env, cwd, timeout_s,
                                        [tool_dir] if tool_dir is not None else [])
            problems += [f"mode {arm!r}: {p}" for p in found]
            if found and arm.endswith("@base"):
                problems.append(BASE_HINT.format(arm=arm))
    if problems:
        raise InfraError("the tool under test does not start, so nothing was run and nothing "
                         "was charged: " + "; ".join(problems))


def check_scripts(cfg: EngineConfig, plan: RunPlan, scripts: Path) -> None:
    """Against the scripted model, every planned task and model has a script it can reach.
    A task without one ran to HTTP 400 "no script matches" in each of its runs, recorded as
    the agent's error and wrong answer: the usual first dry run after writing a new task."""
    from copeca_action.scripted import load_scripts

    matches = [s.match for s in load_scripts(scripts)]
    missing: dict[str, set[str]] = {}
    for run in plan.runs:
        task = cfg.corpus.tasks.get(run.task_id)
        if task is not None and not any(m.may_accept(model=run.model, prompt=task.prompt)
                                        for m in matches):
            missing.setdefault(run.task_id, set()).add(run.model)
    if missing:
        raise ConfigError([Problem(
            str(cfg.corpus.task_files.get(task_id, task_id)),
            f"no script in {scripts} can answer task {task_id!r} (model "
            f"{', '.join(sorted(models))}): no `match.prompt_contains` is a phrase of its "
            "prompt, so each of its runs would end in HTTP 400 \"no script matches\"; nothing "
            "was run. Add a script for each arm (docs/dry-run.md, \"What a script says\") or "
            "leave the task out of the scenario", field="prompt")
            for task_id, models in sorted(missing.items())])


def preflight(cfg: EngineConfig, plan: RunPlan) -> None:
    """Keys, then tools: both before the first run (and its spend)."""
    check_keys(cfg, plan)
    check_tools(cfg, plan)
