"""Seconds per patch evaluation: local vs docker sandbox, at concurrency 1, 2 and 4.

Each evaluation is a full solo evaluation of a real patch on a real git repository: sanitise,
clone, apply (ladder), commit, apply the hidden tests patch, run the test command in the
sandbox, parse, clean up. The test command is a shell one-liner (the same in both sandboxes),
so the figures measure the harness and the sandbox, not a test suite. With --fastapi DIR
(an unpacked fastapi 0.115.6 sdist) and --python BIN (a venv bin/ with its test deps) the local
backend is also measured on a real pytest file.

    .venv/bin/python bench/patch_eval.py [--runs 8] [--concurrency 1 2 4] [--no-docker]

The docker backend starts a private podman service (podman, runc, busybox-static needed) and
builds a busybox image; nothing is pulled.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from copeca_action.evaluate import (
    DockerSandbox,
    FeatureSpec,
    LocalSandbox,
    Sandbox,
    base_repo,
    build_image,
    evaluate_solo,
)

CALC = "def add(a, b):\n    return a - b\n"
FIXED = "def add(a, b):\n    return a + b\n"
CHECK = "#!/bin/sh\ngrep -q 'a + b' calc.py && echo '1 passed in 0.00s'\n"


def git(cwd: Path, *argv: str) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@b",
           "GIT_COMMITTER_NAME": "b", "GIT_COMMITTER_EMAIL": "b@b"}
    return subprocess.run(["git", *argv], cwd=cwd, env=env, check=True, capture_output=True,
                          text=True).stdout


def diff_of(repo: Path, edits: dict[str, str], scratch: Path) -> str:
    work = Path(tempfile.mkdtemp(dir=scratch))
    shutil.copytree(repo, work, dirs_exist_ok=True)
    for rel, text in edits.items():
        (work / rel).parent.mkdir(parents=True, exist_ok=True)
        (work / rel).write_text(text)
    git(work, "add", "-A")
    return git(work, "diff", "--cached", "HEAD")


def toy_repo(root: Path) -> tuple[Path, str, FeatureSpec]:
    repo = root / "repo"
    repo.mkdir()
    (repo / "calc.py").write_text(CALC)
    git(repo, "init", "-q")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "base")
    patch = diff_of(repo, {"calc.py": FIXED}, root)
    tests = diff_of(repo, {"tests/check.sh": CHECK}, root)
    return repo, patch, FeatureSpec(id=1, tests_patch=tests, command=["sh", "tests/check.sh"],
                                    timeout_s=60)


def measure(sandbox: Sandbox, repo: Path, features: list[FeatureSpec], patch: str, runs: int,
            concurrency: int) -> tuple[float, float, int]:
    """(wall seconds per evaluation, mean seconds of one evaluation, passes)."""
    base = base_repo(repo)
    evaluate_solo(base, features, patch, sandbox, repo="bench", task_id="warm-up")

    def one(_: int) -> tuple[float, bool]:
        start = time.perf_counter()
        result = evaluate_solo(base, features, patch, sandbox, repo="bench", task_id="t")
        return time.perf_counter() - start, result.both_passed

    start = time.perf_counter()
    with ThreadPoolExecutor(max_workers=concurrency) as pool:
        done = list(pool.map(one, range(runs)))
    wall = time.perf_counter() - start
    return wall / runs, statistics.mean(d for d, _ in done), sum(ok for _, ok in done)


@contextlib.contextmanager
def podman_client(root: Path) -> Iterator[Any]:
    import docker

    root.mkdir(parents=True, exist_ok=True)
    conf = root / "containers.conf"
    conf.write_text('[containers]\ndefault_ulimits = ["nofile=20000:20000", "nproc=4096:4096"]\n'
                    '[engine]\nruntime = "runc"\ncgroup_manager = "cgroupfs"\n'
                    'events_logger = "file"\n')
    storage = root / "storage.conf"
    storage.write_text(f'[storage]\ndriver = "overlay"\ngraphroot = "{root}/graph"\n'
                       f'runroot = "{root}/run"\n')
    env = {**os.environ, "CONTAINERS_CONF": str(conf), "CONTAINERS_STORAGE_CONF": str(storage)}
    sock = root / "podman.sock"
    service = subprocess.Popen(["podman", "system", "service", "--time=0", f"unix://{sock}"],
                               env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                client = docker.DockerClient(base_url=f"unix://{sock}", timeout=120)
                client.ping()
                break
            except Exception:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.1)
        yield client
        client.close()
    finally:
        service.terminate()
        service.wait(timeout=30)
        subprocess.run(["podman", "system", "reset", "--force"], env=env, capture_output=True,
                       check=False)


def busybox_image(client: Any, root: Path) -> str:
    busybox = shutil.which("busybox")
    if busybox is None:
        raise SystemExit("busybox-static is needed for the docker figures (or --no-docker)")
    bindir = root / "ctx" / "rootfs" / "bin"
    bindir.mkdir(parents=True)
    shutil.copy2(busybox, bindir / "busybox")
    for applet in ("sh", "grep", "echo", "cat", "true"):
        (bindir / applet).symlink_to("busybox")
    (root / "ctx" / "Dockerfile").write_text('FROM scratch\nCOPY rootfs/ /\nCMD ["/bin/sh"]\n')
    start = time.perf_counter()
    tag = build_image(client, root / "ctx" / "Dockerfile", tag="localhost/copeca-bench:1")
    print(f"busybox image built in {time.perf_counter() - start:.2f} s")
    return tag


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=8, help="evaluations per cell")
    parser.add_argument("--concurrency", type=int, nargs="+", default=[1, 2, 4])
    parser.add_argument("--no-docker", action="store_true")
    parser.add_argument("--fastapi", type=Path, help="unpacked fastapi 0.115.6 sdist")
    parser.add_argument("--python", type=Path, help="bin/ of a venv with fastapi's test deps")
    args = parser.parse_args()
    rows: list[tuple[str, str, int, float, float, int]] = []
    with tempfile.TemporaryDirectory(prefix="copeca-bench-") as tmp:
        root = Path(tmp)
        repo, patch, feature = toy_repo(root)
        local = LocalSandbox()
        print(f"local sandbox network cut: {local.network}; cpus: {os.cpu_count()}")
        for c in args.concurrency:
            rows.append(("local", "shell check", c,
                         *measure(local, repo, [feature], patch, args.runs, c)))
        if args.fastapi and args.python:
            os.environ["PATH"] = f"{args.python}{os.pathsep}{os.environ['PATH']}"
            data = Path(__file__).resolve().parent.parent / "tests/data/patcheval/corpus/tasks"
            opid = data / "fastapi/opid/patches"
            spec = FeatureSpec(id=1, tests_patch=(opid / "tests_f2.patch").read_text(),
                               command=["python", "-m", "pytest", "-q", "-p", "no:cacheprovider",
                                        "tests/test_copeca_f2.py"], timeout_s=300)
            fix = (opid / "fix_f2.patch").read_text()
            for c in args.concurrency:
                rows.append(("local", "fastapi pytest", c,
                             *measure(local, args.fastapi, [spec], fix, max(2, args.runs // 2),
                                      c)))
        if not args.no_docker:
            if shutil.which("podman") is None:
                print("podman not installed: no docker figures")
            else:
                with podman_client(root / "podman") as client:
                    image = busybox_image(client, root / "image")
                    docker = DockerSandbox(image=image, client=client)
                    for c in args.concurrency:
                        rows.append(("docker", "shell check", c,
                                     *measure(docker, repo, [feature], patch, args.runs, c)))
    print(f"\n{'backend':8} {'test':15} {'conc':>4} {'s/eval (wall)':>14} {'s/eval (each)':>14}"
          " passed")
    for backend, test, c, per_eval, each, ok in rows:
        print(f"{backend:8} {test:15} {c:>4} {per_eval:>14.3f} {each:>14.3f} {ok:>3}/"
              f"{args.runs if test == 'shell check' else max(2, args.runs // 2)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
