from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from copeca_action.scenario import Runner, load_runner

ROOT = Path(__file__).resolve().parents[3]


def fake_cli(where: Path, name: str = "fakecli", body: str = 'echo "fakecli 9.8.7"') -> Path:
    """An executable standing in for an agent CLI (launch logic needs no real one)."""
    path = where / name
    path.write_text(f"#!/bin/sh\n{body}\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return path


@pytest.fixture
def bin_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A COPECA_RUNNERS_BIN holding fake `claude` and `codex` executables."""
    where = tmp_path / "bin"
    where.mkdir()
    fake_cli(where, "claude")
    fake_cli(where, "codex")
    monkeypatch.setenv("COPECA_RUNNERS_BIN", str(where))
    return where


@pytest.fixture
def claude() -> Runner:
    return load_runner(ROOT / "runners" / "claude.yaml")


@pytest.fixture
def codex() -> Runner:
    return load_runner(ROOT / "runners" / "codex.yaml")


HOST_ENV = {
    "PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LANG": "C.UTF-8",
    "ANTHROPIC_API_KEY": "sk-host", "CLAUDE_CODE_USE_BEDROCK": "1", "MCP_TIMEOUT": "1",
    "CLAUDE_CONFIG_DIR": "/root/.claude", "HOME": "/root", "GITHUB_TOKEN": "ghs_secret",
    "HTTPS_PROXY": "http://proxy:3128", "XDG_CONFIG_HOME": "/root/.config",
}
