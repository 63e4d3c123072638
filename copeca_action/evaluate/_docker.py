"""The `docker` sandbox: the command runs in a fresh container of a locally built image.

Docker Engine API through the docker SDK (podman's service works the same). The container has
no network, capped memory and processes, and the command as its main process, so killing the
container at the timeout kills every process of the command. Images are never pulled: a
missing image is an error that says how to build it. The container is removed whatever happens.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import tarfile
import time
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path, PurePosixPath
from typing import Any

from copeca_action.errors import ConfigError, InfraError
from copeca_action.evaluate._sandbox import ExecResult, register_sandbox

WORKDIR = "/workspace"
LABEL = "io.copeca.eval"
LOG_LINES = 20_000
"""Last lines of a container's output kept (summaries are at the end)."""


def docker_client(base_url: str | None = None) -> Any:
    """A docker SDK client from DOCKER_HOST (or `base_url`); an InfraError when unreachable."""
    try:
        import docker
    except ImportError as exc:  # pragma: no cover - a declared dependency
        raise InfraError("the docker sandbox needs the `docker` package") from exc
    try:
        client = docker.DockerClient(base_url=base_url) if base_url else docker.from_env()
        client.ping()
        return client
    except Exception as exc:
        raise InfraError(f"no container engine answers ({exc}); start one and set DOCKER_HOST "
                         "(see docs/patch-evaluation.md)") from exc


def build_image(client: Any, dockerfile: Path, tag: str | None = None) -> str:
    """Build `dockerfile` (its folder is the context) without pulling; the image tag.
    The default tag carries a digest of the Dockerfile, so an edited file builds anew."""
    dockerfile = dockerfile.resolve()
    if not dockerfile.is_file():
        raise InfraError(f"Dockerfile {dockerfile} not found")
    if tag is None:
        digest = hashlib.sha256(dockerfile.read_bytes()).hexdigest()[:12]
        tag = f"localhost/copeca-eval-{dockerfile.parent.name.lower()}:{digest}"
    with contextlib.suppress(Exception):
        client.images.get(tag)
        return tag
    for base in base_images(dockerfile.read_text()):
        try:
            client.images.get(base)
        except Exception as exc:
            raise InfraError(f"{dockerfile}: base image {base!r} is not present locally and is "
                             "never pulled; build or import it first") from exc
    try:
        client.images.build(path=str(dockerfile.parent), dockerfile=dockerfile.name, tag=tag,
                            pull=False, rm=True, forcerm=True)
    except Exception as exc:
        raise InfraError(f"building {dockerfile} failed (images are never pulled; a FROM must "
                         f"name a local image): {exc}") from exc
    return tag


def base_images(dockerfile_text: str) -> list[str]:
    """The images a Dockerfile's FROM lines need (not `scratch`, not earlier stages, not
    names built from ARGs, which cannot be checked before the build)."""
    stages: set[str] = set()
    needed: list[str] = []
    for line in dockerfile_text.splitlines():
        words = line.split()
        if not words or words[0].upper() != "FROM":
            continue
        args = [w for w in words[1:] if not w.startswith("--")]
        if not args:
            continue
        image = args[0]
        if len(args) >= 3 and args[1].upper() == "AS":
            stages.add(args[2].lower())
        if image.lower() not in stages and image != "scratch" and "$" not in image:
            needed.append(image)
    return needed


def tar_tree(tree: Path, prefix: str = WORKDIR.lstrip("/")) -> bytes:
    """The tree as a tar under `prefix` (its .git left out: tests do not need it)."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        tar.add(tree, arcname=prefix, filter=lambda ti: None
                if PurePosixPath(ti.name).parts[1:2] == (".git",) else ti)
    return buf.getvalue()


class DockerSandbox:
    """Runs commands in throwaway containers of one local image."""

    name = "docker"

    def __init__(self, image: str | None = None, client: Any = None, mem_limit: str = "2g",
                 pids_limit: int = 512, cpus: float | None = None, user: str | None = None,
                 **_: object) -> None:
        if not image:
            raise InfraError("the docker sandbox needs an image: set `dockerfile` for the repo "
                             "in repos.yaml, or pass --image")
        self.client = client or docker_client()
        self.image = image
        self.mem_limit = mem_limit
        self.pids_limit = pids_limit
        self.cpus = cpus
        self.user = user
        try:
            self.client.images.get(image)
        except Exception as exc:
            raise InfraError(f"image {image!r} is not present locally and is never pulled; "
                             "build it first (repos.yaml `dockerfile`)") from exc

    def run(self, tree: Path, argv: Sequence[str], *, timeout_s: float,
            env: Mapping[str, str] | None = None, collect: Sequence[str] = (),
            writable: Sequence[Path] = ()) -> ExecResult:
        if writable:
            raise ConfigError("the docker sandbox cannot mount host folders for a build cache; "
                              "use the local backend", file="--backend")
        start = time.monotonic()
        with self._container(argv, env) as container:
            try:
                container.put_archive("/", tar_tree(tree))
                container.start()
            except Exception as exc:
                raise InfraError(f"container for {self.image} could not start: {exc}") from exc
            code = _wait_exited(container, start, timeout_s)
            timed_out = code is None
            if timed_out:
                with contextlib.suppress(Exception):
                    container.kill()
                with contextlib.suppress(Exception):
                    container.wait(timeout=30)
            duration = time.monotonic() - start
            output = container.logs(stdout=True, stderr=True, tail=LOG_LINES).decode(
                "utf-8", "replace")
            files = {rel: text for rel in collect
                     if (text := _read_file(container, f"{WORKDIR}/{rel}")) is not None}
        if timed_out:
            output += f"\n[copeca: container killed after {timeout_s:g}s timeout]\n"
        isolation = ["container", "network-none", f"pids-limit({self.pids_limit})",
                     f"mem-limit({self.mem_limit})"]
        return ExecResult(exit_code=code, output=output, timed_out=timed_out,
                          duration_s=round(duration, 3), isolation=isolation, files=files)

    @contextlib.contextmanager
    def _container(self, argv: Sequence[str], env: Mapping[str, str] | None) -> Iterator[Any]:
        options: dict[str, Any] = {
            "command": list(argv), "working_dir": WORKDIR, "network_mode": "none",
            "mem_limit": self.mem_limit, "memswap_limit": self.mem_limit,
            "pids_limit": self.pids_limit, "environment": {"HOME": "/tmp", "CI": "true",
                                                            **(env or {})},
            "labels": {LABEL: "1"}, "detach": True,
        }
        if self.cpus:
            options["nano_cpus"] = int(self.cpus * 1e9)
        if self.user:
            options["user"] = self.user
        try:
            container = self.client.containers.create(self.image, **options)
        except Exception as exc:
            raise InfraError(f"container for {self.image} could not be created: {exc}") from exc
        try:
            yield container
        finally:
            with contextlib.suppress(Exception):
                container.remove(force=True)

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.client.close()


EXITED = ("exited", "dead")
"""Container states in which the exit code and the log are final."""
SETTLE_POLL_S = 0.05
"""Pause between state checks after a wait that answered before the container had exited."""


def _wait_exited(container: Any, start: float, timeout_s: float) -> int | None:
    """The exit code once the engine records the container as exited; None at the deadline.

    The wait endpoint's answer is not the verdict: podman's Docker API can answer while the
    container is still `stopped` (its exit not yet recorded, conmon's log not yet drained),
    with a code read too early, and one whose run-time folder (/run/libpod by default, shared
    by every podman on the host) was wiped answers 0 for any exit and forgets the container
    ran. The inspected state decides: `exited` gives the code; `created` again is an error;
    anything else means wait again.
    """
    deadline = start + timeout_s
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            return None
        try:
            container.wait(timeout=max(1.0, left))
        except Exception as exc:  # requests' ReadTimeout or ConnectionError: the timeout
            if time.monotonic() - start < 0.9 * timeout_s:
                raise InfraError(f"waiting for the container failed: {exc}") from exc
            return None
        state = _state(container)
        status = str(state.get("Status", "")).lower()
        if status in EXITED and not state.get("Running"):
            return int(state.get("ExitCode", -1))
        if status == "created":
            raise InfraError("the engine lost the container's exit (it reads `created` again "
                             "after it ran; a podman sharing its tmp_dir was reset?): the exit "
                             "code cannot be trusted")
        time.sleep(SETTLE_POLL_S)  # the engine's own wait answered early; no event to await


def _state(container: Any) -> dict[str, Any]:
    try:
        container.reload()
    except Exception as exc:
        raise InfraError(f"inspecting the container failed: {exc}") from exc
    state = container.attrs.get("State") or {}
    return state if isinstance(state, dict) else {}


def _read_file(container: Any, path: str, cap: int = 8 * 2**20) -> str | None:
    try:
        stream, stat = container.get_archive(path)
    except Exception:
        return None
    if stat.get("size", 0) > cap:
        return None
    data = b"".join(stream)
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        member = next((m for m in tar.getmembers() if m.isfile()), None)
        handle = tar.extractfile(member) if member else None
        return handle.read().decode("utf-8", "replace") if handle else None


register_sandbox("docker", DockerSandbox)
