"""run_agent with real processes: exit codes, /dev/null stdin, group kill on timeout/cancel."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import pytest

from copeca_action.agent import AgentInvocation, run_agent
from copeca_action.agent._process import agent_isolation
from copeca_action.errors import InfraError

from .conftest import fake_cli


def _inv(tmp_path: Path, script: str, isolate: bool = False) -> AgentInvocation:
    """Host mode by default: these tests read the agent's own pids (`$!`), which a pid
    namespace renumbers; the isolated mode is tested by what is on the host's /proc."""
    exe = fake_cli(tmp_path, "agent", script)
    run = tmp_path / "run"
    return AgentInvocation(runner="fake", model="m", argv=[str(exe)], cwd=tmp_path,
                           env={"PATH": os.environ["PATH"], "HOME": str(tmp_path)},
                           config_dir=run / "config", home_dir=run / "home",
                           tmp_dir=run / "tmp", stdout_path=run / "stdout.jsonl",
                           stderr_path=run / "stderr.txt", binary=exe, isolate=isolate)


def _with_marker(marker: str) -> list[int]:
    """Host pids whose command line holds `marker`."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if marker.encode() in (entry / "cmdline").read_bytes() and _alive(
                        int(entry.name)):
                    found.append(int(entry.name))
            except OSError:
                continue
    return found


def _none_with(marker: str, within: float = 10.0) -> bool:
    deadline = time.monotonic() + within
    while _with_marker(marker):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie is dead for our purposes.
    stat = Path(f"/proc/{pid}/stat")
    return stat.exists() and stat.read_text().split()[2] != "Z"


def _gone(pid: int, within: float = 5.0) -> bool:
    """Killed processes take a moment to die and be reaped (by init, once orphaned)."""
    deadline = time.monotonic() + within
    while _alive(pid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


def test_exit_code_and_output_files(tmp_path: Path) -> None:
    inv = _inv(tmp_path, 'echo out; echo err >&2; read x || echo "stdin closed"; exit 3')
    result = run_agent(inv, timeout_s=30)
    assert result.exit_code == 3 and not result.timed_out and not result.cancelled
    assert inv.stdout_path.read_text() == "out\nstdin closed\n"
    assert inv.stderr_path.read_text() == "err\n"


def test_timeout_kills_the_whole_group(tmp_path: Path) -> None:
    pidfile = tmp_path / "child.pid"
    inv = _inv(tmp_path, f"sleep 300 & echo $! > {pidfile}; wait")
    start = time.monotonic()
    result = run_agent(inv, timeout_s=1.0)
    assert result.timed_out and result.exit_code is None
    assert time.monotonic() - start < 10
    assert _gone(int(pidfile.read_text()))


def test_term_ignoring_agent_is_killed(tmp_path: Path) -> None:
    inv = _inv(tmp_path, "trap '' TERM; while :; do sleep 0.1; done")
    result = run_agent(inv, timeout_s=0.5)
    assert result.timed_out and result.duration_s < 10


def test_cancel_stops_the_run(tmp_path: Path) -> None:
    inv = _inv(tmp_path, "sleep 300")
    cancel = threading.Event()
    timer = threading.Timer(0.3, cancel.set)
    timer.start()
    result = run_agent(inv, timeout_s=60, cancel=cancel)
    timer.join()
    assert result.cancelled and not result.timed_out and result.duration_s < 10


def test_leftover_processes_are_cleaned_after_a_normal_exit(tmp_path: Path) -> None:
    pidfile = tmp_path / "child.pid"
    inv = _inv(tmp_path, f"sleep 300 > /dev/null 2>&1 & echo $! > {pidfile}; exit 0")
    assert run_agent(inv, timeout_s=30).exit_code == 0
    assert _gone(int(pidfile.read_text()))


def test_missing_binary_raises_infra_error(tmp_path: Path) -> None:
    inv = _inv(tmp_path, "exit 0").model_copy(update={"binary": tmp_path / "gone",
                                                      "argv": [str(tmp_path / "gone")]})
    with pytest.raises(InfraError):
        run_agent(inv, timeout_s=5)


_HARNESS = """
import sys
from copeca_action.agent import AgentInvocation, run_agent
from copeca_action.agent._process import agent_isolation
run_agent(AgentInvocation.model_validate_json(sys.argv[1]), 120)
"""


@pytest.mark.parametrize("isolate", [False, True], ids=["host", "isolated"])
def test_kill_9_of_the_harness_leaves_no_agent_process(tmp_path: Path, isolate: bool) -> None:
    """A real SIGKILL of the harness: the watchdog kills the agent's whole group (and, in a
    pid namespace, the namespace dies with it)."""
    import signal
    import subprocess
    import sys

    pids = tmp_path / "pids"
    marker = f"{os.getpid() % 1000 + 1000}.{time.monotonic_ns() % 10**6:06d}"
    inv = _inv(tmp_path, f'sleep {marker} & echo "$$ $!" > {pids}.tmp; mv {pids}.tmp {pids}; '
               "wait", isolate=isolate)
    harness = subprocess.Popen([sys.executable, "-c", _HARNESS, inv.model_dump_json()])
    deadline = time.monotonic() + 20
    while not pids.exists():
        assert harness.poll() is None and time.monotonic() < deadline, "agent never started"
        time.sleep(0.02)
    while not _with_marker(marker):  # the forked child may not have exec'd `sleep` yet
        assert time.monotonic() < deadline, "the agent's child never started"
        time.sleep(0.02)
    harness.send_signal(signal.SIGKILL)
    harness.wait()
    assert _none_with(marker, within=30)  # the watchdog may still be starting


def test_kill_9_before_the_gate_opens_starts_nothing(tmp_path: Path) -> None:
    """The window between fork and registration: a harness killed right after starting the
    process never lets the agent run (the gate reads EOF and exits)."""
    import signal
    import subprocess
    import sys

    for n in range(5):
        flag = tmp_path / "started"
        marker = f"{os.getpid() % 1000 + 3000}.{n}{time.monotonic_ns() % 10**5:05d}"
        inv = _inv(tmp_path, f"touch {flag}; sleep {marker}")
        harness = subprocess.Popen([sys.executable, "-c", _HARNESS, inv.model_dump_json()])
        harness.send_signal(signal.SIGKILL)  # most likely before, else just after, the gate
        harness.wait()
        time.sleep(0.5)
        assert not flag.exists() or _none_with(marker, within=30)
        flag.unlink(missing_ok=True)


needs_isolation = pytest.mark.skipif(
    not agent_isolation()[1], reason="neither bwrap nor unshare can make a pid namespace here")


@needs_isolation
def test_isolated_agent_cannot_read_the_harness(tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """Secrets in the harness's environment and key file: the agent tries /proc and the
    file and finds neither."""
    from copeca_action._util import scrub

    planted = "PLANTED-harness-secret-0123456789"
    monkeypatch.setenv("COPECA_TEST_PLANTED", planted)  # the harness's own environment
    key = tmp_path / "signing.key"
    key.write_text(f"-----BEGIN PRIVATE KEY-----\n{planted}\n-----END PRIVATE KEY-----\n")
    monkeypatch.setattr(scrub, "_SECRET_FILES", {key.resolve()})
    inv = _inv(tmp_path, f"cat /proc/*/environ; cat {key}; ls /proc; echo done",
               isolate=True)
    result = run_agent(inv, timeout_s=30)
    out = inv.stdout_path.read_text(errors="replace")
    assert result.exit_code == 0 and "done" in out
    assert "pidns" in result.isolation
    assert planted not in out and "BEGIN PRIVATE KEY" not in out
    host_pids = {p.name for p in Path("/proc").iterdir() if p.name.isdigit()}
    seen = {w for w in out.split() if w.isdigit()}
    assert str(os.getpid()) not in seen or len(seen) < 10  # not the host's process list
    assert len(seen & host_pids) < len(host_pids)


@needs_isolation
def test_isolated_timeout_kills_the_namespace(tmp_path: Path) -> None:
    marker = f"{os.getpid() % 1000 + 2000}.{time.monotonic_ns() % 10**6:06d}"
    inv = _inv(tmp_path, f"setsid sleep {marker} & sleep {marker} & wait", isolate=True)
    result = run_agent(inv, timeout_s=1.0)
    assert result.timed_out
    assert _none_with(marker)  # even the one that left the process group (setsid)


_AS_PID_1 = """
import os, sys, time
from pathlib import Path
from copeca_action.agent import AgentInvocation, run_agent
assert os.getpid() == 1
inv = AgentInvocation.model_validate_json(sys.argv[1])
for timeout in (30, 0.5):  # a normal end, then a timeout
    run_agent(inv, timeout)
time.sleep(0.3)
zombies = [p.name for p in Path("/proc").iterdir() if p.name.isdigit()
           and (p / "stat").read_text().split(") ")[1].startswith("Z")]
print("zombies", len(zombies))
"""


@needs_isolation
def test_as_pid_1_the_harness_reaps_the_namespace_inits(tmp_path: Path) -> None:
    """In the action's container the harness is PID 1: bwrap's orphaned namespace init must
    not stay a zombie there, run after run."""
    import subprocess
    import sys

    if not agent_isolation()[0] or agent_isolation()[0][0] != "bwrap":
        pytest.skip("only bwrap leaves its namespace init to PID 1")
    inv = _inv(tmp_path, "sleep 1", isolate=True)
    proc = subprocess.run(["unshare", "--pid", "--fork", "--mount-proc", sys.executable, "-c",
                           _AS_PID_1, inv.model_dump_json()], capture_output=True, text=True,
                          timeout=120, check=False)
    if proc.returncode != 0 and "unshare" in proc.stderr:
        pytest.skip(f"cannot make a pid namespace here: {proc.stderr.strip()[:200]}")
    assert "zombies 0" in proc.stdout, proc.stdout + proc.stderr


@needs_isolation
def test_isolated_agent_finds_the_harness_home_blank(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The agent has a HOME of its own, but the harness user's is on the same disk: under
    bubblewrap it is blank, whatever credential it keeps (a listed .netrc or .ssh, an
    unlisted Maven or rclone password). A program on PATH installed there still runs, and
    the credentials beside it read empty."""
    if agent_isolation()[0][0] != "bwrap":
        pytest.skip("only bubblewrap can hide files")
    planted = "PLANTED-home-credential-0123456789"
    home = tmp_path / "harness-home"
    for rel in (".ssh/id_ed25519", ".config/gh/hosts.yml", ".netrc", ".m2/settings.xml",
                ".config/rclone/rclone.conf", "notes.txt", ".cargo/credentials.toml"):
        (home / rel).parent.mkdir(parents=True, exist_ok=True)
        (home / rel).write_text(f"{planted}\n")
    (home / ".cargo" / "bin").mkdir()
    fake_cli(home / ".cargo" / "bin", "cargo-tool", "echo cargo-tool-ran")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("PATH", f"{home / '.cargo' / 'bin'}:{os.environ['PATH']}")
    (tmp_path / "bin").mkdir()
    inv = _inv(tmp_path / "bin", f"cat {home}/.netrc {home}/.ssh/id_ed25519 "
                                 f"{home}/.config/gh/hosts.yml {home}/.m2/settings.xml "
                                 f"{home}/.config/rclone/rclone.conf {home}/notes.txt "
                                 f"{home}/.cargo/credentials.toml; ls -A {home} {home}/.ssh; "
                                 "cargo-tool; echo done", isolate=True)
    inv.env["PATH"] = os.environ["PATH"]
    result = run_agent(inv, timeout_s=30)
    out = inv.stdout_path.read_text(errors="replace")
    assert result.exit_code is not None and "done" in out
    assert planted not in out
    for name in ("id_ed25519", ".m2", "notes.txt", ".netrc"):
        assert name not in out, name
    assert "cargo-tool-ran" in out  # PATH's install, shown again
    assert (home / ".m2" / "settings.xml").read_text() == f"{planted}\n"  # host untouched


@needs_isolation
def test_isolated_agent_sees_only_its_own_run_in_the_output_folder(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The output folder holds every other run (transcripts, records), results.jsonl and the
    model request log: the agent sees it blank but for its own run folder and worktree,
    which it can write."""
    if agent_isolation()[0][0] != "bwrap":
        pytest.skip("only bubblewrap can hide files")
    from copeca_action._util import scrub

    out = tmp_path / "out"
    other = out / "runs" / "other-run"
    other.mkdir(parents=True)
    (other / "stdout.jsonl").write_text("OTHER-RUN-TRANSCRIPT\n")
    (out / "results.jsonl").write_text('{"run_id": "OTHER-RUN-RECORD"}\n')
    (out / "model-requests.jsonl").write_text("OTHER-RUN-PROMPT\n")
    worktree = out / ".worktrees" / "wt-1"
    worktree.mkdir(parents=True)
    (worktree / "code.py").write_text("print('mine')\n")
    monkeypatch.setattr(scrub, "_PRIVATE_DIRS", {out.resolve()})
    exe = fake_cli(tmp_path, "agent", (
        f"ls -A {out} {out}/runs; cat {out}/results.jsonl {out}/model-requests.jsonl "
        f"{other}/stdout.jsonl; cat code.py; echo mine > $HOME/written; "
        f"echo edit >> code.py; echo done"))
    run = out / "runs" / "this-run"
    inv = AgentInvocation(runner="fake", model="m", argv=[str(exe)], cwd=worktree,
                          env={"PATH": os.environ["PATH"], "HOME": str(run / "home")},
                          config_dir=run / "config", home_dir=run / "home",
                          tmp_dir=run / "tmp", stdout_path=run / "stdout.jsonl",
                          stderr_path=run / "stderr.txt", binary=exe)
    (run / "home").mkdir(parents=True)
    result = run_agent(inv, timeout_s=30)
    seen = inv.stdout_path.read_text(errors="replace")
    assert result.exit_code is not None and "done" in seen, seen
    assert "private-hidden" in result.isolation
    for leak in ("OTHER-RUN", "other-run", "results.jsonl", "model-requests.jsonl"):
        assert leak not in seen, leak
    assert "this-run" in seen and "print('mine')" in seen
    assert (run / "home" / "written").read_text() == "mine\n"  # its own folders: writable
    assert (worktree / "code.py").read_text().endswith("edit\n")
    assert (out / "results.jsonl").exists()  # the host's folder is untouched
