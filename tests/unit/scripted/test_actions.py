"""Actions become the tool calls each CLI can execute."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from copeca_action.scripted import Action
from copeca_action.scripted._actions import ActionError, translate

CLAUDE = ["Bash", "Read", "Grep", "Glob", "Edit", "Write"]


def act(**kw: object) -> Action:
    return Action.model_validate(kw)


def test_claude_dedicated_tools_with_absolute_paths() -> None:
    assert translate(act(read="src/a.py"), "anthropic", CLAUDE, "/repo") == (
        "Read", {"file_path": "/repo/src/a.py"})
    name, args = translate(act(grep={"pattern": "def f", "path": "src"}), "anthropic", CLAUDE,
                           "/repo")
    assert name == "Grep" and args["pattern"] == "def f" and args["path"] == "/repo/src"
    assert translate(act(edit={"path": "a.py", "old": "x = 1", "new": "x = 2"}), "anthropic",
                     CLAUDE, "/repo") == ("Edit", {"file_path": "/repo/a.py",
                                                   "old_string": "x = 1", "new_string": "x = 2"})
    assert translate(act(mcp={"server": "cs", "tool": "find", "input": {"q": 1}}),
                     "anthropic", CLAUDE, None) == ("mcp__cs__find", {"q": 1})


def test_claude_falls_back_to_bash_then_fails_without_it() -> None:
    name, args = translate(act(read="a b.py"), "anthropic", ["Bash"], "/repo")
    assert name == "Bash" and args["command"] == "cat -- 'a b.py'"
    with pytest.raises(ActionError, match="does not offer"):
        translate(act(read="a.py"), "anthropic", ["Agent"], "/repo")


def test_codex_gets_shell_commands() -> None:
    tools = ["exec_command", "write_stdin"]
    assert translate(act(read="a.py"), "openai", tools, "/r") == (
        "exec_command", {"cmd": "cat -- a.py"})
    assert translate(act(bash="ls -la"), "openai", ["shell"], "/r") == (
        "shell", {"command": ["bash", "-lc", "ls -la"]})
    with pytest.raises(ActionError, match="no shell tool"):
        translate(act(bash="ls"), "openai", ["view_image"], "/r")


def test_raw_call_is_sent_as_is() -> None:
    assert translate(act(call={"name": "update_plan", "input": {"plan": []}}), "openai",
                     [], None) == ("update_plan", {"plan": []})


def test_shell_grep_really_finds_the_line(tmp_path: Path) -> None:
    (tmp_path / "m.py").write_text("a = 1\ndef target(): pass\n")
    _, args = translate(act(grep={"pattern": "def target", "path": "."}), "openai",
                        ["exec_command"], str(tmp_path))
    out = subprocess.run(args["cmd"], shell=True, cwd=tmp_path, capture_output=True,
                         text=True, check=True).stdout
    assert "m.py:2:def target(): pass" in out


def test_codex_edit_is_an_apply_patch_heredoc() -> None:
    _, args = translate(act(edit={"path": "v.py", "old": "A = 1\nB = 2", "new": "A = 3"}),
                        "openai", ["exec_command"], "/r")
    assert args["cmd"] == ("apply_patch <<'PATCH'\n*** Begin Patch\n*** Update File: v.py\n@@\n"
                           "-A = 1\n-B = 2\n+A = 3\n*** End Patch\nPATCH\n")


def test_read_lines_reads_part_of_a_long_file_with_either_cli(tmp_path: Path) -> None:
    """Claude Code's Edit refuses a file of more than 2,000 lines read without offset/limit."""
    part = act(read_lines={"path": "src/core.py", "offset": 2881, "limit": 3})
    assert translate(part, "anthropic", CLAUDE, "/repo") == (
        "Read", {"file_path": "/repo/src/core.py", "offset": 2881, "limit": 3})
    (tmp_path / "f.txt").write_text("".join(f"line {i}\n" for i in range(1, 11)))
    name, args = translate(act(read_lines={"path": "f.txt", "offset": 4, "limit": 2}),
                           "openai", ["exec_command"], None)
    assert name == "exec_command"
    out = subprocess.run(args["cmd"], shell=True, cwd=tmp_path, capture_output=True, text=True)
    assert out.stdout == "line 4\nline 5\n"
    with pytest.raises(ValueError):
        act(read_lines={"path": "f.txt", "offset": 0, "limit": 2})
