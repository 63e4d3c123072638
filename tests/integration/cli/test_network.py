"""The CLIs talk to the scripted server and nothing else: run inside a network namespace
whose only reachable things are the server and traps that record any other attempt."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from .harness import ROOT, need_cli

pytestmark = pytest.mark.cli
PROBE = Path(__file__).with_name("netns_probe.py")


def _namespaces_work() -> str | None:
    if not shutil.which("unshare") or not shutil.which("ip"):
        return "needs `unshare` (util-linux) and `ip` (iproute2)"
    done = subprocess.run(["unshare", "-rn", "ip", "link", "set", "lo", "up"],
                          capture_output=True, text=True, check=False)
    return None if done.returncode == 0 else f"unshare -rn fails here: {done.stderr.strip()}"


@pytest.mark.parametrize("name", ["claude", "codex", "gemini", "qwen", "opencode"])
def test_cli_reaches_only_the_scripted_server(name: str, tmp_path: Path) -> None:
    need_cli(name)
    why = _namespaces_work()
    if why:
        pytest.skip(why)
    done = subprocess.run(["unshare", "-rn", sys.executable, str(PROBE), name,
                           str(tmp_path)], capture_output=True, text=True, timeout=240,
                          cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)}, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["self_test"] == ["dns example.com", "tcp 203.0.113.7:443"]
    assert report["exit_code"] == 0
    assert report["answer"] == "greeting.txt says: hello from the fixture"
    assert report["tokens_match"] and report["problems"] == []
    assert report["hits"] == [], f"{name} tried to reach: {report['hits']}"
    allowed = {"/", "/v1/messages?beta=true", "/v1/messages", "/v1/responses",
               "/v1/messages/count_tokens?beta=true", "/v1/chat/completions",
               "/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse"}
    assert set(report["paths"]) <= allowed
