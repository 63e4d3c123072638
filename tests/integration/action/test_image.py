"""The action's image, built with podman from a locally made Debian base (nothing pulled),
started by action.yml's own run step (its bash, `docker` being podman): the workspace at
/github/workspace, GitHub's variables, the real `pull_request` payload, no network. The build
and runs go through image/local_image.py, the same code as image/build-local.sh and
image/smoke-dry-run.sh.

One build per session (a few minutes on 2 cores: CORPUS_TOOLCHAINS=0, and only the
snapshots the dry run needs unless COPECA_IMAGE_FETCH says otherwise, e.g. `1` for all).
"""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path

import local_image  # image/, on sys.path through tests/integration/conftest.py
import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.serialization import load_pem_private_key

from copeca_action._util.hashing import sha256_file
from copeca_action.bundle import keyid_of, verify_bundle
from copeca_action.github import OUTPUT_NAMES
from copeca_action.scenario import load_repos

ROOT = Path(__file__).resolve().parents[3]
pytestmark = [
    pytest.mark.container, pytest.mark.slow, pytest.mark.cli,
    pytest.mark.skipif(os.geteuid() != 0, reason="podman build and run here need root"),
    pytest.mark.skipif(not (ROOT / "runners" / "package-lock.json").is_file(),
                       reason="runners/package-lock.json is missing (the image npm-ci's it)"),
]
CODEX = True
"""The dry run drives Codex too (16 runs instead of 8; a few seconds more)."""


@pytest.fixture(scope="session")
def action_image(podman_env: dict[str, str], tmp_path_factory: pytest.TempPathFactory) -> str:
    try:
        base = local_image.import_base(podman_env, local_image.base_rootfs_tar())
    except RuntimeError as exc:
        pytest.skip(f"no Debian base image: {exc}")
    work = tmp_path_factory.mktemp("image")
    fetch = os.environ.get("COPECA_IMAGE_FETCH", " ".join(local_image.DRY_RUN_REPOS))
    try:
        local_image.build_image(podman_env, local_image.build_context(work / "context"),
                                work / "build.log", base=base, toolchains=False,
                                fetch_snapshots=fetch)
    except RuntimeError as exc:
        pytest.fail(str(exc))
    finally:
        shutil.rmtree(work / "context", ignore_errors=True)
    return local_image.IMAGE_TAG


def test_image_config_has_no_user_or_workdir(podman_env: dict[str, str],
                                             action_image: str) -> None:
    """GitHub forbids USER and WORKDIR for actions; the entrypoint is exec form; the snapshot
    cache variable is the one the code reads."""
    config = local_image.inspect_image(podman_env, action_image)["Config"]
    assert not config.get("User") and not config.get("WorkingDir"), config
    assert config["Entrypoint"] == ["/opt/copeca/venv/bin/python", "/opt/copeca/src/entrypoint.py"]
    env = dict(item.split("=", 1) for item in config["Env"])
    assert env["COPECA_CACHE_DIR"] == local_image.IMAGE_CACHE
    assert "COPECA_SNAPSHOT_CACHE" not in env


def test_fork_pull_request_without_secrets_is_skipped(
        podman_env: dict[str, str], action_image: str, tmp_path: Path) -> None:
    proc, tmp = local_image.fork_smoke(podman_env, tmp_path / "fork", action_image)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    outputs = local_image.read_outputs(tmp / "output")
    assert outputs["verdict"] == "skipped"
    assert outputs["bundle-path"] == ""
    ws = tmp_path / "fork" / "ws"
    assert not [p for p in ws.rglob("*.copeca") if p.is_file()]  # nothing ran, no bundle
    assert not list(ws.glob(".copeca-io.*"))  # action.yml's exchange folder is removed


def test_a_failing_entrypoint_fails_the_step_with_its_summary(
        podman_env: dict[str, str], action_image: str, tmp_path: Path) -> None:
    """podman's Docker API reports 0 for a failed `docker run --rm`: action.yml must not
    rely on it. A scenario that does not exist is a configuration error, exit 2."""
    proc, tmp = local_image.run_action(
        podman_env, tmp_path / "bad", local_image.pr_event(),
        {"INPUT_SCENARIO": "benchmark/missing.yaml", "INPUT_DRY_RUN": "true",
         "INPUT_COMMENT": "never"}, tag=action_image)
    assert proc.returncode == 2, proc.stdout[-2000:] + proc.stderr[-2000:]
    summary = (tmp / "summary.md").read_text()
    assert "copeca-action failed" in summary and "benchmark/missing.yaml" in summary


def test_dry_run_in_the_image_uses_its_snapshots_and_signs_a_verifiable_bundle(
        podman_env: dict[str, str], action_image: str, tmp_path: Path) -> None:
    work = tmp_path / "dry"
    proc, tmp, _ = local_image.dry_run(podman_env, work, codex=CODEX, tag=action_image)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    outputs = local_image.read_outputs(tmp / "output")
    assert set(OUTPUT_NAMES) <= set(outputs)
    assert outputs["verdict"] in {"improvement", "regression", "inconclusive"}, outputs

    # Paths are the runner's (host) paths of files the container wrote in the workspace.
    ws = work / "ws"
    bundle = Path(outputs["bundle-path"])
    assert bundle.is_file() and bundle.is_relative_to(ws), outputs["bundle-path"]
    assert sha256_file(bundle) == outputs["bundle-sha256"]
    report = json.loads(Path(outputs["report-path"]).read_text())
    assert (report["scenario"], report["verdict"]) == ("pr-dry", outputs["verdict"])
    assert Path(outputs["badge-path"]).is_file()
    summary = (tmp / "summary.md").read_text()
    assert outputs["bundle-sha256"] in summary and "pr-dry" in summary

    key = load_pem_private_key((work / "key.pem").read_bytes(), None)
    assert isinstance(key, Ed25519PrivateKey)
    verified = verify_bundle(bundle, key.public_key())
    assert verified.pinned and verified.keyid == keyid_of(key.public_key())
    records = verified.records
    runners = {"claude", "codex"} if CODEX else {"claude"}
    assert len(records) == 8 * len(runners) == len(verified.plan.runs)
    assert {r.runner for r in records} == runners
    assert all(r.outcome == "ok" for r in records), [(r.run_id, r.outcome) for r in records]
    assert all(r.cli_version for r in records)
    assert report["records"] == len(records)
    assert sum(r.correct for r in records) >= len(records) // 2

    # With --network=none the gin task could only run from the snapshot the build put in
    # the image's cache ($COPECA_CACHE_DIR): the commit of every gin run is that one.
    meta = json.loads(local_image.read_in_image(
        podman_env, f"{local_image.IMAGE_CACHE}/repos/gin.debian.json", action_image))
    pin = load_repos(ROOT / "corpus" / "repos.yaml")["gin"].debian
    assert pin is not None and pin.sha256 in meta["source"]
    gin = {r.snapshot_commit for r in records if r.task_id.startswith("gin/")}
    assert gin == {meta["commit"]}


@pytest.mark.skipif(shutil.which("docker") is None,
                    reason="no docker CLI for act's job container")
def _uploaded_bundle(ws: Path) -> Path:
    """The bundle in the artifact the upload stand-in received. The artifact is the output
    folder's `upload/` only (docs/action.md): the bundle, the reports and the badge, never
    the run folders or results.jsonl with the agents' raw output."""
    artifact = ws / "uploaded" / "copeca"
    assert not list(artifact.rglob("results.jsonl")) and not list(artifact.rglob("runs"))
    found = list(artifact.rglob("pr-dry.copeca"))
    assert len(found) == 1, sorted(str(p) for p in artifact.rglob("*"))
    return found[0]


def test_act_runs_the_example_workflow_with_uses_dot(
        podman_env: dict[str, str], docker_host: str, action_image: str,
        tmp_path: Path) -> None:
    """docs/examples/pr-gate.yml with `uses: ./` under act (podman's Docker API): the
    composite action resolves the image, runs it, its outputs reach the workflow's next step
    and the upload step gets the bundle (remote actions are local stand-ins)."""
    try:
        proc, ws = local_image.act_run(podman_env, docker_host, tmp_path / "act",
                                       tag=action_image)
    except RuntimeError as exc:
        pytest.skip(str(exc))
    log = proc.stdout + proc.stderr
    assert proc.returncode == 0 and "Job succeeded" in log, log[-4000:]
    shown = re.search(r"\| verdict=(\w+) delta=(\S*)", log)
    assert shown and shown.group(1) in {"improvement", "regression", "inconclusive"}, log[-4000:]
    verified = verify_bundle(_uploaded_bundle(ws))
    assert len(verified.records) == 8 and verified.keyid is None  # no signing key given
    assert not list(ws.glob(".copeca-io.*"))


@pytest.mark.skipif(shutil.which("docker") is None,
                    reason="no docker CLI for act's job container")
def test_act_runs_the_action_nested_in_a_users_composite_action(
        podman_env: dict[str, str], docker_host: str, action_image: str,
        tmp_path: Path) -> None:
    """Composite in composite: the workflow uses `./outer`, a composite action of the user's
    whose step is `uses: ./` (copeca-action). The image step finds this action's own folder
    (github.action_path), the run's outputs come back through the outer action's outputs,
    and the upload step still gets the bundle."""
    try:
        proc, ws = local_image.act_run(podman_env, docker_host, tmp_path / "act",
                                       tag=action_image, nested=True)
    except RuntimeError as exc:
        pytest.skip(str(exc))
    log = proc.stdout + proc.stderr
    assert (ws / "outer" / "action.yml").is_file()
    assert proc.returncode == 0 and "Job succeeded" in log, log[-4000:]
    shown = re.search(r"\| verdict=(\w+) delta=(\S*)", log)
    assert shown and shown.group(1) in {"improvement", "regression", "inconclusive"}, log[-4000:]
    assert verify_bundle(_uploaded_bundle(ws)).records
