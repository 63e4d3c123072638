"""Translate a script's actions into tool calls the receiving CLI can execute.

Claude Code offers dedicated tools (`Read`, `Grep`, `Glob`, `Bash`, `Edit`, `Write`, MCP tools
as `mcp__<server>__<tool>`); Codex offers a shell (`exec_command {cmd}` in current versions,
`shell {command: [...]}` in older ones) and edits files with `apply_patch` run through it.
Gemini CLI and Qwen Code offer `read_file`, `grep_search`, `glob`, `replace`/`edit`,
`write_file`, `run_shell_command`; OpenCode `read`, `grep`, `glob`, `edit`, `write`, `bash`.
We look at the request's `tools` (and their parameter names) and pick what is offered.
"""

from __future__ import annotations

import posixpath
import shlex
from typing import Any

from copeca_action._util.mcp import mcp_key
from copeca_action.scripted._script import Action, Api, Edit, Write


class ActionError(ValueError):
    """The action cannot be expressed with the tools this request offers."""


def _abs(path: str, cwd: str | None) -> str:
    if posixpath.isabs(path) or not cwd:
        return path
    return posixpath.normpath(posixpath.join(cwd, path))


def translate(action: Action, api: Api, tools: list[str], cwd: str | None,
              params: dict[str, list[str]] | None = None) -> tuple[str, dict[str, Any]]:
    """(tool name, input) for one action; `params` gives each offered tool's parameter
    names, for the CLIs whose spelling differs (Gemini CLI, Qwen Code, OpenCode)."""
    if action.call is not None:
        return action.call.name, dict(action.call.input)
    if action.mcp is not None:
        return _mcp_name(action.mcp.server, action.mcp.tool, tools), dict(action.mcp.input)
    if api == "openai":
        return _shell(_command(action), tools)
    if api == "anthropic" and (not tools or {"Read", "Bash"} & set(tools)):
        return _claude(action, tools, cwd)
    return _named(action, params or {t: [] for t in tools}, cwd)


def mcp_spellings(server: str, tool: str) -> list[str]:
    """How CLIs name an MCP server's tool: Claude Code, Codex and Qwen Code
    `mcp__<server>__<tool>`; Gemini CLI `mcp_<server>_<tool>`; OpenCode `<server>_<tool>`."""
    return [f"mcp__{server}__{tool}", f"mcp_{server}_{tool}", f"{server}_{tool}",
            f"{server}__{tool}"]


def _mcp_name(server: str, tool: str, tools: list[str]) -> str:
    wanted = f"mcp__{server}__{tool}"
    for spelling in mcp_spellings(server, tool):
        if spelling in tools:
            return spelling
    for name in tools:  # tolerate other spellings a CLI may use for the same tool
        if name.endswith(f"{server}__{tool}"):
            return name
    key = mcp_key(wanted)  # Codex: `my-tool` → `mcp__my_tool`
    for name in tools:
        if mcp_key(name) == key or mcp_key(name).endswith(mcp_key(f"{server}__{tool}")):
            return name
    return wanted


_NAMED: dict[str, tuple[str, ...]] = {
    "read": ("read_file", "read"),
    "grep": ("grep_search", "search_file_content", "grep"),
    "glob": ("glob",),
    "edit": ("replace", "edit"),
    "write": ("write_file", "write"),
    "bash": ("run_shell_command", "bash"),
}
"""Per action, the tool names of Gemini CLI / Qwen Code and OpenCode, in order of preference."""
_PATH_KEYS = ("file_path", "absolute_path", "filePath", "path")


def _key(declared: list[str], *candidates: str) -> str:
    """The first candidate the tool declares (the first one when it declares none)."""
    return next((c for c in candidates if c in declared), candidates[0])


def _named(action: Action, params: dict[str, list[str]], cwd: str | None) -> tuple[str,
                                                                                dict[str, Any]]:
    kind = action.kind
    tool = next((t for t in _NAMED.get(kind, ()) if t in params), None)
    if tool is None:
        shell = next((t for t in _NAMED["bash"] if t in params), None)
        if shell is None or kind in ("edit", "write"):
            raise ActionError(f"`{kind}` needs one of {', '.join(_NAMED.get(kind, ()))} or a "
                              "shell tool, which this request does not offer")
        tool, kind = shell, "bash"
    p = params[tool]
    args: dict[str, Any]
    if kind == "read" and action.read is not None:
        args = {_key(p, *_PATH_KEYS): _abs(action.read, cwd)}
    elif kind == "grep" and action.grep is not None:
        args = {"pattern": action.grep.pattern,
                _key(p, "dir_path", "path"): _abs(action.grep.path, cwd)}
    elif kind == "glob" and action.glob is not None:
        args = {"pattern": action.glob}
    elif kind == "edit" and action.edit is not None:
        args = {_key(p, *_PATH_KEYS): _abs(action.edit.path, cwd),
                _key(p, "old_string", "oldString"): action.edit.old,
                _key(p, "new_string", "newString"): action.edit.new}
        if "instruction" in p:  # Gemini CLI's replace requires one
            args["instruction"] = f"Replace the given text in {action.edit.path}."
    elif kind == "write" and action.write is not None:
        args = {_key(p, *_PATH_KEYS): _abs(action.write.path, cwd),
                "content": action.write.content}
    else:
        args = {"command": _command(action)}
    return tool, args


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
