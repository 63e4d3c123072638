"""`copeca-action scripted serve|check` as a user runs them."""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

import pytest

from copeca_action.cli import main
from tests.unit.scripted.wire import anthropic_body, post, request


def test_serve_prints_its_url_serves_and_stops_on_interrupt(scripts_dir: Path,
                                                            tmp_path: Path) -> None:
    log = tmp_path / "log.jsonl"
    proc = subprocess.Popen([sys.executable, "-m", "copeca_action.cli", "scripted", "serve",
                             "--scripts", str(scripts_dir), "--seed", "4", "--log", str(log)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert line.startswith("scripted model server: http://127.0.0.1:"), line
        url = line.split()[3]
        assert request(url, "HEAD", "/").status == 200
        reply = post(url, "/v1/messages", anthropic_body("Set VERSION to 2", stream=False))
        assert reply.json()["content"][0]["name"] == "Read"
    finally:
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=10)
    assert proc.returncode == 0
    assert '"script": "example/edit-version"' in log.read_text()


def test_check_lists_scripts_and_reports_located_errors(
        scripts_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["scripted", "check", str(scripts_dir)]) == 0
    assert "example/edit-version: 3 steps, 0 faults" in capsys.readouterr().out
    bad = tmp_path / "bad.yaml"
    bad.write_text("scripts:\n  - id: x\n    match: {}\n    steps: []\n")
    assert main(["scripted", "check", str(bad)]) == 2
    assert f"{bad}:4: scripts[0].steps" in capsys.readouterr().err
