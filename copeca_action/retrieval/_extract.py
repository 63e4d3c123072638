"""Viewed context from a transcript's tool calls: one rule per tool (docs/retrieval.md)."""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from copeca_action.retrieval._repo import Repo
from copeca_action.retrieval._shell import change_dir, command_text, run_shell
from copeca_action.retrieval._viewed import (
    Collector,
    Viewed,
    ViewedContext,
    int_or_none,
    prefix_path,
    result_lines,
)
from copeca_action.transcript._model import ToolCall, Transcript

SHELL_TOOLS = frozenset({"Bash", "exec_command", "command_execution", "shell", "local_shell",
                         "container.exec"})


def extract_viewed(calls: Iterable[ToolCall], repo: Repo) -> ViewedContext:
    """The viewed context of a sequence of tool calls (a transcript's, or any list)."""
    items: list[Viewed] = []
    dropped: dict[str, None] = {}
    for call in calls:
        if call.is_error:
            continue
        collector = Collector(repo, call.step)
        _dispatch(call, collector)
        items.extend(collector.items)
        dropped.update(dict.fromkeys(collector.dropped))
    return ViewedContext(items=items, dropped=list(dropped))


def viewed_from_transcript(transcript: Transcript, repo: Repo) -> ViewedContext:
    calls = transcript.tool_calls or [c for turn in transcript.turns for c in turn.tool_calls]
    return extract_viewed(calls, repo)


def _dispatch(call: ToolCall, out: Collector) -> None:
    name, data = call.name, call.input
    if name == "Read":
        _read(data, call.result, out)
    elif name == "Grep":
        _grep_tool(data, call.result, out)
    elif name == "Glob":
        for line in result_lines(call.result):
            out.name(line)
    elif name.startswith("mcp__"):
        _file_line_mentions(call.result, out)
    elif name in SHELL_TOOLS or "command" in data or "cmd" in data:
        command = command_text(data.get("command", data.get("cmd")))
        workdir = data.get("workdir", data.get("cwd"))
        cwd = change_dir(workdir, "", out.repo) if isinstance(workdir, str) and workdir else ""
        if command:
            run_shell(command, call.result, out, cwd=cwd)


# --- Claude Code tools -------------------------------------------------------------------


_READ_LINE = re.compile(r"^\s*(\d+)(?:→|\t)", re.MULTILINE)


def _read(data: dict[str, Any], result: str | None, out: Collector) -> None:
    """The lines the result shows (`cat -n` style, `   12→text`) when it has them: that is
    what the agent saw, whatever the CLI did with offset and limit; else from the input."""
    path = data.get("file_path")
    if not isinstance(path, str):
        return
    shown = [int(n) for n in _READ_LINE.findall(result or "")]
    if shown:
        out.lines(path, min(shown), max(shown))
        return
    offset, limit = int_or_none(data.get("offset")), int_or_none(data.get("limit"))
    if offset is None and limit is None:
        out.whole(path)
        return
    first = max(offset or 1, 1)
    last = None if limit is None else first + max(limit, 1) - 1
    out.lines(path, first, last)


def _grep_tool(data: dict[str, Any], result: str | None, out: Collector) -> None:
    """Grep shows file names only (whatever its output mode): names from the result, or the
    searched path when it is a file."""
    path = data.get("path")
    if isinstance(path, str) and out.repo.relative(path) is not None:
        out.name(path)
        return
    seen: set[str] = set()
    for line in result_lines(result):
        if line.startswith("Found ") or line.startswith("No "):
            continue
        candidate = line if out.repo.relative(line) is not None else prefix_path(line, out.repo)
        if candidate and candidate not in seen:
            seen.add(candidate)
            out.name(candidate)


_MENTION = re.compile(r"(?P<path>[\w./@+-]*\w\.\w+)(?::|#L|\s+lines?\s+)(?P<start>\d+)"
                      r"(?:\s*[-–,:]\s*L?(?P<end>\d+))?")


def _file_line_mentions(result: str | None, out: Collector) -> None:
    """A code-search result naming `path:line` or `path:start-end` shows those lines."""
    for match in _MENTION.finditer(result or ""):
        start = int(match["start"])
        end = int(match["end"]) if match["end"] and int(match["end"]) >= start else start
        if out.repo.relative(match["path"]) is not None:
            out.lines(match["path"], start, end)

