"""Does a tool start? An MCP server is started once over stdio and must answer `initialize`;
a wrapper must exist and run the command it is given; a hook's program must exist. Used
before any run (pipeline pre-flight), so a tool that cannot start is a named error, never a
plan of runs "without the tool"."""

from __future__ import annotations

import json
import os
import select
import shutil
import subprocess
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from copeca_action.agent._hooks import hook_entries
from copeca_action.scenario import Mode

MCP_START_TIMEOUT_S = 30.0
"""How long an MCP server may take to answer `initialize` (Claude Code waits about as long)."""
_INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
               "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                          "clientInfo": {"name": "copeca-preflight", "version": "1"}}}


def _resolve(value: str, env: Mapping[str, str]) -> str | None:
    if "/" in value:
        path = Path(value)
        return str(path) if path.is_file() and os.access(path, os.X_OK) else None
    return shutil.which(value, path=env.get("PATH"))


def _read_response(proc: subprocess.Popen[bytes], deadline: float) -> dict[str, Any] | None:
    assert proc.stdout is not None
    buf = b""
    fd = proc.stdout.fileno()
    while time.monotonic() < deadline:
        ready, _, _ = select.select([fd], [], [], max(0.0, deadline - time.monotonic()))
        if not ready:
            break
        chunk = os.read(fd, 65536)
        if not chunk:
            return None
        buf += chunk
        while b"\n" in buf:
            line, buf = buf.split(b"\n", 1)
            try:
                msg = json.loads(line)
            except ValueError:
                continue  # stdio servers may log; only JSON-RPC lines count
            if isinstance(msg, dict) and msg.get("id") == 1:
                return msg
    return None


def probe_mcp_server(name: str, spec: Mapping[str, Any], env: Mapping[str, str],
                     cwd: Path, timeout_s: float = MCP_START_TIMEOUT_S,
                     shown: Sequence[Path] = ()) -> str | None:
    """Start one stdio MCP server and send `initialize`: None when it answers, else why not.
    URL servers are not probed (the CLI reaches them over the network). `shown`: what the
    agent would see besides `cwd` (the tool's checkout)."""
    command = spec.get("command")
    if not isinstance(command, str):
        return None
    args = [str(a) for a in spec.get("args") or []]
    full_env = {**env, **{str(k): str(v) for k, v in (spec.get("env") or {}).items()}}
    if _resolve(command, full_env) is None:
        return f"MCP server {name!r}: command {command!r} not found or not executable"
    from copeca_action.agent._process import agent_isolation

    # the tool under test, as an agent runs it
    prefix = agent_isolation(writable=[cwd, *shown])[0]
    try:
        proc = subprocess.Popen([*prefix, command, *args], cwd=cwd, env=full_env,
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, start_new_session=True)
    except OSError as exc:
        return f"MCP server {name!r} could not start: {exc}"
    try:
        assert proc.stdin is not None
        proc.stdin.write(json.dumps(_INITIALIZE).encode() + b"\n")
        proc.stdin.flush()
        reply = _read_response(proc, time.monotonic() + timeout_s)
    except OSError:
        reply = None
    finally:
        proc.kill()
        _, err = proc.communicate()
    if reply is not None and "result" in reply:
        return None
    tail = err.decode(errors="replace").strip()[-400:]
    if reply is not None:
        why = f"answered initialize with an error: {json.dumps(reply.get('error'))[:300]}"
    elif proc.returncode not in (None, -9):
        why = f"exited with {proc.returncode} before answering initialize"
    else:
        why = f"did not answer initialize within {timeout_s:g}s"
    return f"MCP server {name!r} ({command} {' '.join(args)}) {why}" + (
        f"; its stderr: {tail}" if tail else "")


def hook_commands(agent_config: Mapping[str, Any] | None) -> list[str]:
    """The `command` of every hook in a settings overlay (Claude Code's `hooks`: event →
    matchers → hooks)."""
    return [hook["command"] for _, hook in hook_entries(agent_config)]


_SHELL = set("|&;<>()$`\\\"'*?[]{}~=")
_BUILTINS = frozenset({".", ":", "cd", "exec", "eval", "export", "source", "set", "test",
                       "true", "false", "command", "exit"})
"""Characters and shell built-ins that make a hook command more than a program and its
arguments: such a command is not judged."""


def _hook_problems(agent_config: Mapping[str, Any] | None,
                   env: Mapping[str, str]) -> list[str]:
    """Hook commands whose program is not found or not executable (the CLI runs them with a
    shell, which exits 127 or 126, and the agent goes on without the tool: every run would
    read as "not adopted"). Commands with shell syntax are left to the run."""
    out = []
    for command in hook_commands(agent_config):
        words = command.split()
        if not words or _SHELL & set(command) or words[0] in _BUILTINS:
            continue
        if _resolve(words[0], env) is None:
            what = (f"hook command {command!r}" if words[0] == command
                    else f"hook command {command!r}: its program {words[0]!r}")
            out.append(f"{what} not found or not executable (the hook would fail each time "
                       "it runs, and the agent go on without the tool)")
    return out


WRAPPER_PROBE = "copeca-wrapper-probe"
"""What the command a wrapper is given in the preflight prints: seen on its output, the
wrapper ran the command."""


def probe_wrapper(wrapper: Sequence[str], env: Mapping[str, str], cwd: Path,
                  timeout_s: float = MCP_START_TIMEOUT_S,
                  shown: Sequence[Path] = ()) -> str | None:
    """Run the wrapper as a run does (`wrapper + [command…]`, in the agent's view: `cwd` and
    `shown` writable, the rest of the harness's places blank), with a command that only
    prints a word: None when the wrapper ran it and exited 0, else why not. A wrapper that
    fails before it runs the agent fails every run of its arm."""
    from copeca_action.agent._process import agent_isolation

    # its own folder shown (else bwrap starts it in the host's `/`, where it may write)
    prefix = agent_isolation(writable=[cwd, *shown])[0]
    command = [*wrapper, "sh", "-c", f"echo {WRAPPER_PROBE}"]
    try:
        done = subprocess.run([*prefix, *command], cwd=cwd, env=dict(env),
                              stdin=subprocess.DEVNULL, capture_output=True,
                              timeout=timeout_s, check=False, start_new_session=True)
    except subprocess.TimeoutExpired:
        return (f"wrapper {wrapper[0]!r} did not finish within {timeout_s:g}s when given a "
                "command that only prints a word")
    except OSError as exc:
        return f"wrapper {wrapper[0]!r} could not start: {exc}"
    if done.returncode == 0 and WRAPPER_PROBE.encode() in done.stdout:
        return None
    tail = done.stderr.decode(errors="replace").strip()[-400:]
    why = (f"exited with {done.returncode}" if done.returncode
           else "exited 0 without running it")
    return (f"wrapper {' '.join(wrapper)!r} {why} when given a command to run (`sh -c "
            f"'echo {WRAPPER_PROBE}'`): the agent would never start" + (
                f"; its stderr: {tail}" if tail else ""))


def mode_start_problems(mode: Mode, env: Mapping[str, str], cwd: Path,
                        timeout_s: float = MCP_START_TIMEOUT_S,
                        shown: Sequence[Path] = ()) -> list[str]:
    """Why the mode's tool would not start, for each part that would not (empty: it starts).
    `shown`: what the agent would see besides `cwd` (the tool's checkout)."""
    problems: list[str] = []
    run_env = {**env, **mode.env}
    if mode.wrapper and _resolve(mode.wrapper[0], run_env) is None:
        problems.append(f"wrapper {mode.wrapper[0]!r} not found or not executable (the "
                        "agent would exit 127 before any model call)")
    elif mode.wrapper and (why := probe_wrapper(mode.wrapper, run_env, cwd, timeout_s,
                                                 shown)):
        problems.append(why)
    problems += _hook_problems(mode.agent_config, run_env)
    servers = (mode.mcp_config or {}).get("mcpServers") or {}
    for name, spec in servers.items():
        if isinstance(spec, Mapping):
            why = probe_mcp_server(str(name), spec, run_env, cwd, timeout_s, shown)
            if why:
                problems.append(why)
    return problems
