"""Warm build caches: a repository's compiler cache (a cargo target dir, a GOCACHE) built once
per snapshot and toolchain from the clean snapshot, then copied for each grading.

The snapshot is named by its git tree id (its content), not its commit: the run engine's
snapshot and a `validate --deep` checkout made from the same tarball are different commits
of the same tree, and share one warm cache.

Why copies: a grading runs agent-written code (a build.rs, a `go generate`) that may write
anything into the cache it is given; a private copy keeps one run's patch from touching
another run's grade. Why a lock and a rename: two workers must not warm the same cache twice,
and a warm-up that was killed half-way must never be used (only a finished warm-up is renamed
into place). Stale caches are safe either way: cargo and go check every input themselves, so
the key only decides how much is reused, never whether a build is right.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import functools
import json
import os
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Callable, Mapping
from pathlib import Path

from copeca_action._util.hashing import sha256_json
from copeca_action.errors import WorkspaceError
from copeca_action.scenario import BuildCacheSpec
from copeca_action.workspace._git import git
from copeca_action.workspace._lock import file_lock

WARM_LOG = "warm-ups.jsonl"
"""One line per warm-up started (and its end), in the build-cache folder: what ran when."""
_FAILED: set[str] = set()
"""Keys whose warm-up failed in this process: not tried again for every grading."""


@functools.cache
def toolchain_id(argv: tuple[str, ...]) -> str | None:
    """The toolchain's self-description (`rustc -vV`), or None when it cannot run here."""
    try:
        proc = subprocess.run(list(argv), capture_output=True, text=True, timeout=60,
                              check=False, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return proc.stdout.strip() if proc.returncode == 0 else None


@functools.cache
def tree_id(repo: Path, commit: str) -> str:
    """The git tree id of `commit` in `repo` (a snapshot's bare repository, read through its
    view, or the user's checkout); a commit's tree never changes, so it is asked of git once
    per process, not once per grading."""
    checkout = (repo / ".git").exists()
    return git(["rev-parse", "--verify", f"{commit}^{{tree}}"], cwd=repo if checkout else None,
               git_dir=None if checkout else repo).stdout.strip()


def cache_dir_for(root: Path, repo: str, tree: str, spec: BuildCacheSpec) -> Path | None:
    """Where the warm cache of this snapshot (`tree`: its git tree id) and toolchain lives
    (None: no toolchain here)."""
    tool = toolchain_id(tuple(spec.toolchain))
    if tool is None:
        return None
    key = sha256_json([tree, tool, spec.env, list(spec.warm)])[:12]
    return root / f"{repo}-{tree[:12]}-{spec.env.lower()}-{key}"


def ensure_build_cache(root: Path, repo: str, tree: str, spec: BuildCacheSpec,
                       make_tree: Callable[[Path], Path], env: Mapping[str, str]) -> Path | None:
    """The warm cache folder, warming it first if no finished one exists.

    `tree` names the snapshot's content (its git tree id, see `tree_id`). `make_tree(dest)`
    makes a clean, writable checkout of that snapshot under `dest` and returns it;
    the warm-up runs there with HOME and TMPDIR private and `spec.env` set to the new cache.
    Returns None (grading then builds cold) when the toolchain is missing or the warm-up
    failed; the failure is logged and not retried in this process.
    """
    final = cache_dir_for(root, repo, tree, spec)
    if final is None:
        return None
    if final.is_dir():
        return final
    with file_lock(final.with_name(final.name + ".lock")):
        if final.is_dir():
            return final
        if final.name in _FAILED:
            return None
        return _warm(root, final, repo, tree, spec, make_tree, env)


def _warm(root: Path, final: Path, repo: str, tree: str, spec: BuildCacheSpec,
          make_tree: Callable[[Path], Path], env: Mapping[str, str]) -> Path | None:
    work = final.with_name(final.name + ".warming")
    if work.exists():  # left by a warm-up that was killed: never used, started again
        shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    started = time.monotonic()
    _log(root, {"event": "start", "cache": final.name, "repo": repo, "tree": tree,
                "argv": list(spec.warm), "pid": os.getpid()})
    code: int | None = None
    error = ""
    try:
        checkout = make_tree(work / "tree")
        home = work / "home"
        home.mkdir()
        (work / "cache").mkdir()
        run_env = {**env, "HOME": str(home), "TMPDIR": str(home), spec.env: str(work / "cache")}
        code, output = _run(list(spec.warm), checkout, run_env, spec.timeout_s)
        error = output.strip()[-1000:] if code != 0 else ""
    except (OSError, WorkspaceError) as exc:
        error = str(exc)
    duration = round(time.monotonic() - started, 1)
    _log(root, {"event": "end", "cache": final.name, "exit_code": code, "duration_s": duration,
                "error": error or None})
    if code != 0:
        _FAILED.add(final.name)
        shutil.rmtree(work, ignore_errors=True)
        return None
    os.rename(work / "cache", final)  # the one step that publishes: atomic on one file system
    (final.with_name(final.name + ".json")).write_text(json.dumps({
        "repo": repo, "tree": tree, "env": spec.env, "warm": list(spec.warm),
        "toolchain": toolchain_id(tuple(spec.toolchain)), "duration_s": duration,
        "at": _now()}, indent=2) + "\n")
    shutil.rmtree(work, ignore_errors=True)
    return final


def _run(argv: list[str], cwd: Path, env: Mapping[str, str],
         timeout_s: float) -> tuple[int | None, str]:
    """Exit code (None on timeout, after killing the whole process group) and output."""
    with tempfile.TemporaryFile() as out:
        proc = subprocess.Popen(argv, cwd=cwd, env=dict(env), stdin=subprocess.DEVNULL,
                                stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
        try:
            code: int | None = proc.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            code = None
        finally:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        out.seek(0)
        text = out.read().decode("utf-8", "replace")
    return code, text if code is not None else text + f"\n[killed after {timeout_s:g}s]"


def copy_build_cache(warm: Path, dest: Path) -> Path:
    """A private copy of the warm cache at `dest` (which must not exist): reflinks where the
    file system has them, else a plain copy by `cp`, the fastest measured (bench/buildcache.py)."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    cp = shutil.which("cp")
    if cp is None:
        shutil.copytree(warm, dest, symlinks=True)
        return dest
    proc = subprocess.run([cp, "-a", "--reflink=auto", str(warm), str(dest)],
                          capture_output=True, text=True, check=False,
                          stdin=subprocess.DEVNULL)
    if proc.returncode != 0:
        raise WorkspaceError(f"copying the build cache {warm} to {dest} failed: "
                             f"{proc.stderr.strip()[-300:]}")
    return dest


def read_warm_log(root: Path) -> list[dict[str, object]]:
    """The warm-up log's entries (empty when no warm-up ever ran)."""
    path = root / WARM_LOG
    if not path.is_file():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _log(root: Path, entry: dict[str, object]) -> None:
    root.mkdir(parents=True, exist_ok=True)
    with (root / WARM_LOG).open("a") as handle:
        handle.write(json.dumps({**entry, "at": _now()}) + "\n")


def _now() -> str:
    return dt.datetime.now(dt.UTC).replace(microsecond=0).isoformat()
