"""Gemini CLI, Qwen Code and OpenCode launch files: each CLI's own settings and MCP format,
written from a mode, the endpoint, retries and turn limits, and nothing from the host."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from copeca_action.agent import prepare_run
from copeca_action.scenario import Mode, Runner, load_runner

from .conftest import HOST_ENV, ROOT, fake_cli

MODE = Mode(name="codesearch", mcp_config={"mcpServers": {"codesearch": {
    "command": sys.executable, "args": ["{tool_dir}/server.py"], "env": {"K": "v"}}}},
    agent_config={"ui": {"theme": "x"}})


@pytest.fixture
def fake_bins(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    where = tmp_path / "bin"
    where.mkdir()
    for name in ("gemini", "qwen", "opencode"):
        fake_cli(where, name)
    monkeypatch.setenv("COPECA_RUNNERS_BIN", str(where))
    return where


def runner(name: str) -> Runner:
    return load_runner(ROOT / "runners" / f"{name}.yaml")


def prepare(name: str, tmp: Path, mode: Mode | None = MODE, max_turns: int = 7,
            base_url: str | None = "http://127.0.0.1:4321") -> object:
    wd = tmp / "wd"
    wd.mkdir(exist_ok=True)
    return prepare_run(runner(name), model="m-1", prompt="P", workdir=wd, run_dir=tmp / "run",
                       mode=mode, max_turns=max_turns, run_budget_usd=None, base_url=base_url,
                       tool_dir=tmp / "tool", host_env={**HOST_ENV, "GEMINI_API_KEY": "g-host",
                                                        "OPENAI_BASE_URL": "http://evil"},
                       run_key="run-9")


def test_gemini_settings_and_env(fake_bins: Path, tmp_path: Path) -> None:
    inv = prepare("gemini", tmp_path)
    settings = json.loads((inv.config_dir / ".gemini" / "settings.json").read_text())  # type: ignore[attr-defined]
    assert settings["security"]["auth"]["selectedType"] == "gemini-api-key"
    assert settings["model"]["maxSessionTurns"] == 7
    assert settings["general"]["maxAttempts"] == 3
    assert settings["telemetry"]["enabled"] is False
    assert settings["mcpServers"] == {"codesearch": {
        "command": sys.executable, "args": [f"{tmp_path}/tool/server.py"], "env": {"K": "v"},
        "trust": True}}
    assert settings["ui"] == {"theme": "x"}  # the mode's overlay
    env = inv.env  # type: ignore[attr-defined]
    assert env["GOOGLE_GEMINI_BASE_URL"] == "http://127.0.0.1:4321"
    assert env["GEMINI_CLI_HOME"] == str(inv.config_dir)  # type: ignore[attr-defined]
    assert env["GEMINI_API_KEY"] == "g-host" and env["GEMINI_CLI_TRUST_WORKSPACE"] == "true"
    assert env["GEMINI_CLI_CUSTOM_HEADERS"] == "x-copeca-run: run-9"  # the run key
    assert "OPENAI_BASE_URL" not in env and "ANTHROPIC_API_KEY" not in env
    argv = inv.argv  # type: ignore[attr-defined]
    assert argv[1:] == ["-p", "P", "--output-format", "stream-json", "--approval-mode", "yolo",
                        "-m", "m-1"]


def test_qwen_mcp_file_flags_and_endpoint(fake_bins: Path, tmp_path: Path) -> None:
    inv = prepare("qwen", tmp_path)
    argv = inv.argv  # type: ignore[attr-defined]
    assert argv[argv.index("--max-session-turns") + 1] == "7"
    mcp = Path(argv[argv.index("--mcp-config") + 1])
    assert json.loads(mcp.read_text())["mcpServers"]["codesearch"]["args"] == [
        f"{tmp_path}/tool/server.py"]
    settings = json.loads((inv.config_dir / "settings.json").read_text())  # type: ignore[attr-defined]
    assert settings["model"]["generationConfig"]["maxRetries"] == 1
    assert settings["model"]["generationConfig"]["customHeaders"] == {"x-copeca-run": "run-9"}
    assert settings["ui"] == {"theme": "x"}
    env = inv.env  # type: ignore[attr-defined]
    assert env["OPENAI_BASE_URL"] == "http://127.0.0.1:4321/v1"
    assert env["QWEN_HOME"] == str(inv.config_dir)  # type: ignore[attr-defined]
    assert env["OPENAI_API_KEY"] != "" and "GEMINI_API_KEY" not in env


def test_qwen_without_turn_limit_or_mode(fake_bins: Path, tmp_path: Path) -> None:
    inv = prepare("qwen", tmp_path, mode=None, max_turns=0)
    assert "--max-session-turns" not in inv.argv and "--mcp-config" not in inv.argv  # type: ignore[attr-defined]


def test_opencode_config(fake_bins: Path, tmp_path: Path) -> None:
    inv = prepare("opencode", tmp_path)
    doc = json.loads((inv.config_dir / "opencode.json").read_text())  # type: ignore[attr-defined]
    options = doc["provider"]["anthropic"]["options"]
    assert options == {"baseURL": "http://127.0.0.1:4321/v1", "apiKey": "{env:ANTHROPIC_API_KEY}",
                       "headers": {"x-copeca-run": "run-9"}}
    assert doc["agent"]["title"] == {"disable": True}
    assert doc["agent"]["build"] == {"steps": 7}
    assert doc["mcp"] == {"codesearch": {"type": "local", "enabled": True,
                                         "command": [sys.executable, f"{tmp_path}/tool/server.py"],
                                         "environment": {"K": "v"}}}
    assert doc["permission"]["bash"] == "allow" and doc["share"] == "disabled"
    env = inv.env  # type: ignore[attr-defined]
    assert env["OPENCODE_CONFIG_DIR"] == str(inv.config_dir)  # type: ignore[attr-defined]
    assert env["npm_config_offline"] == "true"  # no plugin install from the registry
    assert env["ANTHROPIC_API_KEY"] == "sk-host"
    assert "XDG_CONFIG_HOME" not in env and "HTTPS_PROXY" not in env
    assert inv.argv[1:] == ["run", "--format", "json", "P", "-m", "anthropic/m-1"]  # type: ignore[attr-defined]
    # nothing lands in the working directory (its git diff is graded)
    assert list((tmp_path / "wd").iterdir()) == []


def test_opencode_remote_mcp_server(fake_bins: Path, tmp_path: Path) -> None:
    mode = Mode(name="remote", mcp_config={"mcpServers": {"r": {"url": "http://x/mcp"}}})
    inv = prepare("opencode", tmp_path, mode=mode, base_url=None)
    doc = json.loads((inv.config_dir / "opencode.json").read_text())  # type: ignore[attr-defined]
    assert doc["mcp"] == {"r": {"type": "remote", "url": "http://x/mcp", "enabled": True}}
    assert "provider" not in doc  # vendor run: OpenCode's own Anthropic endpoint
