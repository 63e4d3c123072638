"""Both sandboxes against hostile commands: endless loops, the network, fork bombs, secrets.

`local` runs wherever Linux namespaces work; `docker` needs podman (skips with the reason).
"""

from __future__ import annotations

import socket
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from copeca_action.errors import InfraError
from copeca_action.evaluate import DockerSandbox, LocalSandbox, Sandbox, detect_network_cut


@pytest.fixture(params=["local", "docker"])
def sandbox(request: pytest.FixtureRequest) -> Iterator[Sandbox]:
    if request.param == "local":
        if detect_network_cut() == "none":
            pytest.skip("neither bwrap nor unshare works here: no network isolation")
        yield LocalSandbox(pids_max=128, memory_bytes=512 * 2**20)
        return
    client = request.getfixturevalue("docker_client")
    image = request.getfixturevalue("busybox_image")
    yield DockerSandbox(image=image, client=client, pids_limit=128, mem_limit="256m")


def processes_with(marker: str) -> list[int]:
    """Host pids whose command line holds `marker` (containers' processes included)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if marker.encode() in (entry / "cmdline").read_bytes():
                    found.append(int(entry.name))
            except OSError:
                continue
    return found


def test_simple_command_and_exit_code(sandbox: Sandbox, tmp_path: Path) -> None:
    (tmp_path / "data.txt").write_text("hello\n")
    result = sandbox.run(tmp_path, ["sh", "-c", "cat data.txt; echo made > out.txt; exit 3"],
                         timeout_s=60, collect=["out.txt", "missing.txt"])
    assert result.exit_code == 3 and "hello" in result.output and not result.timed_out
    assert result.files == {"out.txt": "made\n"}
    assert result.isolation


def test_endless_loop_is_killed_at_the_timeout_with_its_children(sandbox: Sandbox,
                                                                 tmp_path: Path) -> None:
    marker = f"copeca{uuid.uuid4().hex[:10]}"
    script = tmp_path / f"{marker}.sh"
    script.write_text(f"sleep 86400 &\nexec sh -c 'while :; do :; done' {marker}\n")
    result = sandbox.run(tmp_path, ["sh", script.name], timeout_s=2)
    assert result.timed_out and result.exit_code is None
    assert "killed after 2s timeout" in result.output
    assert result.duration_s < 30
    assert processes_with(marker) == []


def test_network_is_cut(sandbox: Sandbox, tmp_path: Path) -> None:
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    port = server.getsockname()[1]
    probe = ("ls /sys/class/net; "
             f"(echo hi | nc -w 2 127.0.0.1 {port}) && echo LOOPBACK-REACHED; "
             "wget -q -T 3 -O- http://1.1.1.1/ && echo OUTSIDE-REACHED; exit 0")
    if isinstance(sandbox, LocalSandbox):
        probe = ("python3 -c \"import socket;socket.create_connection(('127.0.0.1', "
                 f"{port}), 2);print('LOOPBACK-REACHED')\"; python3 -c \"import socket;"
                 "socket.getaddrinfo('pypi.org', 443);print('DNS-WORKED')\"; exit 0")
        control = subprocess.run(["sh", "-c", probe], capture_output=True, text=True)
        assert "LOOPBACK-REACHED" in control.stdout  # the probe works outside the sandbox
    result = sandbox.run(tmp_path, ["sh", "-c", probe], timeout_s=60)
    server.close()
    assert "REACHED" not in result.output and "DNS-WORKED" not in result.output
    if isinstance(sandbox, DockerSandbox):
        assert result.output.split()[0] == "lo" or "eth" not in result.output


def test_fork_bomb_is_contained(sandbox: Sandbox, tmp_path: Path) -> None:
    if isinstance(sandbox, LocalSandbox):
        probe = sandbox.run(tmp_path, ["true"], timeout_s=30)
        if not any(label.startswith("pids-cgroup") for label in probe.isolation):
            pytest.skip("no writable pids cgroup here: the local sandbox cannot cap processes")
    marker = f"bomb{uuid.uuid4().hex[:10]}"
    (tmp_path / f"{marker}.sh").write_text("f() { f | f & }\nf\nwait\n")
    result = sandbox.run(tmp_path, ["sh", f"{marker}.sh"], timeout_s=5)
    assert result.duration_s < 60
    assert processes_with(marker) == []
    # The host still forks fine.
    assert subprocess.run(["true"]).returncode == 0


def test_host_secrets_do_not_leak(sandbox: Sandbox, tmp_path: Path,
                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-should-not-leak")
    result = sandbox.run(tmp_path, ["env"], timeout_s=30, env={"FEATURE": "on"})
    assert "sk-should-not-leak" not in result.output and "FEATURE=on" in result.output


def test_local_tree_is_writable_but_host_is_not(tmp_path: Path) -> None:
    sandbox = LocalSandbox()
    if sandbox.network != "bwrap":
        pytest.skip("read-only host needs bubblewrap")
    outside = Path("/usr/local") / f"copeca-outside-{uuid.uuid4().hex[:6]}"  # read-only
    result = sandbox.run(tmp_path, ["sh", "-c", f"touch inside.txt; touch {outside}"],
                         timeout_s=30)
    assert (tmp_path / "inside.txt").exists() and not outside.exists()
    assert result.exit_code != 0


def test_bwrap_view_hides_the_harness(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Graded code under bwrap: the harness's key file reads empty, its output folder (other
    runs), HOME and /tmp are empty folders, its /proc is not visible; the tree stays
    writable and the interpreter runs."""
    import os
    import sys

    from copeca_action._util import scrub

    sandbox = LocalSandbox()
    if sandbox.network != "bwrap":
        pytest.skip("the minimal view needs bubblewrap")
    secret = f"PLANTED-{uuid.uuid4().hex}"
    out = tmp_path / "out"
    other = out / "runs" / "other-run"
    other.mkdir(parents=True)
    (other / "grade.json").write_text(secret)
    tree = out / ".worktrees" / "this-run"
    tree.mkdir(parents=True)
    key = tmp_path / "keys" / "signing.key"
    key.parent.mkdir()
    key.write_text(secret)
    in_tmp = Path("/tmp") / f"copeca-harness-{uuid.uuid4().hex[:6]}"
    in_tmp.write_text(secret)
    monkeypatch.setattr(scrub, "_SECRET_FILES", {key.resolve()})
    monkeypatch.setattr(scrub, "_PRIVATE_DIRS", {out.resolve()})
    monkeypatch.setenv("COPECA_TEST_PLANTED", secret)
    try:
        script = (f"cat {key}; cat {other}/grade.json; cat {in_tmp}; "
                  f"cat /proc/{os.getpid()}/environ; cat /proc/*/environ; ls -a {Path.home()}; "
                  f"touch {other}/tampered; echo written > inside.txt; "
                  f"{sys.executable} -c 'print(\"python ok\")'")
        result = sandbox.run(tree, ["sh", "-c", script], timeout_s=60)
    finally:
        in_tmp.unlink()
    assert "python ok" in result.output, result.output
    assert secret not in result.output
    assert (tree / "inside.txt").read_text() == "written\n"
    assert not (other / "tampered").exists()
    assert {"ro-host", "private-hidden", "keys-hidden", "pidns"} <= set(result.isolation)


def test_unshare_fallback_records_what_it_lacks(tmp_path: Path) -> None:
    from copeca_action.evaluate._local import graded_view_works, unshare_prefix

    if unshare_prefix() is None:
        pytest.skip("unshare does not work here")
    result = LocalSandbox(network="unshare").run(tmp_path, ["true"], timeout_s=30)
    assert "ro-host" not in result.isolation and "private-hidden" not in result.isolation
    if graded_view_works():  # the harness's files read-only, keys empty: nothing hidden
        assert result.isolation[:4] == ["netns", "pidns", "harness-ro", "keys-hidden"]
    else:
        assert "no-fs-isolation" in result.isolation


def test_docker_missing_image_is_an_infra_error_never_a_pull(docker_client: Any) -> None:
    with pytest.raises(InfraError, match="never pulled"):
        DockerSandbox(image="docker.io/library/alpine:3.19", client=docker_client)
    assert not [i for i in docker_client.images.list() if "alpine" in str(i.tags)]


def test_docker_containers_are_removed(docker_client: Any, busybox_image: str,
                                       tmp_path: Path) -> None:
    sandbox = DockerSandbox(image=busybox_image, client=docker_client)
    before = {c.id for c in docker_client.containers.list(all=True)}
    sandbox.run(tmp_path, ["sh", "-c", "exit 0"], timeout_s=30)
    sandbox.run(tmp_path, ["sleep", "60"], timeout_s=1)
    after = {c.id for c in docker_client.containers.list(all=True)}
    assert after <= before


def test_command_not_found_is_127(tmp_path: Path) -> None:
    result = LocalSandbox().run(tmp_path, ["no-such-binary-xyz"], timeout_s=10)
    assert result.exit_code == 127


def test_chatty_output_is_capped_but_keeps_the_end(sandbox: Sandbox, tmp_path: Path) -> None:
    result = sandbox.run(tmp_path, ["sh", "-c", "yes spam-spam-spam | head -n 300000; "
                                    "echo THE-END"], timeout_s=60)
    assert result.exit_code == 0
    assert result.output.rstrip().endswith("THE-END")
    assert len(result.output) < 1_000_000  # 5 MB were written


def test_build_refuses_a_base_image_that_is_not_local(docker_client: Any,
                                                      tmp_path: Path) -> None:
    from copeca_action.evaluate import build_image

    (tmp_path / "Dockerfile").write_text("FROM docker.io/library/alpine:3.19\nRUN true\n")
    with pytest.raises(InfraError, match="never pulled"):
        build_image(docker_client, tmp_path / "Dockerfile")


def test_local_cgroups_are_removed_after_timeouts_and_bombs(tmp_path: Path) -> None:
    from copeca_action.evaluate._cgroup import CGROUP_ROOT

    sandbox = LocalSandbox(pids_max=64)
    before = {p.name for p in CGROUP_ROOT.glob("*/copeca-eval-*")}
    probe = sandbox.run(tmp_path, ["true"], timeout_s=30)
    if not any(label.startswith("pids-cgroup") for label in probe.isolation):
        pytest.skip("no writable cgroup here")
    (tmp_path / "bomb.sh").write_text("f() { f | f & }\nf\nwait\n")
    sandbox.run(tmp_path, ["sh", "bomb.sh"], timeout_s=2)
    sandbox.run(tmp_path, ["sh", "-c", "sleep 100 & sleep 100"], timeout_s=1)
    assert {p.name for p in CGROUP_ROOT.glob("*/copeca-eval-*")} <= before


@pytest.mark.parametrize("network", ["bwrap", "unshare"])
def test_each_local_network_cut_leaves_only_loopback(network: str, tmp_path: Path) -> None:
    from copeca_action.evaluate._local import BWRAP_PROBE, _works, unshare_prefix

    if (network == "bwrap" and not _works(BWRAP_PROBE)) or (
            network == "unshare" and unshare_prefix() is None):
        pytest.skip(f"{network} does not work here")
    result = LocalSandbox(network=network).run(  # type: ignore[arg-type]
        tmp_path, ["sh", "-c", "tail -n +3 /proc/net/dev | cut -d: -f1"], timeout_s=30)
    assert result.output.split() == ["lo"] and "netns" in result.isolation


class _EarlyWaitContainer:
    """A real container whose first wait answers at once with `code`, as podman's Docker API
    can under load: before the exit is recorded and before the log is drained."""

    def __init__(self, container: Any, code: int) -> None:
        self._container = container
        self._code: int | None = code

    def wait(self, **kwargs: Any) -> dict[str, Any]:
        if self._code is not None:
            code, self._code = self._code, None
            return {"StatusCode": code, "Error": None}
        return dict(self._container.wait(**kwargs))

    def __getattr__(self, name: str) -> Any:
        return getattr(self._container, name)


class _EarlyWaitClient:
    """The real podman client; only containers' first wait is the engine's early answer."""

    def __init__(self, client: Any, code: int) -> None:
        self._client = client
        self._code = code
        self.containers = self

    def create(self, *args: Any, **kwargs: Any) -> _EarlyWaitContainer:
        return _EarlyWaitContainer(self._client.containers.create(*args, **kwargs), self._code)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._client.containers if name in ("get", "list") else self._client,
                       name)


@pytest.mark.parametrize(("early", "real"), [(0, 3), (-1, 0)])
def test_docker_verdict_waits_for_the_recorded_exit(docker_client: Any, busybox_image: str,
                                                    tmp_path: Path, early: int,
                                                    real: int) -> None:
    """An early wait answer (a passing code for a failing run, -1 for a passing one) must not
    become the verdict, nor cut the log short; two runs at once, as `eval -c 2` does."""
    from concurrent.futures import ThreadPoolExecutor

    sandbox = DockerSandbox(image=busybox_image, client=_EarlyWaitClient(docker_client, early))
    argv = ["sh", "-c", f"echo first; sleep 1; echo last-line; exit {real}"]
    with ThreadPoolExecutor(2) as pool:
        results = list(pool.map(lambda _: sandbox.run(tmp_path, argv, timeout_s=60), range(2)))
    for result in results:
        assert (result.exit_code, result.timed_out) == (real, False)
        assert "last-line" in result.output
