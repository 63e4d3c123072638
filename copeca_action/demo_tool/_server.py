"""A minimal MCP server over stdio (JSON-RPC 2.0, one message per line): `initialize`,
`tools/list`, `tools/call`, `ping`. Enough for Claude Code's and Codex's MCP clients."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any, TextIO

if __package__:
    from copeca_action.demo_tool._search import definition, search
else:  # run as a folder (`python .../demo_tool`): stdlib only, no package import, fast start
    from _search import definition, search  # type: ignore[import-not-found,no-redef]

SERVER_NAME = "codesearch"
PROTOCOL_VERSIONS = ("2025-06-18", "2025-03-26", "2024-11-05")

TOOLS: list[dict[str, Any]] = [
    {"name": "search",
     "description": "Find lines in the repository's files that contain a string (or match a "
                    "regular expression). Returns `path:line: text` for each match.",
     "inputSchema": {"type": "object", "properties": {
         "query": {"type": "string", "description": "text to find (case-sensitive)"},
         "path": {"type": "string", "description": "only below this folder or file"},
         "regex": {"type": "boolean", "description": "treat query as a regular expression"},
         "max_results": {"type": "integer", "minimum": 1, "maximum": 500}},
         "required": ["query"]}},
    {"name": "definition",
     "description": "Where a function, class or type is defined, with the first lines of "
                    "its body.",
     "inputSchema": {"type": "object", "properties": {
         "name": {"type": "string", "description": "the exact identifier"}},
         "required": ["name"]}},
]


class CodeSearchServer:
    def __init__(self, root: Path) -> None:
        self.root = root

    def handle(self, message: dict[str, Any]) -> dict[str, Any] | None:
        """The response to one JSON-RPC message (None for notifications)."""
        method = message.get("method")
        mid = message.get("id")
        if mid is None:
            return None  # notifications (initialized, cancelled) need no answer
        try:
            result = self._dispatch(str(method), message.get("params") or {})
        except _RpcError as exc:
            return {"jsonrpc": "2.0", "id": mid,
                    "error": {"code": exc.code, "message": exc.message}}
        return {"jsonrpc": "2.0", "id": mid, "result": result}

    def _dispatch(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        if method == "initialize":
            asked = params.get("protocolVersion")
            version = asked if asked in PROTOCOL_VERSIONS else PROTOCOL_VERSIONS[0]
            return {"protocolVersion": version,
                    "capabilities": {"tools": {"listChanged": False}},
                    "serverInfo": {"name": SERVER_NAME, "version": "1.0.0"}}
        if method == "ping":
            return {}
        if method == "tools/list":
            return {"tools": TOOLS}
        if method == "tools/call":
            return self._call(str(params.get("name")), params.get("arguments") or {})
        raise _RpcError(-32601, f"method not found: {method}")

    def _call(self, name: str, args: dict[str, Any]) -> dict[str, Any]:
        try:
            if name == "search":
                hits = search(self.root, str(args["query"]), under=str(args.get("path") or ""),
                              regex=bool(args.get("regex")),
                              max_results=int(args.get("max_results") or 50))
                text = "\n".join(hits) or "no matches"
            elif name == "definition":
                text = "\n\n".join(definition(self.root, str(args["name"]))) or "not found"
            else:
                raise _RpcError(-32602, f"unknown tool: {name}")
        except KeyError as exc:
            return _tool_error(f"missing argument {exc.args[0]!r}")
        except (ValueError, OSError) as exc:  # bad regex, unreadable path
            return _tool_error(str(exc))
        return {"content": [{"type": "text", "text": text}], "isError": False}


class _RpcError(Exception):
    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code, self.message = code, message


def _tool_error(text: str) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": text}], "isError": True}


def serve(stdin: TextIO, stdout: TextIO, root: Path) -> None:
    """Read messages until stdin closes; a line that is not JSON gets a parse error."""
    server = CodeSearchServer(root)
    for line in stdin:
        if not line.strip():
            continue
        try:
            message = json.loads(line)
        except json.JSONDecodeError:
            reply: dict[str, Any] | None = {"jsonrpc": "2.0", "id": None, "error": {
                "code": -32700, "message": "parse error"}}
        else:
            reply = server.handle(message) if isinstance(message, dict) else None
        if reply is not None:
            stdout.write(json.dumps(reply) + "\n")
            stdout.flush()


def main() -> None:
    root = Path(os.environ.get("CODESEARCH_ROOT") or os.getcwd())
    serve(sys.stdin, sys.stdout, root)
