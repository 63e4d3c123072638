"""Warm build caches: warmed once, private copies, one warm-up under concurrency, and a
killed or failed warm-up never used."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from copeca_action.scenario import BuildCacheSpec
from copeca_action.workspace import (
    cache_dir_for,
    copy_build_cache,
    ensure_build_cache,
    read_warm_log,
)
from copeca_action.workspace._buildcache import _FAILED

ENV = {"PATH": "/usr/bin:/bin"}


def _project(root: Path) -> Path:
    """A tiny Python package: the warm-up byte-compiles it into the cache (a real build
    cache: PYTHONPYCACHEPREFIX), and counts its own runs in a file outside the cache."""
    src = root / "src"
    (src / "pkg").mkdir(parents=True)
    (src / "pkg" / "__init__.py").write_text("VALUE = 42\n")
    (src / "pkg" / "mod.py").write_text("def f():\n    return 1\n")
    return src


def _spec(root: Path, warm: str | None = None, timeout_s: float = 120) -> BuildCacheSpec:
    counter = root / "warm-count"
    script = warm or (f'echo run >> "{counter}"; '
                      'PYTHONPYCACHEPREFIX="$BUILD_CACHE" python3 -m compileall -q .')
    return BuildCacheSpec(env="BUILD_CACHE", warm=["sh", "-c", script],
                          toolchain=["python3", "--version"], timeout_s=timeout_s)


def _maker(src: Path):  # type: ignore[no-untyped-def]
    def make(dest: Path) -> Path:
        shutil.copytree(src, dest)
        return dest
    return make


def _listing(path: Path) -> dict[str, bytes]:
    return {str(p.relative_to(path)): p.read_bytes() for p in sorted(path.rglob("*"))
            if p.is_file()}


@pytest.fixture(autouse=True)
def _forget_failures() -> None:
    _FAILED.clear()


def test_warmed_once_then_reused(tmp_path: Path) -> None:
    src = _project(tmp_path)
    spec = _spec(tmp_path)
    root = tmp_path / "build-cache"
    first = ensure_build_cache(root, "app", "c" * 40, spec, _maker(src), ENV)
    second = ensure_build_cache(root, "app", "c" * 40, spec, _maker(src), ENV)
    assert first is not None and first == second
    assert any(p.suffix == ".pyc" for p in first.rglob("*"))  # really compiled into it
    assert (tmp_path / "warm-count").read_text().count("run") == 1
    assert [e["event"] for e in read_warm_log(root)] == ["start", "end"]
    other = ensure_build_cache(root, "app", "d" * 40, spec, _maker(src), ENV)
    assert other is not None and other != first  # another snapshot: its own cache
    assert (tmp_path / "warm-count").read_text().count("run") == 2


def test_writes_to_a_copy_never_reach_the_warm_cache(tmp_path: Path) -> None:
    src = _project(tmp_path)
    warm = ensure_build_cache(tmp_path / "bc", "app", "c" * 40, _spec(tmp_path), _maker(src),
                              ENV)
    assert warm is not None
    before = _listing(warm)
    copy = copy_build_cache(warm, tmp_path / "run-1" / "cache")
    assert _listing(copy) == before
    # what a hostile build script might do to the cache it is given
    victim = next(p for p in copy.rglob("*.pyc"))
    victim.write_bytes(b"poisoned")
    (copy / "planted.so").write_bytes(b"evil")
    for pyc in list(copy.rglob("*.pyc"))[1:]:
        pyc.unlink()
    assert _listing(warm) == before
    assert _listing(copy_build_cache(warm, tmp_path / "run-2" / "cache")) == before


def test_concurrent_warm_ups_happen_once(tmp_path: Path) -> None:
    src = _project(tmp_path)
    spec = _spec(tmp_path)
    root = tmp_path / "bc"
    results: list[Path | None] = []
    start = threading.Barrier(4)

    def worker() -> None:
        start.wait()
        results.append(ensure_build_cache(root, "app", "c" * 40, spec, _maker(src), ENV))

    threads = [threading.Thread(target=worker) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(results) == 4 and len(set(results)) == 1 and results[0] is not None
    assert (tmp_path / "warm-count").read_text().count("run") == 1


def test_concurrent_processes_warm_up_once(tmp_path: Path) -> None:
    """The lock holds across processes too (two harnesses sharing one cache folder)."""
    src = _project(tmp_path)
    code = (
        "import sys; from pathlib import Path; import shutil\n"
        "from copeca_action.scenario import BuildCacheSpec\n"
        "from copeca_action.workspace import ensure_build_cache\n"
        f"spec = BuildCacheSpec.model_validate_json({_spec(tmp_path).model_dump_json()!r})\n"
        f"src = Path({str(src)!r})\n"
        "def make(d):\n    shutil.copytree(src, d); return d\n"
        f"print(ensure_build_cache(Path({str(tmp_path / 'bc')!r}), 'app', 'c' * 40, spec, "
        "make, {'PATH': '/usr/bin:/bin'}))\n")
    procs = [subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE,
                              text=True) for _ in range(3)]
    outs = {p.communicate()[0].strip() for p in procs}
    assert all(p.returncode == 0 for p in procs)
    assert len(outs) == 1 and "None" not in outs
    assert (tmp_path / "warm-count").read_text().count("run") == 1


def test_a_killed_warm_up_is_never_used(tmp_path: Path) -> None:
    src = _project(tmp_path)
    spec = _spec(tmp_path)
    root = tmp_path / "bc"
    final = cache_dir_for(root, "app", "c" * 40, spec)
    assert final is not None
    # what a warm-up killed half-way leaves: a partial cache beside the final name
    partial = final.with_name(final.name + ".warming")
    (partial / "cache").mkdir(parents=True)
    (partial / "cache" / "half-written.o").write_bytes(b"\0" * 10)
    warm = ensure_build_cache(root, "app", "c" * 40, spec, _maker(src), ENV)
    assert warm == final
    assert not (warm / "half-written.o").exists()
    assert any(p.suffix == ".pyc" for p in warm.rglob("*"))
    assert not partial.exists()


def test_a_real_killed_warm_up_leaves_nothing_usable(tmp_path: Path) -> None:
    """kill -9 of the harness in the middle of a warm-up: no cache under the final name."""
    src = _project(tmp_path)
    gate = tmp_path / "gate"
    os.mkfifo(gate)
    slow = _spec(tmp_path, warm=f'echo partial > "$BUILD_CACHE/x"; echo $$ > "{gate}"; '
                 'exec sleep 600')
    code = (
        "from pathlib import Path; import shutil\n"
        "from copeca_action.scenario import BuildCacheSpec\n"
        "from copeca_action.workspace import ensure_build_cache\n"
        f"spec = BuildCacheSpec.model_validate_json({slow.model_dump_json()!r})\n"
        f"src = Path({str(src)!r})\n"
        "def make(d):\n    shutil.copytree(src, d); return d\n"
        f"ensure_build_cache(Path({str(tmp_path / 'bc')!r}), 'app', 'c' * 40, spec, make, "
        "{'PATH': '/usr/bin:/bin'})\n")
    proc = subprocess.Popen([sys.executable, "-c", code])
    with gate.open() as handle:  # blocks until the warm-up has written part of its cache
        orphan = int(handle.read().strip())
    proc.kill()
    proc.wait()
    final = cache_dir_for(tmp_path / "bc", "app", "c" * 40, slow)
    assert final is not None and not final.exists()
    os.kill(orphan, signal.SIGKILL)  # the warm-up's own process, orphaned by the kill
    assert cache_dir_for(tmp_path / "bc", "app", "c" * 40, slow) == final


def test_failed_or_timed_out_warm_up_gives_none_and_is_not_retried(tmp_path: Path) -> None:
    src = _project(tmp_path)
    counter = tmp_path / "count"
    failing = _spec(tmp_path, warm=f'echo run >> "{counter}"; exit 3')
    root = tmp_path / "bc"
    assert ensure_build_cache(root, "app", "c" * 40, failing, _maker(src), ENV) is None
    assert ensure_build_cache(root, "app", "c" * 40, failing, _maker(src), ENV) is None
    assert counter.read_text().count("run") == 1
    ends = [e for e in read_warm_log(root) if e["event"] == "end"]
    assert ends[0]["exit_code"] == 3
    hanging = _spec(tmp_path, warm='echo x > "$BUILD_CACHE/x"; exec sleep 60', timeout_s=0.5)
    assert ensure_build_cache(root, "app", "e" * 40, hanging, _maker(src), ENV) is None
    assert not any(p.name.endswith(".warming") for p in root.iterdir())


def test_no_toolchain_means_no_cache(tmp_path: Path) -> None:
    spec = BuildCacheSpec(env="BUILD_CACHE", warm=["true"],
                          toolchain=["copeca-no-such-compiler", "--version"])
    made: list[Path] = []
    got = ensure_build_cache(tmp_path, "app", "c" * 40, spec,
                             lambda d: made.append(d) or d, ENV)  # type: ignore[func-returns-value]
    assert got is None and not made


@pytest.mark.skipif(shutil.which("go") is None, reason="go is not installed")
def test_a_go_module_builds_from_its_warm_gocache(tmp_path: Path) -> None:
    """A real toolchain: the warm GOCACHE holds the compiled package, and a build in a copy
    after a change (the agent's patch) leaves the warm cache as it was."""
    src = tmp_path / "mod"
    src.mkdir()
    (src / "go.mod").write_text("module example.com/tiny\n\ngo 1.19\n")
    (src / "tiny.go").write_text("package tiny\n\nfunc Answer() int { return 42 }\n")
    spec = BuildCacheSpec(env="GOCACHE", warm=["go", "build", "./..."],
                          toolchain=["go", "version"])
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "GOFLAGS": "-mod=mod",
           "GOTOOLCHAIN": "local", "GO111MODULE": "on", "GOPROXY": "off"}
    root = tmp_path / "bc"
    warm = ensure_build_cache(root, "tiny", "c" * 40, spec, _maker(src), env)
    assert warm is not None and any(warm.rglob("*-a"))  # compiled action outputs
    before = _listing(warm)
    copy = copy_build_cache(warm, tmp_path / "run" / "gocache")
    (src / "tiny.go").write_text("package tiny\n\nfunc Answer() int { return 43 }\n")
    home = tmp_path / "home"
    home.mkdir()
    done = subprocess.run(["go", "build", "./..."], cwd=src, capture_output=True, text=True,
                          env={**env, "HOME": str(home), "GOCACHE": str(copy)}, check=False)
    assert done.returncode == 0, done.stderr
    assert len(_listing(copy)) > len(before)  # the changed package went into the copy only
    assert _listing(warm) == before
    assert ensure_build_cache(root, "tiny", "c" * 40, spec, _maker(src), env) == warm
    assert [e["event"] for e in read_warm_log(root)] == ["start", "end"]


def test_same_files_in_another_commit_share_the_warm_cache(tmp_path: Path) -> None:
    """A run's snapshot and a `validate --deep` checkout made from the same tarball are two
    commits of one tree: they are keyed by the tree, so they share one warm-up."""
    from workspace_helpers import sh

    from copeca_action.workspace import tree_id

    src = _project(tmp_path)
    ids = []
    for name in ("snapshot", "checkout"):
        repo = tmp_path / name
        shutil.copytree(src, repo)
        sh("git", "init", "-q", cwd=repo)
        sh("git", "add", ".", cwd=repo)
        sh("git", "commit", "-q", "-m", f"made as the {name}", cwd=repo)
        ids.append((sh("git", "rev-parse", "HEAD", cwd=repo), tree_id(repo, "HEAD")))
    (commit_a, tree_a), (commit_b, tree_b) = ids
    assert commit_a != commit_b and tree_a == tree_b
    spec = _spec(tmp_path)
    root = tmp_path / "bc"
    first = ensure_build_cache(root, "app", tree_a, spec, _maker(src), ENV)
    assert first is not None
    assert ensure_build_cache(root, "app", tree_b, spec, _maker(src), ENV) == first
    assert (tmp_path / "warm-count").read_text().count("run") == 1
