"""Seconds per edit-task grading with a cold build cache vs a private copy of a warm one.

For each task named, on its repository's snapshot (from the snapshot cache) and with its own
test command, this measures:
  cold    the command in a fresh worktree with an empty cache folder (what every grading
          cost before build caches: a full build of the test dependencies);
  warm-up the one-off build of the warm cache from the clean snapshot (repos.yaml `build_cache`);
  copy    one private copy of the warm cache (cp -a --reflink=auto), and its size;
  warm    copy + the command in another fresh worktree (a different path, as a second run has).
The worktrees carry the task's mutations, so the command fails as for a wrong answer; the
build work is the same either way. Nothing is asserted; the figures are printed.

    .venv/bin/python bench/buildcache.py ripgrep/fix-config-indented-lines gin/fix-is-aborted \\
        [--cache DIR] [--work DIR] [--skip-cold]

Give --cache the snapshot cache the runs use (its build-cache/ is reused when already warm;
pass a fresh --cache to time the warm-up). Other load on the machine shows in the figures:
the load average is printed with them.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import time
from pathlib import Path

from copeca_action.grade import grade_test
from copeca_action.scenario import load_corpus
from copeca_action.workspace import (
    SnapshotStore,
    add_worktree,
    cache_dir_for,
    clean_tree,
    copy_build_cache,
    default_cache_dir,
    ensure_build_cache,
    remove_worktree,
    tree_id,
)

ENV_KEEP = ("PATH", "LANG", "LC_ALL", "LC_CTYPE", "TZ")


def du_mb(path: Path) -> float:
    out = subprocess.run(["du", "-sk", str(path)], capture_output=True, text=True, check=False)
    return int(out.stdout.split()[0]) / 1024 if out.returncode == 0 else float("nan")


def grade_once(store: SnapshotStore, task_id: str, work: Path, name: str,
               cache_env: str | None, cache: Path | None) -> tuple[float, bool]:
    corpus = load_corpus()
    task = corpus.tasks[task_id]
    assert task.grading.test is not None
    snap = store.get(task.repo, task.commit)
    wt = add_worktree(Path(snap.git_dir), snap.commit, work / name, task.grading.test.mutations)
    home = work / f"{name}-home"
    home.mkdir(parents=True, exist_ok=True)
    env = {k: v for k, v in os.environ.items() if k in ENV_KEEP}
    env.update(HOME=str(home), TMPDIR=str(home))
    if cache_env and cache is not None:
        env[cache_env] = str(cache)
    t0 = time.perf_counter()
    result = grade_test(Path(wt.path), task.grading.test, env, {})
    took = time.perf_counter() - t0
    remove_worktree(Path(snap.git_dir), Path(wt.path))
    shutil.rmtree(home, ignore_errors=True)
    return took, result.correct


def bench_task(store: SnapshotStore, task_id: str, work: Path, skip_cold: bool) -> None:
    corpus = load_corpus()
    task = corpus.tasks[task_id]
    spec = store.spec(task.repo).build_cache
    if spec is None:
        print(f"{task_id}: repository {task.repo} declares no build_cache")
        return
    snap = store.get(task.repo, task.commit)
    root = store.root / "build-cache"
    slug = task_id.replace("/", "-")
    print(f"\n{task_id}  ({spec.env}; load average {os.getloadavg()[0]:.2f})")
    if not skip_cold:
        empty = work / f"{slug}-empty"
        empty.mkdir(parents=True)
        cold, _ = grade_once(store, task_id, work, f"{slug}-cold", spec.env, empty)
        print(f"  cold grading        {cold:8.1f} s   (empty cache, {du_mb(empty):.0f} MB after)")
        shutil.rmtree(empty, ignore_errors=True)
    tree = tree_id(Path(snap.git_dir), snap.commit)
    already = cache_dir_for(root, task.repo, tree, spec)
    was_warm = already is not None and already.is_dir()
    t0 = time.perf_counter()
    env = {k: v for k, v in os.environ.items() if k in ENV_KEEP}
    warm = ensure_build_cache(root, task.repo, tree, spec,
                              lambda d: clean_tree(Path(snap.git_dir), snap.commit, d), env)
    took = time.perf_counter() - t0
    if warm is None:
        print("  warm-up failed (see build-cache/warm-ups.jsonl)")
        return
    label = "already warm" if was_warm else "warm-up (once)"
    print(f"  {label:<19} {took:8.1f} s   ({du_mb(warm):.0f} MB, {warm.name})")
    copies = []
    for i in range(3):
        dest = work / f"{slug}-copy{i}"
        t0 = time.perf_counter()
        copy_build_cache(warm, dest)
        copies.append(time.perf_counter() - t0)
        if i < 2:
            shutil.rmtree(dest)
    print(f"  copy                {min(copies):8.2f} s   (best of 3; all: "
          f"{', '.join(f'{c:.2f}' for c in copies)})")
    graded, _ = grade_once(store, task_id, work, f"{slug}-warm", spec.env, work / f"{slug}-copy2")
    print(f"  warm grading        {graded:8.1f} s   (+ copy = {graded + copies[-1]:.1f} s)")
    shutil.rmtree(work / f"{slug}-copy2", ignore_errors=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("tasks", nargs="+")
    ap.add_argument("--cache", type=Path, default=None)
    ap.add_argument("--work", type=Path, default=None)
    ap.add_argument("--skip-cold", action="store_true")
    args = ap.parse_args()
    corpus = load_corpus()
    store = SnapshotStore(args.cache or default_cache_dir(), corpus.repos)
    work = args.work or Path(store.root / "bench-work")
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    try:
        for task_id in args.tasks:
            bench_task(store, task_id, work, args.skip_cold)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
