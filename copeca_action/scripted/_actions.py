"""Translate a script's actions into tool calls the receiving CLI can execute.

Claude Code offers dedicated tools (`Read`, `Grep`, `Glob`, `Bash`, `Edit`, `Write`, MCP tools
as `mcp__<server>__<tool>`); Codex offers a shell (`exec_command {cmd}` in current versions,
`shell {command: [...]}` in older ones) and edits files with `apply_patch` run through it.
We look at the request's `tools` and pick what is offered.
"""

from __future__ import annotations

import posixpath
import shlex
from typing import Any

from copeca_action.scripted._script import Action, Api, Edit, Write


class ActionError(ValueError):
    """The action cannot be expressed with the tools this request offers."""


def _abs(path: str, cwd: str | None) -> str:
    if posixpath.isabs(path) or not cwd:
        return path
    return posixpath.normpath(posixpath.join(cwd, path))


def translate(action: Action, api: Api, tools: list[str], cwd: str | None) -> tuple[str,
                                                                                  dict[str, Any]]:
    """(tool name, input) for one action."""
    if action.call is not None:
        return action.call.name, dict(action.call.input)
    if action.mcp is not None:
        return _mcp_name(action.mcp.server, action.mcp.tool, tools), dict(action.mcp.input)
    if api == "anthropic":
        return _claude(action, tools, cwd)
    return _shell(_command(action), tools)


def _mcp_name(server: str, tool: str, tools: list[str]) -> str:
    wanted = f"mcp__{server}__{tool}"
    for name in tools:  # tolerate other spellings a CLI may use for the same tool
        if name == wanted or name.endswith(f"{server}__{tool}"):
            return name
    return wanted


def _claude(action: Action, tools: list[str], cwd: str | None) -> tuple[str, dict[str, Any]]:
    offered = set(tools) if tools else {"Read", "Grep", "Glob", "Bash", "Edit", "Write"}
    if action.read is not None and "Read" in offered:
        return "Read", {"file_path": _abs(action.read, cwd)}
    if action.read_lines is not None and "Read" in offered:
        part = action.read_lines
        return "Read", {"file_path": _abs(part.path, cwd), "offset": part.offset,
                        "limit": part.limit}
    if action.grep is not None and "Grep" in offered:
        return "Grep", {"pattern": action.grep.pattern, "path": _abs(action.grep.path, cwd),
                        "output_mode": "content", "-n": True}
    if action.glob is not None and "Glob" in offered:
        return "Glob", {"pattern": action.glob}
    if action.edit is not None and "Edit" in offered:
        return "Edit", {"file_path": _abs(action.edit.path, cwd),
                        "old_string": action.edit.old, "new_string": action.edit.new}
    if action.write is not None and "Write" in offered:
        return "Write", {"file_path": _abs(action.write.path, cwd),
                         "content": action.write.content}
    if "Bash" in offered:
        return "Bash", {"command": _command(action), "description": f"{action.kind} via shell"}
    raise ActionError(f"`{action.kind}` needs the Read/Grep/Glob/Edit/Write or Bash tool, "
                      f"which this request does not offer")


def _shell(command: str, tools: list[str]) -> tuple[str, dict[str, Any]]:
    if "exec_command" in tools or not tools:
        return "exec_command", {"cmd": command}
    if "shell" in tools:
        return "shell", {"command": ["bash", "-lc", command]}
    if "shell_command" in tools:
        return "shell_command", {"command": command}
    raise ActionError("no shell tool offered (looked for exec_command, shell, shell_command)")


def _command(action: Action) -> str:
    """The shell form of an action, for CLIs that only offer a shell."""
    if action.bash is not None:
        return action.bash
    if action.read is not None:
        return f"cat -- {shlex.quote(action.read)}"
    if action.read_lines is not None:
        part = action.read_lines
        last = part.offset + part.limit - 1
        return f"sed -n '{part.offset},{last}p' -- {shlex.quote(part.path)}"
    if action.grep is not None:
        return f"grep -rn -e {shlex.quote(action.grep.pattern)} -- {shlex.quote(action.grep.path)}"
    if action.glob is not None:
        return f"find . -path {shlex.quote('./' + action.glob)} -print"
    if action.edit is not None:
        return _patch_update(action.edit)
    if action.write is not None:
        return _patch_add(action.write)
    raise ActionError(f"`{action.kind}` has no shell form")


def _lines(text: str, mark: str) -> str:
    return "".join(f"{mark}{line}\n" for line in text.rstrip("\n").split("\n"))


def _heredoc(body: str) -> str:
    tag = "PATCH"
    while tag in body:
        tag += "_"
    return f"apply_patch <<'{tag}'\n{body}{tag}\n"


def _patch_update(edit: Edit) -> str:
    """An `apply_patch` update hunk; Codex intercepts `apply_patch` in shell commands."""
    body = (f"*** Begin Patch\n*** Update File: {edit.path}\n@@\n"
            f"{_lines(edit.old, '-')}{_lines(edit.new, '+')}*** End Patch\n")
    return _heredoc(body)


def _patch_add(write: Write) -> str:
    body = (f"*** Begin Patch\n*** Add File: {write.path}\n{_lines(write.content, '+')}"
            "*** End Patch\n")
    return _heredoc(body)
