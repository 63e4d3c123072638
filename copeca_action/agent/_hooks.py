"""The mode's hooks, watched: each hook command is run through a small shell that writes
down how it failed, because a hook that exits 1 leaves no trace in the CLI's output.

Claude Code (and Gemini CLI, whose settings take the same `hooks` shape) treat a hook's exit
status 0 as success, 2 as a deliberate block, and anything else as a "non-blocking error":
the CLI goes on without the hook and says nothing in its stream-json. A tool that is a hook
and crashes then reads as "not adopted", the agent's choice. The wrapper keeps the hook's
stdin, stdout, stderr and exit status as they were, and appends `<event> <status>` to a
log in the run's config folder for any other status; `hook_exits` reads it back."""

from __future__ import annotations

import copy
import shlex
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

HOOK_EXITS = "copeca-hook-exits.log"
"""The log's name in the run's config folder (the CLI's own folder: written by the hook
inside the agent's sandbox, read by the harness after the run)."""
_WATCH = ('sh -c "$1"; s=$?; case $s in 0|2) ;; *) printf "%s %s\\n" "$3" "$s" >>"$2";; '
          'esac; exit $s')
"""Runs the hook command as the CLI would (`sh -c`), then logs a failing status."""
MAX_ENTRIES = 100
"""Log lines read (each a failure); the rest are counted in one line."""
_STATUS_NOTES = {126: " (its program is not executable)", 127: " (its program was not found)"}
_MAX_BYTES = 64 * 1024
"""Bytes of the log read: the agent can write there too, so it is bounded."""


def hook_entries(agent_config: Mapping[str, Any] | None
                 ) -> Iterator[tuple[str, dict[str, Any]]]:
    """Each command hook of a settings overlay (event → matchers → hooks) with its event."""
    hooks = (agent_config or {}).get("hooks")
    if not isinstance(hooks, Mapping):
        return
    for event, matchers in hooks.items():
        for matcher in matchers if isinstance(matchers, list) else []:
            inner = matcher.get("hooks") if isinstance(matcher, Mapping) else None
            for hook in inner if isinstance(inner, list) else []:
                if isinstance(hook, dict) and isinstance(hook.get("command"), str):
                    yield str(event), hook


def watched_hooks(agent_config: dict[str, Any], log: Path) -> dict[str, Any]:
    """A copy of the overlay whose hook commands log a failing exit status to `log`."""
    watched = copy.deepcopy(agent_config)
    for event, hook in hook_entries(watched):
        hook["command"] = (f"sh -c {shlex.quote(_WATCH)} copeca-hook "
                           f"{shlex.quote(hook['command'])} {shlex.quote(str(log))} "
                           f"{shlex.quote(event)}")
    return watched


def hook_exits(log: Path) -> list[str]:
    """What the log says failed, one entry per failure: "PreToolUse hook exited with status
    1". Lines that are not `<event> <status>` are skipped (the agent may write there)."""
    try:
        with log.open("rb") as handle:
            data = handle.read(_MAX_BYTES)
    except OSError:
        return []
    out: list[str] = []
    skipped = 0
    for line in data.decode("utf-8", "replace").splitlines():
        event, _, status = line.strip().rpartition(" ")
        if not (event and status.isdigit() and len(status) <= 3 and event.isidentifier()):
            continue
        if len(out) < MAX_ENTRIES:
            out.append(f"{event} hook exited with status {int(status)}"
                       + _STATUS_NOTES.get(int(status), ""))
        else:
            skipped += 1
    if skipped:
        out.append(f"{skipped} more hook failure(s)")
    return out
