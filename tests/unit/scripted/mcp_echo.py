"""A minimal stdio MCP server with one tool, `search`, for the tool-arm tests.

It answers with the lines of files under the working directory that contain the query.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

TOOL = {"name": "search", "description": "Find lines containing a string in the repository.",
        "inputSchema": {"type": "object", "properties": {"query": {"type": "string"}},
                        "required": ["query"]}}


def _search(query: str) -> str:
    hits = []
    for path in sorted(Path.cwd().rglob("*")):
        if path.is_file() and path.stat().st_size < 100_000:
            for n, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
                if query in line:
                    hits.append(f"{path.relative_to(Path.cwd())}:{n}: {line}")
    return "\n".join(hits) or "no match"


def _answer(msg: dict[str, Any]) -> dict[str, Any] | None:
    method = msg.get("method")
    if "id" not in msg:
        return None
    if method == "initialize":
        version = msg.get("params", {}).get("protocolVersion", "2024-11-05")
        result: dict[str, Any] = {"protocolVersion": version, "capabilities": {"tools": {}},
                                  "serverInfo": {"name": "codesearch", "version": "0"}}
    elif method == "tools/list":
        result = {"tools": [TOOL]}
    elif method == "tools/call":
        query = msg.get("params", {}).get("arguments", {}).get("query", "")
        result = {"content": [{"type": "text", "text": _search(str(query))}]}
    else:
        return {"jsonrpc": "2.0", "id": msg["id"],
                "error": {"code": -32601, "message": f"unknown method {method}"}}
    return {"jsonrpc": "2.0", "id": msg["id"], "result": result}


def main() -> None:
    for line in sys.stdin:
        if line.strip():
            reply = _answer(json.loads(line))
            if reply is not None:
                sys.stdout.write(json.dumps(reply) + "\n")
                sys.stdout.flush()


if __name__ == "__main__":
    main()
