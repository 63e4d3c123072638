"""run_agent with real processes: exit codes, /dev/null stdin, group kill on timeout/cancel."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import pytest

from copeca_action.agent import AgentInvocation, run_agent
from copeca_action.errors import InfraError

from .conftest import fake_cli


def _inv(tmp_path: Path, script: str) -> AgentInvocation:
    exe = fake_cli(tmp_path, "agent", script)
    run = tmp_path / "run"
    return AgentInvocation(runner="fake", model="m", argv=[str(exe)], cwd=tmp_path,
                           env={"PATH": os.environ["PATH"], "HOME": str(tmp_path)},
                           config_dir=run / "config", home_dir=run / "home",
                           tmp_dir=run / "tmp", stdout_path=run / "stdout.jsonl",
                           stderr_path=run / "stderr.txt", binary=exe)


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
run_agent(AgentInvocation.model_validate_json(sys.argv[1]), 120)
"""


def test_kill_9_of_the_harness_leaves_no_agent_process(tmp_path: Path) -> None:
    """A real SIGKILL of the harness: the watchdog kills the agent's whole group."""
    import signal
    import subprocess
    import sys

    pids = tmp_path / "pids"
    inv = _inv(tmp_path, f'sleep 120 & echo "$$ $!" > {pids}.tmp; mv {pids}.tmp {pids}; wait')
    harness = subprocess.Popen([sys.executable, "-c", _HARNESS, inv.model_dump_json()])
    deadline = time.monotonic() + 20
    while not pids.exists():
        assert harness.poll() is None and time.monotonic() < deadline, "agent never started"
        time.sleep(0.02)
    agent, child = (int(p) for p in pids.read_text().split())
    assert _alive(agent) and _alive(child)
    harness.send_signal(signal.SIGKILL)
    harness.wait()
    assert _gone(agent, within=30) and _gone(child, within=30)  # the watchdog may still be starting
