"""The demo MCP server, run for real over stdio as the CLIs run it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from copeca_action.demo_tool import definition, search


def _converse(cwd: Path, messages: list[dict[str, Any] | str]) -> list[dict[str, Any]]:
    lines = "".join((m if isinstance(m, str) else json.dumps(m)) + "\n" for m in messages)
    proc = subprocess.run([sys.executable, "-m", "copeca_action.demo_tool"], cwd=cwd,
                          input=lines, capture_output=True, text=True, timeout=60, check=True)
    return [json.loads(line) for line in proc.stdout.splitlines()]


def test_stdio_mcp_session(tmp_path: Path) -> None:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "mod.py").write_text("import os\n\ndef generate_unique_id(route):\n"
                                             "    return route.name\n")
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "junk.py").write_text("def generate_unique_id(): pass\n")
    replies = _converse(tmp_path, [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "t", "version": "0"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
        {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {
            "name": "search", "arguments": {"query": "generate_unique_id"}}},
        {"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {
            "name": "definition", "arguments": {"name": "generate_unique_id"}}},
        {"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {
            "name": "search", "arguments": {}}},
        {"jsonrpc": "2.0", "id": 6, "method": "nope"},
        "not json",
    ])
    by_id = {r["id"]: r for r in replies}
    assert len(replies) == 7  # the notification got no reply
    assert by_id[1]["result"]["protocolVersion"] == "2025-06-18"
    assert by_id[1]["result"]["serverInfo"]["name"] == "codesearch"
    assert [t["name"] for t in by_id[2]["result"]["tools"]] == ["search", "definition"]
    hit = by_id[3]["result"]["content"][0]["text"]
    assert hit == "pkg/mod.py:3: def generate_unique_id(route):"  # .git is skipped
    assert by_id[4]["result"]["content"][0]["text"].startswith("pkg/mod.py:3-4")
    assert by_id[5]["result"]["isError"] is True
    assert by_id[6]["error"]["code"] == -32601
    assert by_id[None]["error"]["code"] == -32700


def test_search_on_the_fastapi_snapshot(tmp_path: Path, corpus_root: Path) -> None:
    import tarfile

    with tarfile.open(corpus_root / "snapshots" / "fastapi-0.115.6.tar.gz") as tf:
        tf.extractall(tmp_path, filter="data")
    root = tmp_path / "fastapi-0.115.6"
    hits = definition(root, "generate_unique_id")
    assert hits and hits[0].startswith("fastapi/utils.py:")
    assert any(h.startswith("fastapi/routing.py:") for h in
               search(root, "generate_unique_id", under="fastapi"))
    assert search(root, r"def is_body_allowed_for_status_code\(", regex=True,
                  max_results=1)[0].startswith("fastapi/utils.py:")


def test_runs_as_a_folder_without_the_package(tmp_path: Path) -> None:
    from copeca_action.engine._context import DEMO_TOOL_DIR

    (tmp_path / "a.py").write_text("needle = 1\n")
    line = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
        "name": "search", "arguments": {"query": "needle"}}}) + "\n"
    proc = subprocess.run([sys.executable, "-X", "importtime", str(DEMO_TOOL_DIR)], cwd=tmp_path,
                          input=line, capture_output=True, text=True, timeout=60, check=True)
    reply = json.loads(proc.stdout)
    assert reply["result"]["content"][0]["text"] == "a.py:1: needle = 1"
    assert "copeca_action" not in proc.stderr  # -X importtime lists every import
