"""Run the real agent CLIs against a scripted server, the way ENVIRONMENT.md describes.

Binaries come from runners/node_modules/.bin (pinned by runners/package.json), else PATH.
Tests skip with a reason when a binary is absent.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[3]
MCP_SERVER = Path(__file__).with_name("mcp_echo.py")


def binary(name: str) -> Path | None:
    pinned = ROOT / "runners" / "node_modules" / ".bin" / name
    if pinned.exists():
        return pinned
    found = shutil.which(name)
    return Path(found) if found else None


def need(name: str) -> Path:
    path = binary(name)
    if path is None:
        pytest.skip(f"`{name}` is not installed (make node installs runners/node_modules)")
    return path


@dataclass
class CliRun:
    returncode: int
    events: list[dict[str, Any]]
    stderr: str

    def of_type(self, kind: str) -> list[dict[str, Any]]:
        return [e for e in self.events if e.get("type") == kind]


def _events(stdout: str) -> list[dict[str, Any]]:
    out = []
    for line in stdout.splitlines():
        try:
            out.append(json.loads(line))
        except json.JSONDecodeError:
            continue
    return out


def _base_env(home: Path) -> dict[str, str]:
    return {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(home),
            "LANG": "C.UTF-8"}


def run_claude(url: str, prompt: str, workdir: Path, scratch: Path, *, mcp: bool = False,
               run_key: str | None = None, max_turns: int = 8, timeout: float = 120,
               wrap: list[str] | None = None) -> CliRun:
    exe = need("claude")
    home, config = scratch / "home", scratch / "claude-config"
    home.mkdir(parents=True)
    config.mkdir()
    env = {**_base_env(home), "CLAUDE_CONFIG_DIR": str(config), "ANTHROPIC_BASE_URL": url,
           "ANTHROPIC_API_KEY": "scripted", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
           "DISABLE_TELEMETRY": "1", "DISABLE_AUTOUPDATER": "1", "DISABLE_ERROR_REPORTING": "1",
           "CLAUDE_CODE_MAX_RETRIES": "2"}
    if run_key:
        env["ANTHROPIC_CUSTOM_HEADERS"] = f"x-copeca-run: {run_key}"
    argv = [str(exe), "-p", prompt, "--output-format", "stream-json", "--verbose",
            "--max-turns", str(max_turns),
            "--allowedTools", "Bash Read Grep Glob Edit Write mcp__codesearch"]
    if mcp:
        cfg = scratch / "mcp.json"
        cfg.write_text(json.dumps({"mcpServers": {"codesearch": {
            "command": sys.executable, "args": [str(MCP_SERVER)]}}}))
        argv += ["--mcp-config", str(cfg)]
    proc = subprocess.run([*(wrap or []), *argv], cwd=workdir, env=env,
                          stdin=subprocess.DEVNULL, capture_output=True, text=True,
                          timeout=timeout)
    return CliRun(proc.returncode, _events(proc.stdout), proc.stderr)


def run_codex(url: str, prompt: str, workdir: Path, scratch: Path, *, mcp: bool = False,
              run_key: str | None = None, retries: int = 1, timeout: float = 120,
              wrap: list[str] | None = None) -> CliRun:
    exe = need("codex")
    home, codex_home, tmp = scratch / "home", scratch / "codex-home", scratch / "tmp"
    for d in (home, codex_home, tmp):
        d.mkdir(parents=True)
    headers = f'http_headers = {{ "x-copeca-run" = "{run_key}" }}\n' if run_key else ""
    config = (f'model_provider = "scripted"\nmodel = "gpt-5"\n'
              f'[model_providers.scripted]\nname = "scripted"\nbase_url = "{url}/v1"\n'
              f'wire_api = "responses"\nenv_key = "SCRIPTED_API_KEY"\n{headers}'
              f"request_max_retries = {retries}\nstream_max_retries = {retries}\n"
              "[analytics]\nenabled = false\n[features]\nplugins = false\n")
    if mcp:
        config += (f'[mcp_servers.codesearch]\ncommand = {json.dumps(sys.executable)}\n'
                   f'args = [{json.dumps(str(MCP_SERVER))}]\n'
                   'default_tools_approval_mode = "approve"\n')
    (codex_home / "config.toml").write_text(config)
    env = {**_base_env(home), "CODEX_HOME": str(codex_home), "TMPDIR": str(tmp),
           "SCRIPTED_API_KEY": "scripted"}
    argv = [str(exe), "exec", "--json", "--skip-git-repo-check", "-s", "workspace-write",
            prompt]
    proc = subprocess.run([*(wrap or []), *argv], cwd=workdir, env=env,
                          stdin=subprocess.DEVNULL, capture_output=True, text=True,
                          timeout=timeout)
    return CliRun(proc.returncode, _events(proc.stdout), proc.stderr)
