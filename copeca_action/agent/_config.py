"""Each CLI family's config files in a run's fresh config dir: Claude Code's settings.json and
MCP file, Codex's config.toml (provider, MCP servers, analytics and plugins off), Gemini CLI's
and Qwen Code's settings.json, OpenCode's opencode.json."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from copeca_action.agent import _toml
from copeca_action.scenario import Runner

CODEX_PROVIDER = "copeca"

RUN_KEY_HEADER = "x-copeca-run"
"""Request header naming the run, sent to a `base_url` endpoint: the scripted server fixes a
run's variant by it (its VARIANT_HEADER)."""
"""The Codex model provider id written when a base URL is given."""
CODEX_RETRIES = 2
"""Codex request and stream retries against a custom endpoint (its default waits minutes)."""


def deep_merge(base: dict[str, Any], overlay: dict[str, Any]) -> dict[str, Any]:
    """Overlay wins; nested mappings merge key by key."""
    merged = dict(base)
    for key, value in overlay.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = deep_merge(merged[key], value)
        else:
            merged[key] = value
    return merged


def write_claude_settings(config_dir: Path, agent_config: dict[str, Any] | None) -> Path | None:
    """`settings.json` in CLAUDE_CONFIG_DIR: the mode's overlay, nothing else."""
    if not agent_config:
        return None
    path = config_dir / "settings.json"
    path.write_text(json.dumps(agent_config, indent=2) + "\n", encoding="utf-8")
    return path


def write_mcp_file(run_dir: Path, mcp_config: dict[str, Any]) -> Path:
    path = run_dir / "mcp.json"
    path.write_text(json.dumps(mcp_config, indent=2) + "\n", encoding="utf-8")
    return path


def codex_config(runner: Runner, *, base_url: str | None, mcp_config: dict[str, Any] | None,
                 agent_config: dict[str, Any] | None,
                 headers: Mapping[str, str] | None = None) -> dict[str, Any]:
    """The config.toml document: a provider for `base_url` (sending `headers` with every
    request), MCP servers, telemetry off."""
    doc: dict[str, Any] = {}
    if base_url:
        url = base_url.rstrip("/")
        if not url.endswith("/v1"):
            url += "/v1"
        doc["model_provider"] = CODEX_PROVIDER
        doc["model_providers"] = {CODEX_PROVIDER: {
            "name": CODEX_PROVIDER, "base_url": url, "wire_api": "responses",
            "env_key": runner.credential_env[0] if runner.credential_env else "OPENAI_API_KEY",
            "request_max_retries": CODEX_RETRIES, "stream_max_retries": CODEX_RETRIES}}
        if headers:
            doc["model_providers"][CODEX_PROVIDER]["http_headers"] = dict(headers)
    doc["analytics"] = {"enabled": False}
    doc["features"] = {"plugins": False}
    if mcp_config:
        doc["mcp_servers"] = {name: _codex_mcp_server(spec) for name, spec in
                              mcp_config.get("mcpServers", {}).items()}
    return deep_merge(doc, agent_config or {})


def _codex_mcp_server(spec: Any) -> dict[str, Any]:
    """Claude-style `{command, args, env}` (or `{url}`) as a Codex `[mcp_servers.X]` table.

    `codex exec` runs unattended, so the server's tools are approved up front (as Claude
    Code's `--allowedTools mcp__<server>` does); a mode may override it.
    """
    spec = spec if isinstance(spec, dict) else {}
    keep = ("command", "args", "env", "url", "cwd", "startup_timeout_sec", "tool_timeout_sec",
            "default_tools_approval_mode")
    table = {k: spec[k] for k in keep if k in spec}
    table.setdefault("default_tools_approval_mode", "approve")
    return table


def write_codex_config(config_dir: Path, doc: dict[str, Any]) -> Path:
    path = config_dir / "config.toml"
    path.write_text(_toml.dumps(doc), encoding="utf-8")
    return path


def _servers(mcp_config: dict[str, Any] | None) -> dict[str, dict[str, Any]]:
    servers = (mcp_config or {}).get("mcpServers", {})
    return {str(k): (v if isinstance(v, dict) else {}) for k, v in servers.items()}


GEMINI_ATTEMPTS = 3
"""Gemini CLI's attempts per model request (`general.maxAttempts`; its default of 10 with
backoff waits minutes on a 429 or 5xx)."""


def gemini_settings(*, max_turns: int, mcp_config: dict[str, Any] | None,
                    agent_config: dict[str, Any] | None) -> dict[str, Any]:
    """Gemini CLI's `settings.json`: API-key auth (the only kind a custom endpoint takes),
    max turns (it has no flag for them), bounded retries, telemetry and update checks off,
    the mode's MCP servers (trusted: no confirmation in headless runs), then the overlay."""
    doc: dict[str, Any] = {
        "security": {"auth": {"selectedType": "gemini-api-key"}},
        "general": {"disableAutoUpdate": True, "disableUpdateNag": True,
                    "maxAttempts": GEMINI_ATTEMPTS},
        "privacy": {"usageStatisticsEnabled": False},
        "telemetry": {"enabled": False},
    }
    if max_turns:
        doc["model"] = {"maxSessionTurns": max_turns}
    if mcp_config:
        doc["mcpServers"] = {name: _gemini_mcp_server(spec)
                             for name, spec in _servers(mcp_config).items()}
    return deep_merge(doc, agent_config or {})


def _gemini_mcp_server(spec: dict[str, Any]) -> dict[str, Any]:
    """Claude-style `{command, args, env}` or `{url}` as a Gemini CLI / Qwen Code server."""
    keep = ("command", "args", "env", "cwd", "url", "httpUrl", "headers", "timeout", "trust")
    table = {k: spec[k] for k in keep if k in spec}
    if spec.get("type") == "http" and "url" in table:
        table["httpUrl"] = table.pop("url")
    table.setdefault("trust", True)
    return table


QWEN_RETRIES = 1
"""Qwen Code's retries of a failed request (`model.generationConfig.maxRetries`)."""
QWEN_RETRY_DELAY_MS = 500
"""Its first and longest wait between retries (its defaults back off for minutes)."""


def qwen_settings(*, agent_config: dict[str, Any] | None,
                  headers: Mapping[str, str] | None = None) -> dict[str, Any]:
    """Qwen Code's `settings.json`: telemetry, usage statistics and update checks off, bounded
    retries, `headers` sent with every request, then the mode's overlay. MCP servers go by
    `--mcp-config`, max turns by a flag."""
    doc: dict[str, Any] = {
        "privacy": {"usageStatisticsEnabled": False},
        "telemetry": {"enabled": False},
        "general": {"disableAutoUpdate": True, "disableUpdateNag": True},
        "model": {"generationConfig": {"maxRetries": QWEN_RETRIES,
                                       "retryInitialDelayMs": QWEN_RETRY_DELAY_MS,
                                       "retryMaxDelayMs": QWEN_RETRY_DELAY_MS}},
    }
    if headers:
        doc["model"]["generationConfig"]["customHeaders"] = dict(headers)
    return deep_merge(doc, agent_config or {})


OPENCODE_PROVIDER = "anthropic"
"""OpenCode speaks to the endpoint with its Anthropic provider (Messages API)."""


def opencode_config(runner: Runner, *, base_url: str | None, max_turns: int,
                    mcp_config: dict[str, Any] | None, agent_config: dict[str, Any] | None,
                    headers: Mapping[str, str] | None = None) -> dict[str, Any]:
    """OpenCode's `opencode.json`: its Anthropic provider pointed at `base_url`, every tool
    allowed (a headless run cannot answer a prompt), no sharing, no auto-update, no undo
    snapshots (a git copy of the worktree per run), the title agent off (it would call a
    second model), max steps, the mode's MCP servers, then the mode's overlay."""
    doc: dict[str, Any] = {
        "$schema": "https://opencode.ai/config.json",
        "autoupdate": False,
        "share": "disabled",
        "snapshot": False,
        "permission": {"edit": "allow", "bash": "allow", "webfetch": "deny",
                       "external_directory": "deny"},
        "agent": {"title": {"disable": True}},
    }
    if base_url:
        url = base_url.rstrip("/")
        if not url.endswith("/v1"):
            url += "/v1"
        key = runner.credential_env[0] if runner.credential_env else "ANTHROPIC_API_KEY"
        options: dict[str, Any] = {"baseURL": url, "apiKey": f"{{env:{key}}}"}
        if headers:
            options["headers"] = dict(headers)
        doc["provider"] = {OPENCODE_PROVIDER: {"options": options}}
    if max_turns:
        doc["agent"]["build"] = {"steps": max_turns}
    if mcp_config:
        doc["mcp"] = {name: _opencode_mcp_server(spec)
                      for name, spec in _servers(mcp_config).items()}
    return deep_merge(doc, agent_config or {})


def _opencode_mcp_server(spec: dict[str, Any]) -> dict[str, Any]:
    """Claude-style `{command, args, env}` as `{type: local, command: [argv], environment}`;
    `{url}` as `{type: remote, url}`."""
    if "url" in spec:
        table: dict[str, Any] = {"type": "remote", "url": spec["url"], "enabled": True}
        if "headers" in spec:
            table["headers"] = spec["headers"]
        return table
    table = {"type": "local", "command": [spec.get("command", ""), *spec.get("args", [])],
             "enabled": True}
    if spec.get("env"):
        table["environment"] = spec["env"]
    return table


def write_json(path: Path, doc: dict[str, Any]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc, indent=2) + "\n", encoding="utf-8")
    return path
