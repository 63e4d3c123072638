"""Watched hooks: the wrapper keeps a hook's input, output and exit status, and writes down
a failing status the CLI would swallow (run by a real shell, as the CLI runs hook commands)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from copeca_action.agent._hooks import HOOK_EXITS, MAX_ENTRIES, hook_exits, watched_hooks
from copeca_action.agent._probe import hook_commands


def _overlay(command: str, event: str = "PreToolUse") -> dict[str, object]:
    return {"hooks": {event: [{"matcher": "Bash", "hooks": [{"type": "command",
                                                             "command": command}]}]},
            "permissions": {"allow": ["Bash"]}}


def _run(command: str, log: Path, event: str = "PreToolUse",
         stdin: str = '{"tool_name": "Bash"}') -> subprocess.CompletedProcess[str]:
    watched = watched_hooks(_overlay(command, event), log)
    [wrapped] = hook_commands(watched)
    return subprocess.run(wrapped, shell=True, input=stdin, capture_output=True, text=True,
                          check=False, timeout=30)


@pytest.mark.parametrize("status", [1, 3, 127])
def test_a_failing_hook_is_written_down_and_keeps_its_status(tmp_path: Path,
                                                              status: int) -> None:
    log = tmp_path / HOOK_EXITS
    command = ("cat >/dev/null; echo 'index missing' >&2; exit 1" if status == 1
               else f"exit {status}" if status == 3 else "/nonexistent/hook.sh")
    proc = _run(command, log)
    assert proc.returncode == status
    assert log.read_text() == f"PreToolUse {status}\n"
    [entry] = hook_exits(log)
    assert entry.startswith(f"PreToolUse hook exited with status {status}")
    if status == 127:
        assert "not found" in entry
    if status == 1:
        assert "index missing" in proc.stderr  # the CLI still sees what the hook said


@pytest.mark.parametrize("status", [0, 2])
def test_success_and_a_deliberate_block_are_not_failures(tmp_path: Path, status: int) -> None:
    log = tmp_path / HOOK_EXITS
    decision = json.dumps({"decision": "block", "reason": "use the index"})
    proc = _run(f"read -r line; echo \"$line\" >&2; echo '{decision}'; exit {status}", log)
    assert proc.returncode == status
    assert json.loads(proc.stdout) == {"decision": "block", "reason": "use the index"}
    assert proc.stderr.strip() == '{"tool_name": "Bash"}'  # stdin reached the hook
    assert not log.exists() and hook_exits(log) == []


def test_the_command_is_run_as_the_cli_would_run_it(tmp_path: Path) -> None:
    """Quotes, variables, a pipe and a path with a space survive the wrapping unchanged."""
    folder = tmp_path / "my tool"
    folder.mkdir()
    script = folder / "hook.sh"
    script.write_text("#!/bin/sh\nprintf '%s|%s' \"$1\" \"$HOOK_WORD\"\n")
    script.chmod(0o755)
    command = f"HOOK_WORD=\"a b\" \"{script}\" \"x'y\" | tr a-z A-Z"
    direct = subprocess.run(command, shell=True, capture_output=True, text=True, check=True)
    proc = _run(command, tmp_path / HOOK_EXITS, event="PostToolUse")
    assert proc.returncode == 0 and proc.stdout == direct.stdout == "X'Y|A B"


def test_the_overlay_is_copied_and_only_commands_change(tmp_path: Path) -> None:
    overlay = _overlay("/opt/hook.sh")
    watched = watched_hooks(overlay, tmp_path / HOOK_EXITS)
    assert hook_commands(overlay) == ["/opt/hook.sh"]  # the mode's own is untouched
    [wrapped] = hook_commands(watched)
    assert wrapped != "/opt/hook.sh" and "/opt/hook.sh" in wrapped
    assert watched["permissions"] == overlay["permissions"]
    assert watched_hooks({"model": "x"}, tmp_path / HOOK_EXITS) == {"model": "x"}


def test_the_log_is_read_warily(tmp_path: Path) -> None:
    """The agent can write in the config folder too: junk is skipped, the read is bounded."""
    log = tmp_path / HOOK_EXITS
    junk = ["", "garbage", "PreToolUse", "PreToolUse x", "Pre Tool 1", "PreToolUse 99999",
            "$(reboot) 1", "\x00\xff 1"]
    log.write_bytes("\n".join([*junk, "Stop 1", ""]).encode("utf-8", "surrogateescape"))
    assert hook_exits(log) == ["Stop hook exited with status 1"]
    log.write_text("PreToolUse 1\n" * (MAX_ENTRIES + 5))
    found = hook_exits(log)
    assert len(found) == MAX_ENTRIES + 1 and found[-1] == "5 more hook failure(s)"
    log.write_text("PreToolUse 1\n" * 1_000_000)  # 13 MB: only the first 64 KiB are read
    assert hook_exits(log)[-1].endswith("more hook failure(s)")
    assert hook_exits(tmp_path / "absent") == []
