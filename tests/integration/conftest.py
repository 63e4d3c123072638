"""Container engine fixtures: a podman service speaking the Docker API, and local images.

Nothing is pulled: the busybox image is built from Debian's busybox-static binary.
"""

from __future__ import annotations

import contextlib
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "image"))
import local_image  # the one podman set-up shared with image/*.sh

BUSYBOX_APPLETS = ("sh", "sleep", "cat", "echo", "ls", "mkdir", "true", "false", "wc", "grep",
                   "sed", "env", "id", "ps", "kill", "wget", "nc", "ping", "test", "[", "expr",
                   "head", "tail", "rm", "touch", "seq", "yes")


@pytest.fixture(scope="session")
def docker_host(docker_client: Any) -> str:
    """DOCKER_HOST for the private podman service (for code that calls docker.from_env)."""
    return str(docker_client.copeca_url)


@pytest.fixture(scope="session")
def podman_env(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    """The environment of a private podman (CLI or service); its storage is reset at the end.

    Everything podman keeps stays under its own folder: by default exit files, events and
    the "alive" marker live in /run/libpod and locks in /dev/shm/libpod_lock, shared with
    every other podman on the machine, and the reset would wipe them under any other test
    session running containers at the same time."""
    if shutil.which("podman") is None:
        pytest.skip("podman is not installed (apt-get install podman runc)")
    env = local_image.podman_env(tmp_path_factory.mktemp("podman"))
    try:
        yield env
    finally:
        # Unmount and delete the private storage, so the test folder can be removed.
        local_image.reset_storage(env)


@pytest.fixture(scope="session")
def docker_client(podman_env: dict[str, str]) -> Iterator[Any]:
    """A docker SDK client on a private podman service; the service is always stopped."""
    import docker

    env = podman_env
    root = Path(env["CONTAINERS_CONF"]).parent
    sock = root / "podman.sock"
    log = (root / "service.log").open("w")
    service = subprocess.Popen(["podman", "system", "service", "--time=0", f"unix://{sock}"],
                               env=env, stdout=log, stderr=subprocess.STDOUT,
                               start_new_session=True)
    client = None
    try:
        client = _connect(docker, f"unix://{sock}", service, root)
        yield client
    finally:
        if client is not None:
            with contextlib.suppress(Exception):
                for c in client.containers.list(all=True, filters={"label": "io.copeca.eval"}):
                    c.remove(force=True)
            client.close()
        service.terminate()
        try:
            service.wait(timeout=20)
        except subprocess.TimeoutExpired:
            service.kill()
            service.wait()
        log.close()


def _connect(docker: Any, url: str, service: subprocess.Popen[bytes], root: Path) -> Any:
    """Wait for the socket to answer (bounded), or skip with the service's own words."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if service.poll() is not None:
            pytest.skip("podman service exited: " + (root / "service.log").read_text()[-500:])
        with contextlib.suppress(Exception):
            client = docker.DockerClient(base_url=url, timeout=120)
            client.ping()
            client.copeca_url = url
            return client
        time.sleep(0.1)
    pytest.skip("podman service did not answer within 60 s")


@pytest.fixture(scope="session")
def busybox_image(docker_client: Any, tmp_path_factory: pytest.TempPathFactory) -> str:
    """A local image holding only a static busybox (built, never pulled)."""
    busybox = shutil.which("busybox")
    if busybox is None or b"ld-linux" in Path(busybox).read_bytes()[:8192]:
        pytest.skip("a static busybox is needed (apt-get install busybox-static)")
    ctx = tmp_path_factory.mktemp("busybox-image")
    bindir = ctx / "rootfs" / "bin"
    bindir.mkdir(parents=True)
    shutil.copy2(busybox, bindir / "busybox")
    for applet in BUSYBOX_APPLETS:
        (bindir / applet).symlink_to("busybox")
    (ctx / "rootfs" / "tmp").mkdir()
    (ctx / "Dockerfile").write_text("FROM scratch\nCOPY rootfs/ /\nCMD [\"/bin/sh\"]\n")
    from copeca_action.evaluate import build_image
    tag = build_image(docker_client, ctx / "Dockerfile", tag="localhost/copeca-test-busybox:1")
    try:  # an engine that answers may still be unable to start containers (nested, no cgroups)
        docker_client.containers.run(tag, ["true"], remove=True, network_mode="none")
    except Exception as exc:
        pytest.skip(f"podman answers but cannot run a container here: {exc}")
    return tag
