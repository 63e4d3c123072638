"""Harness overhead per run, excluding the agent, and throughput with the real CLI.

1. Overhead: provision (worktree + planted bug) + arm (CLI config dir, env) + parse + grade +
   record + cleanup, on the fastapi snapshot (and a synthetic large repo), per filesystem.
   The agent is replaced by a recorded real Claude Code transcript, so only harness work is
   timed. Median and p95 over N runs.
2. Runs per minute with workers 1, 2, 4: real Claude Code against the scripted model, and the
   agent slot's wait between one agent run and the next (provisioning should overlap it).
3. The anchor beside 1, on each filesystem (--copeca-python: the interpreter of a venv with
   copeca installed): copeca's own per-run workspace, `GitWorktreeManager.create_worktree` (an
   independent `git clone --no-hardlinks` of its bare cache, detached at the pinned commit)
   and `remove_worktree`, on the same fastapi snapshot. Only its workspace is timed (its
   config, parse and grading are not), so its figure is a lower bound of its overhead.

    .venv/bin/python bench/overhead.py [--runs 30] [--fs /work /tmp /dev/shm] [--skip-cli]
        [--copeca-python /work/anchor/bin/python]
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from copeca_action._util.paths import runners_dir  # noqa: E402
from copeca_action.agent import AgentResult  # noqa: E402
from copeca_action.engine import EngineConfig, OutputDir, RunStats, resolve, run_plan  # noqa: E402
from copeca_action.engine._execute import AgentOutcome, finish, provision  # noqa: E402
from copeca_action.plan import build_plan  # noqa: E402
from copeca_action.records import append_record  # noqa: E402
from copeca_action.scenario import RepoSpec, Scenario, load_corpus  # noqa: E402
from copeca_action.transcript import cost_of, parse_transcript  # noqa: E402
from copeca_action.workspace import SnapshotStore, WorktreePool  # noqa: E402

TRANSCRIPT = ROOT / "tests" / "fixtures" / "transcripts" / "claude_ok.jsonl"


def fs_type(path: Path) -> str:
    out = subprocess.run(["df", "-T", str(path)], capture_output=True, text=True).stdout
    parts = out.splitlines()[-1].split()
    return f"{parts[1]} ({parts[0]})"


WARM = 4
"""Runs at the start of a job (the first of each task and arm) reported apart."""


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def scenario(tasks: list[str], workers: int = 1, reps: int = 1) -> Scenario:
    return Scenario.model_validate({
        "name": "bench", "tasks": {"include": tasks}, "modes": ["baseline", "codesearch"],
        "models": ["claude-sonnet-4-5"], "model_runner_map": {"claude-sonnet-4-5": "claude"},
        "repetitions": reps, "timeout_s": 120, "max_turns": 10, "workers": workers})


def large_repo(base: Path) -> RepoSpec:
    """A local git repo of ~16k files (the fastapi sdist tree copied 12 times)."""
    repo = base / "large-origin"
    if not (repo / ".git").exists():
        src = Path(tempfile.mkdtemp(dir=base))
        subprocess.run(["tar", "xzf", str(ROOT / "corpus/snapshots/fastapi-0.115.6.tar.gz"),
                        "-C", str(src)], check=True)
        tree = src / "fastapi-0.115.6"
        repo.mkdir(parents=True)
        for i in range(12):
            shutil.copytree(tree, repo / f"copy{i:02d}")
        shutil.copytree(tree / "fastapi", repo / "fastapi")
        env = {**os.environ, "GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@b",
               "GIT_COMMITTER_NAME": "b", "GIT_COMMITTER_EMAIL": "b@b"}
        for args in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "large"]):
            subprocess.run(["git", *args], cwd=repo, env=env, check=True)
        shutil.rmtree(src)
    return RepoSpec.model_validate({"language": "python", "local": {"path": str(repo)}})


def overhead(base: Path, runs: int, repo: str = "fastapi",
             reuse: bool = True) -> dict[str, list[float]]:
    """Time every harness stage of `runs` runs with the agent replaced by a transcript;
    `reuse`: worktrees come from the pool (reset per run) instead of a new checkout each."""
    corpus = load_corpus(ROOT / "corpus")
    if repo != "fastapi":
        corpus.repos[repo] = large_repo(base)
        for tid in ("fastapi/locate-unique-id", "fastapi/fix-unique-id-method"):
            corpus.tasks[tid] = corpus.tasks[tid].model_copy(update={"repo": repo})
    tasks = ["fastapi/locate-unique-id", "fastapi/fix-unique-id-method"]
    sc = scenario(tasks, reps=max(1, runs // 4))
    cfg = EngineConfig(scenario=sc, corpus=corpus,
                       out=OutputDir(base / f"out-{repo}-{'pool' if reuse else 'fresh'}"),
                       store=SnapshotStore(base / "cache", corpus.repos),
                       host_env={"PATH": os.environ["PATH"]})
    plan = build_plan(sc, corpus.tasks)
    res = resolve(cfg, plan)
    cfg.out.root.mkdir(parents=True, exist_ok=True)
    if reuse:
        res.pool = WorktreePool(cfg.out.worktrees)
    times: dict[str, list[float]] = {k: [] for k in
                                     ("provision", "arm", "finish", "record", "total")}
    for run in plan.runs[:runs]:
        t0 = time.perf_counter()
        prep = provision(cfg, res, run, 1)
        assert prep.error is None, prep.error
        assert prep.invocation is not None
        shutil.copy(TRANSCRIPT, prep.invocation.stdout_path)
        prep.invocation.stderr_path.write_text("")
        result = AgentResult(exit_code=0, duration_s=0.0, stdout_path=prep.invocation.stdout_path,
                             stderr_path=prep.invocation.stderr_path)
        t_parse = time.perf_counter()  # as start_agent parses what the agent wrote
        runner = res.runners[run.runner]
        prep.transcript = parse_transcript(runner.parser, result.stdout_path,
                                           prep.invocation.config_dir)
        prep.cost = cost_of(prep.transcript, runner, run.model)
        parse_s = time.perf_counter() - t_parse
        if run.task_id.endswith("fix-unique-id-method"):  # grade = the task's own tests: skip
            prep.task = prep.task.model_copy(update={"grading": corpus.tasks[
                "fastapi/locate-unique-id"].grading}) if prep.task else None
        record = finish(cfg, res, prep, AgentOutcome(result=result))
        assert record.outcome == "ok", record.error  # the harness's own work really ran
        t1 = time.perf_counter()
        append_record(cfg.out.results, record)
        t2 = time.perf_counter()
        times["provision"].append(prep.timings["provision_s"])
        times["arm"].append(prep.timings["arm_s"])
        times["finish"].append(prep.timings["finish_s"] + parse_s)
        times["record"].append(t2 - t1)
        times["total"].append(t2 - t0)
    if res.pool is not None:
        res.pool.close()
    return times


ANCHOR_WORKSPACE = """
import json, sys, time
from pathlib import Path
from copeca.repos.manager import GitWorktreeManager
repos, origin, runs = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3])
manager = GitWorktreeManager(repos)
manager.create_worktree("fastapi", commit="HEAD", uri=origin, worktree_id="warm")
times = []
for i in range(runs):
    t0 = time.perf_counter()
    clone = manager.create_worktree("fastapi", commit="HEAD", uri=origin, worktree_id=str(i))
    manager.remove_worktree(clone)
    times.append(time.perf_counter() - t0)
print(json.dumps(times))
"""
"""Run by the anchor's interpreter: its per-run workspace, created and removed, `runs` times
(the bare cache is made once, before timing, as copeca does on first use)."""


def snapshot_repo(base: Path) -> Path:
    """The fastapi snapshot as a local git repository (the anchor's clone source)."""
    repo = base / "fastapi-origin"
    if not (repo / ".git").exists():
        repo.mkdir(parents=True)
        subprocess.run(["tar", "xzf", str(ROOT / "corpus/snapshots/fastapi-0.115.6.tar.gz"),
                        "-C", str(repo), "--strip-components=1"], check=True)
        env = {**os.environ, "GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@b",
               "GIT_COMMITTER_NAME": "b", "GIT_COMMITTER_EMAIL": "b@b"}
        for args in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "snapshot"]):
            subprocess.run(["git", *args], cwd=repo, env=env, check=True)
    return repo


def anchor_workspace(base: Path, runs: int, python: Path) -> list[float]:
    """Seconds per run of copeca's workspace (create + remove), in `base`'s filesystem."""
    import json

    origin = snapshot_repo(base)
    out = subprocess.run([str(python), "-c", ANCHOR_WORKSPACE, str(base / "anchor-repos"),
                          str(origin), str(runs)], capture_output=True, text=True)
    if out.returncode != 0:
        raise SystemExit(f"the anchor's workspace run failed: {out.stderr[-2000:]}")
    times: list[float] = json.loads(out.stdout.splitlines()[-1])
    return times


def throughput(base: Path, workers: int, runs: int) -> RunStats:
    from copeca_action.scripted import ScriptedServer

    corpus = load_corpus(ROOT / "corpus")
    tasks = ["fastapi/control-*", "fastapi/locate-*", "fastapi/reason-*"]
    reps = max(1, runs // 10)
    sc = scenario(tasks, workers=workers, reps=reps)
    out = OutputDir(base / f"tp-{workers}")
    with ScriptedServer(ROOT / "corpus" / "scripts", seed=3) as server:
        cfg = EngineConfig(scenario=sc, corpus=corpus, out=out,
                           store=SnapshotStore(base / "cache", corpus.repos),
                           base_url=server.url, host_env={"PATH": os.environ["PATH"]})
        return run_plan(cfg, build_plan(sc, corpus.tasks))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--fs", nargs="+", default=["/work", "/tmp", "/dev/shm"])
    parser.add_argument("--large", action="store_true", help="also a ~20k-file repo")
    parser.add_argument("--skip-cli", action="store_true")
    parser.add_argument("--skip-overhead", action="store_true")
    parser.add_argument("--cli-runs", type=int, default=20)
    parser.add_argument("--copeca-python", type=Path, help="the interpreter of a venv with "
                        "copeca (the anchor) installed: its per-run workspace is timed beside")
    args = parser.parse_args()
    print(f"# bench/overhead {dt.datetime.now(dt.UTC):%Y-%m-%d %H:%M} UTC, "
          f"{os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}")
    for fs in [] if args.skip_overhead else args.fs:
        if not Path(fs).is_dir():
            continue
        base = Path(tempfile.mkdtemp(prefix="copeca-bench-", dir=fs))
        try:
            repos = ["fastapi", "large"] if args.large else ["fastapi"]
            for repo, reuse in [(r, u) for r in repos for u in (True, False)]:
                t = overhead(base, args.runs, repo, reuse)
                how = "pooled" if reuse else "fresh "
                # the first run of each task and arm pays one-time costs of the process (the
                # pool's first checkout, the first grading's and retrieval's set-up): shown
                # apart, so the p95 is the per-run tail, not the start of a job
                first, steady = t["total"][:WARM], t["total"][WARM:] or t["total"]
                print(f"overhead {repo:7} {how} on {fs} [{fs_type(base)}] n={len(t['total'])}: "
                      f"all: median {statistics.median(t['total']) * 1000:.0f} ms, "
                      f"p95 {pct(t['total'], 0.95) * 1000:.0f} ms; after the first {WARM}: "
                      f"median {statistics.median(steady) * 1000:.0f} ms, "
                      f"p95 {pct(steady, 0.95) * 1000:.0f} ms; first {WARM}: "
                      f"{', '.join(f'{x * 1000:.0f}' for x in first)} ms  (median provision "
                      f"{statistics.median(t['provision']) * 1000:.0f}, arm "
                      f"{statistics.median(t['arm']) * 1000:.0f}, parse+grade+cleanup "
                      f"{statistics.median(t['finish']) * 1000:.0f}, record "
                      f"{statistics.median(t['record']) * 1000:.1f} ms)", flush=True)
            if args.copeca_python:
                a = anchor_workspace(base, args.runs, args.copeca_python)
                print(f"anchor  copeca  workspace on {fs} [{fs_type(base)}] n={len(a)}: median "
                      f"{statistics.median(a) * 1000:.0f} ms, p95 {pct(a, 0.95) * 1000:.0f} ms "
                      "(clone --no-hardlinks + checkout + remove only: a lower bound)",
                      flush=True)
        finally:
            shutil.rmtree(base, ignore_errors=True)
    if args.skip_cli:
        return
    if not (runners_dir() / "node_modules" / ".bin" / "claude").exists():
        print("throughput: skipped (Claude Code not installed; run `make node`)")
        return
    base = Path(tempfile.mkdtemp(prefix="copeca-bench-", dir=args.fs[0]))
    try:
        for workers in (1, 2, 4):
            stats = throughput(base, workers, args.cli_runs)
            n = len(stats.final)
            agent = [t.get("agent_s", 0.0) for t in stats.timings]
            waits = stats.slot_waits_s
            print(f"throughput workers={workers} on {args.fs[0]} [{fs_type(base)}]: {n} runs in "
                  f"{stats.wall_s:.1f} s = {n / stats.wall_s * 60:.1f} runs/min; median agent "
                  f"run {statistics.median(agent):.2f} s; slot wait between agent runs median "
                  f"{(statistics.median(waits) if waits else 0) * 1000:.0f} ms, p95 "
                  f"{(pct(waits, 0.95) if waits else 0) * 1000:.0f} ms", flush=True)
    finally:
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
