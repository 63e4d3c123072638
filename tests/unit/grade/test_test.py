from __future__ import annotations

import sys
import time
from pathlib import Path

from copeca_action import scenario as sc
from copeca_action.grade import OUTPUT_CAP, cap, grade_test

ENV = {"PATH": "/usr/bin:/bin"}


def spec(code: str, timeout: float = 30) -> sc.TestGrading:
    return sc.TestGrading(command=["{python}", "-c", code], timeout_s=timeout)


def test_passing_command_in_the_worktree(tmp_path: Path) -> None:
    (tmp_path / "marker.txt").write_text("ok")
    (tmp_path / "test_marker.py").write_text(
        "def test_marker():\n    assert open('marker.txt').read() == 'ok'\n")
    task = sc.TestGrading(command=["{python}", "-m", "pytest", "-q", "-p", "no:cacheprovider",
                                   "test_marker.py"])
    result = grade_test(tmp_path, task, ENV, {"python": sys.executable})
    assert result.correct and result.detail["exit_code"] == 0
    assert result.detail["argv"][0] == sys.executable
    assert result.detail["tests_passed"] == 1 and result.detail["framework"] == "pytest"


def test_exit_zero_without_a_test_report_is_wrong(tmp_path: Path) -> None:
    result = grade_test(tmp_path, spec("print('all good')"), ENV, {"python": sys.executable})
    assert result.detail["exit_code"] == 0 and not result.correct
    assert "no test runner summary" in result.detail["reason"]


def test_failing_command_keeps_its_output(tmp_path: Path) -> None:
    result = grade_test(tmp_path, spec("import sys; print('boom'); sys.exit(3)"), ENV,
                        {"python": sys.executable})
    assert not result.correct and result.detail["exit_code"] == 3
    assert "boom" in result.detail["output"]


def test_timeout_kills_the_whole_group(tmp_path: Path) -> None:
    pidfile = tmp_path / "child.pid"
    code = ("import subprocess, sys, time; "
            "p = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)']); "
            f"open({str(pidfile)!r}, 'w').write(str(p.pid)); print('started', flush=True); "
            "time.sleep(60)")
    result = grade_test(tmp_path, spec(code, timeout=1.5), ENV, {"python": sys.executable})
    assert not result.correct and result.detail["timed_out"]
    assert "started" in result.detail["output"]
    child = int(pidfile.read_text())
    assert _gone(child)


def _gone(pid: int, wait_s: float = 5.0) -> bool:
    """SIGKILL is delivered asynchronously: poll until the process is dead or a zombie."""
    deadline = time.monotonic() + wait_s
    while time.monotonic() < deadline:
        if _state(pid) == "Z":
            return True
        time.sleep(0.02)
    return False


def _state(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/stat").read_text().split()[2]
    except OSError:
        return "Z"


def test_missing_binary_is_incorrect_not_a_crash(tmp_path: Path) -> None:
    result = grade_test(tmp_path, sc.TestGrading(command=["/no/such/binary"]), ENV)
    assert not result.correct and "cannot start" in result.detail["error"]


def test_output_is_capped_head_and_tail() -> None:
    text = "A" * OUTPUT_CAP + "MIDDLE" + "Z" * OUTPUT_CAP
    capped = cap(text)
    assert len(capped) < OUTPUT_CAP + 100
    assert capped.startswith("A") and capped.endswith("Z") and "elided" in capped
