"""Everything a scenario run needs, resolved and checked once before the first run starts:
snapshots present, planted bugs applicable, repository set-up done, CLIs installed, modes
expanded. A problem here stops the run before any money is spent."""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from copeca_action._util.paths import PACKAGE_DIR
from copeca_action.agent import cli_version, resolve_binary
from copeca_action.engine._flags import DEFAULT_RULES, FlagRules
from copeca_action.engine._outdir import OutputDir
from copeca_action.engine._reuse import ReuseOffer
from copeca_action.errors import ConfigError, WorkspaceError
from copeca_action.evaluate import Sandbox, make_sandbox
from copeca_action.keyproxy import KeyForwarder
from copeca_action.plan import RunPlan
from copeca_action.records import Endpoint
from copeca_action.scenario import Corpus, Mode, Runner, Scenario, Task
from copeca_action.workspace import (
    Snapshot,
    SnapshotStore,
    WorktreePool,
    answers_message,
    check_mutations,
    files_in_tree,
    read_file_at,
)

DEMO_TOOL_DIR = PACKAGE_DIR / "demo_tool"
"""`{demo_tool}`: the bundled demo MCP server's folder (`{python} {demo_tool}` runs it)."""
MAX_ATTEMPTS = 3
"""A run that hits an infra error is tried at most this many times in one invocation."""


@dataclass
class EngineConfig:
    """Inputs of one scenario run (built by the CLI, or by tests and benches directly)."""

    scenario: Scenario
    corpus: Corpus
    out: OutputDir
    store: SnapshotStore
    base_url: str | None = None
    """The model endpoint (the scripted server); None = the vendors' APIs."""
    tool_dir: Path | None = None
    base_tool_dir: Path | None = None
    """Checkout of the tool at the base ref, for `<mode>@base` arms."""
    host_env: Mapping[str, str] = field(default_factory=lambda: dict(os.environ))
    max_attempts: int = MAX_ATTEMPTS
    rules: FlagRules = DEFAULT_RULES
    python: str = sys.executable
    """`{python}` in modes and test commands: the harness's own interpreter."""
    reuse_worktrees: bool = True
    """Reset a finished run's worktree for the next run instead of making a new one."""
    eval_backend: str = "local"
    """Sandbox that runs the hidden tests of `patch` tasks (`local` or `docker`)."""
    endpoint: str | None = None
    """Identity of the model endpoint for run fingerprints (the scripted server's scripts);
    None: the base URL, else the vendors."""
    endpoint_kind: Endpoint = "real"
    """Recorded in each RunRecord's `endpoint`: `scripted` while the scripted server answers,
    `dry_run` when it stands in for a real run (pipeline.prepare_scenario(dry_run=True))."""
    reuse: ReuseOffer | None = None
    """Finished runs of a verified previous bundle to take instead of running them."""


@dataclass
class Resolved:
    """Per-scenario facts the runs share."""

    snapshots: dict[tuple[str, str | None], Snapshot] = field(default_factory=dict)
    setup_dirs: dict[str, Path | None] = field(default_factory=dict)
    modes: dict[str, Mode] = field(default_factory=dict)
    """Per arm, with `{python}` and `{tool_dir}` expanded."""
    runners: dict[str, Runner] = field(default_factory=dict)
    cli_versions: dict[str, str | None] = field(default_factory=dict)
    fingerprints: dict[str, str | None] = field(default_factory=dict)
    """Run id → fingerprint (engine/_fingerprint.py), recorded in each RunRecord."""
    pool: WorktreePool | None = None
    """Set by the scheduler when worktrees are reused."""
    forwarder: KeyForwarder | None = None
    """The job's key forwarder (engine/_keys.py), set by the scheduler for real endpoints:
    its runners' agents hold a placeholder, never the key."""
    _sandboxes: dict[str, Sandbox] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def eval_sandbox(self, backend: str) -> Sandbox:
        """One sandbox per backend for the whole scenario, made on first use."""
        with self._lock:
            if backend not in self._sandboxes:
                self._sandboxes[backend] = make_sandbox(backend)
            return self._sandboxes[backend]

    def close(self) -> None:
        for sandbox in self._sandboxes.values():
            sandbox.close()
        self._sandboxes.clear()
        if self.forwarder is not None:
            self.forwarder.close()
            self.forwarder = None

    def snapshot_for(self, task: Task) -> Snapshot:
        return self.snapshots[(task.repo, task.commit)]


def expand_tree(value: Any, values: Mapping[str, str]) -> Any:
    if isinstance(value, str):
        for key, sub in values.items():
            value = value.replace("{" + key + "}", sub)
        return value
    if isinstance(value, list):
        return [expand_tree(v, values) for v in value]
    if isinstance(value, dict):
        return {k: expand_tree(v, values) for k, v in value.items()}
    return value


def expand_mode(mode: Mode, values: Mapping[str, str]) -> Mode:
    """The mode with placeholders the engine owns replaced (`{python}`, `{tool_dir}`)."""
    data = expand_tree(mode.model_dump(mode="json", exclude_defaults=True), values)
    return Mode.model_validate({"name": mode.name, **data})


def resolve(cfg: EngineConfig, plan: RunPlan) -> Resolved:
    """Preflight. Raises ConfigError / WorkspaceError / InfraError naming what to fix."""
    out = Resolved()
    tasks = {r.task_id: cfg.corpus.tasks[r.task_id] for r in plan.runs}
    problems: list[str] = []
    for task in tasks.values():
        key = (task.repo, task.commit)
        if key not in out.snapshots:
            out.snapshots[key] = cfg.store.get(task.repo, task.commit)
        test = task.grading.test
        if test and test.mutations:
            snap = out.snapshots[key]
            texts = {m.file: read_file_at(Path(snap.git_dir), snap.commit, m.file)
                     for m in test.mutations}
            found = {k: v for k, v in texts.items() if v is not None}
            problems += [f"task {task.id}: grading.test.{p}"
                         for p in check_mutations(found, test.mutations)]
    problems += _answers_in_reach(cfg, tasks.values(), out)
    if problems:
        raise ConfigError("; ".join(problems))
    for (repo, _), snap in out.snapshots.items():
        if repo not in out.setup_dirs:
            spec = cfg.store.spec(repo)
            setup = [expand_tree(list(c), {"python": cfg.python}) for c in spec.setup]
            out.setup_dirs[repo] = cfg.store.ensure_setup(snap, setup, cfg.host_env)
    for arm in plan.arms:
        out.modes[arm] = _resolve_mode(cfg, arm)
    for name in sorted({r.runner for r in plan.runs}):
        runner = cfg.corpus.runners.get(name)
        if runner is None:
            raise ConfigError(f"scenario {cfg.scenario.name!r}: runner {name!r} is not in "
                              f"{cfg.corpus.runners_root} (known: "
                              f"{', '.join(sorted(cfg.corpus.runners)) or 'none'})")
        resolve_binary(runner)  # InfraError with the install hint when missing
        out.runners[name] = runner
        out.cli_versions[name] = cli_version(runner)
    return out


def _answers_in_reach(cfg: EngineConfig, tasks: Iterable[Task], out: Resolved) -> list[str]:
    """Tasks whose own file (prompt, grading answers, gold context) is in the tree of the
    repository they run on, so the agent's checkout holds it: a benchmark kept in the
    repository it benchmarks (a `local:` pin of the tool's own clone, say)."""
    problems = []
    for key, snap in out.snapshots.items():
        files = {t.id: (path, path.relative_to(cfg.corpus.root).as_posix())
                 for t in tasks if (t.repo, t.commit) == key
                 and (path := cfg.corpus.task_files.get(t.id)) is not None
                 and path.is_relative_to(cfg.corpus.root)}
        found = files_in_tree(Path(snap.git_dir), snap.commit, files)
        problems += [answers_message(task, key[0], snap.commit, files[task][0], where)
                     for task, where in sorted(found.items())]
    return problems


def _resolve_mode(cfg: EngineConfig, arm: str) -> Mode:
    name = arm.removesuffix("@base")
    mode = cfg.corpus.modes.get(name)
    if mode is None:
        raise ConfigError(f"scenario {cfg.scenario.name!r}: mode {name!r} is not in "
                          f"{cfg.corpus.root / 'modes'} (known: "
                          f"{', '.join(sorted(cfg.corpus.modes)) or 'none'})")
    tool_dir = cfg.base_tool_dir if arm.endswith("@base") else cfg.tool_dir
    values = {"python": cfg.python, "demo_tool": str(DEMO_TOOL_DIR)}
    if tool_dir is not None:
        values["tool_dir"] = str(tool_dir.resolve())
    elif "{tool_dir}" in mode.model_dump_json():
        flag = "--base-tool-dir" if arm.endswith("@base") else "--tool-dir"
        raise ConfigError(f"mode {name!r} uses {{tool_dir}}; pass {flag} (the checkout of "
                          "the tool under test)")
    return expand_mode(mode, values)


def require_task(cfg: EngineConfig, task_id: str) -> Task:
    try:
        return cfg.corpus.tasks[task_id]
    except KeyError:
        raise WorkspaceError(f"task {task_id!r} of the plan is not in the corpus") from None
