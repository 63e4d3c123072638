"""From a runner YAML, a model, a prompt and a mode to the exact command, environment and
fresh directories of one agent run. Nothing runs here; `run_agent` does that."""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import Field

from copeca_action._util.model import RecordModel
from copeca_action.agent._binary import resolve_binary
from copeca_action.agent._config import (
    RUN_KEY_HEADER,
    codex_config,
    gemini_settings,
    opencode_config,
    qwen_settings,
    write_claude_settings,
    write_codex_config,
    write_json,
    write_mcp_file,
)
from copeca_action.agent._hooks import HOOK_EXITS, watched_hooks
from copeca_action.errors import ConfigError
from copeca_action.scenario import Mode, Runner

BASE_ENV = ("PATH", "LANG", "LANGUAGE", "LC_ALL", "LC_CTYPE", "LC_MESSAGES", "TZ", "TERM")
"""Host variables every run inherits; everything else is dropped (no ambient CLAUDE_*,
MCP_*, hooks, tokens or settings)."""
PROXY_ENV = ("HTTPS_PROXY", "HTTP_PROXY", "NO_PROXY", "https_proxy", "http_proxy", "no_proxy",
             "SSL_CERT_FILE", "SSL_CERT_DIR", "NODE_EXTRA_CA_CERTS")
"""Also inherited for vendor runs (no base_url), so runs work behind a corporate proxy."""
PLACEHOLDER_KEY = "copeca-scripted-no-key"
"""Credential value set when a base_url is given and the host has no key (the scripted
server accepts any key). Real runs behind the key forwarder hold its per-job placeholder
instead (keyproxy.PLACEHOLDER_PREFIX)."""
CLAUDE_PARSER = "stream_json"
CODEX_PARSER = "codex_json"
GEMINI_PARSER = "gemini_json"
QWEN_PARSER = "qwen_json"
OPENCODE_PARSER = "opencode_json"
CONFIG_URL_PARSERS = (CODEX_PARSER, OPENCODE_PARSER)
"""CLI families that take the endpoint in their config file, not in an environment variable."""
BASE_URL_SUFFIX = {QWEN_PARSER: "/v1"}
"""Path appended to `base_url` in `base_url_env` (Qwen Code's OPENAI_BASE_URL ends in /v1)."""
_FIELD = re.compile(r"\{([a-z_]+)\}")


class AgentInvocation(RecordModel):
    """Everything needed to start one agent run, decided before it starts."""

    runner: str
    model: str
    argv: list[str]
    env: dict[str, str] = Field(repr=False)
    """Holds provider keys: left out of repr so logs and tracebacks do not show them."""
    cwd: Path
    config_dir: Path
    """The CLI's fresh config dir (its `config_dir_env`), inside run_dir."""
    home_dir: Path
    tmp_dir: Path
    stdout_path: Path
    stderr_path: Path
    binary: Path
    """The resolved CLI executable (argv[0] unless the mode wraps it)."""
    isolate: bool = True
    """Run in a pid namespace of its own, key files hidden, when the host allows it."""
    shown: list[Path] = Field(default_factory=list)
    """What it needs beyond its worktree, run folder and CLI (the tool's checkout, a proxy's
    CA file): shown to it where it lies in a place isolation blanks."""

    @property
    def run_dir(self) -> Path:
        """The run's folder (its config dir, HOME, TMPDIR, MCP file and output)."""
        return self.stdout_path.parent


def expand(text: str, values: Mapping[str, str]) -> str:
    """Replace `{name}` for known names only, in one pass (a prompt's own braces survive)."""
    return _FIELD.sub(lambda m: values.get(m.group(1), m.group(0)), text)


def expand_tree(value: Any, values: Mapping[str, str]) -> Any:
    """`expand` through nested mappings and lists (mode configs)."""
    if isinstance(value, str):
        return expand(value, values)
    if isinstance(value, list):
        return [expand_tree(v, values) for v in value]
    if isinstance(value, dict):
        return {k: expand_tree(v, values) for k, v in value.items()}
    return value


def _needs_tool_dir(mode: Mode) -> bool:
    return "{tool_dir}" in mode.model_dump_json()


def _fresh_dir(path: Path) -> Path:
    if path.exists():
        shutil.rmtree(path)
    path.mkdir(parents=True)
    return path


def prepare_run(runner: Runner, *, model: str, prompt: str, workdir: Path, run_dir: Path,
                mode: Mode | None, max_turns: int, run_budget_usd: float | None,
                base_url: str | None, tool_dir: Path | None,
                host_env: Mapping[str, str], run_key: str | None = None,
                forwarded: bool = False) -> AgentInvocation:
    """Build one run's command and environment, and write its fresh config dir and HOME.

    With `base_url` and `run_key`, every model request carries the run key in a header (the
    scripted server draws a run's variation from it, so a run is reproducible whatever its
    worktree path or the order runs arrive in). `forwarded`: `base_url` is the harness's key
    forwarder (keyproxy/) standing in for a real endpoint, and `host_env` holds its
    placeholder key; the corporate proxy settings are kept for the agent's other traffic,
    with the loopback forwarder exempted (NO_PROXY).

    Raises:
        InfraError: the runner's binary is not installed.
        ConfigError: the mode uses `{tool_dir}` but no tool dir was given, or sets an MCP
            config for a runner that has no way to receive one.
    """
    binary = resolve_binary(runner)
    if mode is not None and tool_dir is None and _needs_tool_dir(mode):
        raise ConfigError(f"mode {mode.name!r} uses {{tool_dir}} but no tool directory was "
                          "given (pass the checkout of the tool under test)")
    run_dir.mkdir(parents=True, exist_ok=True)
    config_dir = _fresh_dir(run_dir / "config")
    home_dir = _fresh_dir(run_dir / "home")
    tmp_dir = _fresh_dir(run_dir / "tmp")
    values = {"tool_dir": str(tool_dir) if tool_dir else "{tool_dir}", "model": model,
              "max_turns": str(max_turns), "workdir": str(workdir),
              "config_dir": str(config_dir), "prompt": prompt,
              "budget_usd": f"{run_budget_usd:.4f}" if run_budget_usd else ""}
    mcp_config = expand_tree(mode.mcp_config, values) if mode and mode.mcp_config else None
    agent_config = expand_tree(mode.agent_config, values) if mode and mode.agent_config \
        else None
    if agent_config is not None:  # a hook that exits 1 leaves no trace in the CLI's output
        agent_config = watched_hooks(agent_config, config_dir / HOOK_EXITS)
    headers = {RUN_KEY_HEADER: run_key} if base_url and run_key else {}
    extra = _write_configs(runner, run_dir, config_dir, base_url=base_url, headers=headers,
                           mcp_config=mcp_config, agent_config=agent_config,
                           max_turns=max_turns)
    values.update(extra)
    argv = _argv(runner, binary, values, max_turns=max_turns, budget=run_budget_usd,
                 mcp=mcp_config is not None)
    if mode is not None and mode.wrapper:
        argv = [*(expand(a, values) for a in mode.wrapper), *argv]
    env = _env(runner, host_env, base_url=base_url, config_dir=config_dir, home_dir=home_dir,
               tmp_dir=tmp_dir, forwarded=forwarded)
    if headers and runner.parser == CLAUDE_PARSER:
        env["ANTHROPIC_CUSTOM_HEADERS"] = "\n".join(f"{k}: {v}" for k, v in headers.items())
    elif headers and runner.parser == GEMINI_PARSER:
        env["GEMINI_CLI_CUSTOM_HEADERS"] = ",".join(f"{k}: {v}" for k, v in headers.items())
    if mode is not None:
        env.update({k: expand(v, values) for k, v in mode.env.items()})
    return AgentInvocation(runner=runner.name, model=model, argv=argv, env=env, cwd=workdir,
                           config_dir=config_dir, home_dir=home_dir, tmp_dir=tmp_dir,
                           stdout_path=run_dir / "stdout.jsonl",
                           stderr_path=run_dir / "stderr.txt", binary=binary,
                           shown=shown_paths(env, tool_dir))


CA_ENV = ("SSL_CERT_FILE", "SSL_CERT_DIR", "NODE_EXTRA_CA_CERTS")
"""Variables naming a proxy's CA certificates (see `PROXY_ENV`)."""


def shown_paths(env: Mapping[str, str], tool_dir: Path | None) -> list[Path]:
    """Files and folders outside the run an agent needs: the tool's checkout and the CA
    certificates its environment names."""
    found = [tool_dir] if tool_dir is not None else []
    found += [Path(env[k]) for k in CA_ENV if os.path.isabs(env.get(k, ""))]
    return [p for p in found if p.exists()]


def _write_configs(runner: Runner, run_dir: Path, config_dir: Path, *, base_url: str | None,
                   headers: Mapping[str, str], mcp_config: dict[str, Any] | None,
                   agent_config: dict[str, Any] | None, max_turns: int = 0) -> dict[str, str]:
    """Write the CLI family's files; return the argv fields they define (`{mcp_config}`)."""
    fields: dict[str, str] = {}
    if runner.parser == GEMINI_PARSER:  # $GEMINI_CLI_HOME/.gemini/settings.json
        write_json(config_dir / ".gemini" / "settings.json",
                   gemini_settings(max_turns=max_turns, mcp_config=mcp_config,
                                   agent_config=agent_config))
        return fields
    if runner.parser == OPENCODE_PARSER:  # $OPENCODE_CONFIG_DIR/opencode.json
        write_json(config_dir / "opencode.json",
                   opencode_config(runner, base_url=base_url, max_turns=max_turns,
                                   mcp_config=mcp_config, agent_config=agent_config,
                                   headers=headers))
        return fields
    if runner.parser == QWEN_PARSER:  # $QWEN_HOME/settings.json; MCP by --mcp-config
        write_json(config_dir / "settings.json",
                   qwen_settings(agent_config=agent_config, headers=headers))
    elif runner.parser == CODEX_PARSER:
        doc = codex_config(runner, base_url=base_url, headers=headers,
                           mcp_config=None if runner.mcp_args else mcp_config,
                           agent_config=agent_config)
        write_codex_config(config_dir, doc)
    else:
        write_claude_settings(config_dir, agent_config)
    if mcp_config is not None and (runner.mcp_args or runner.parser != CODEX_PARSER):
        if not runner.mcp_args:
            raise ConfigError(f"runner {runner.name!r} has no `mcp_args`, so a mode's "
                              "mcp_config cannot reach it", f"runners/{runner.name}.yaml")
        fields["mcp_config"] = str(write_mcp_file(run_dir, mcp_config))
        servers = mcp_config.get("mcpServers", {})
        fields["mcp_tools"] = " ".join(f"mcp__{name}" for name in servers)
    return fields


def _argv(runner: Runner, binary: Path, values: Mapping[str, str], *, max_turns: int,
          budget: float | None, mcp: bool) -> list[str]:
    template = [*runner.argv, *runner.model_args]
    if max_turns:
        template += runner.max_turns_args
    if budget:
        template += runner.budget_args
    if mcp:
        template += runner.mcp_args
    return [str(binary), *(expand(a, values) for a in template)]


LOOPBACK = ("127.0.0.1", "localhost")
"""Hosts a forwarded agent must reach without the corporate proxy (its key forwarder)."""


def _env(runner: Runner, host_env: Mapping[str, str], *, base_url: str | None,
         config_dir: Path, home_dir: Path, tmp_dir: Path,
         forwarded: bool = False) -> dict[str, str]:
    inherit = BASE_ENV + (() if base_url and not forwarded else PROXY_ENV)
    env = {k: host_env[k] for k in inherit if k in host_env}
    if forwarded and any(k in env for k in ("HTTPS_PROXY", "HTTP_PROXY", "https_proxy",
                                             "http_proxy")):
        for name in ("NO_PROXY", "no_proxy"):
            have = [h for h in env.get(name, "").split(",") if h.strip()]
            env[name] = ",".join([*have, *(h for h in LOOPBACK if h not in have)])
    env.setdefault("PATH", "/usr/local/bin:/usr/bin:/bin")
    for key in runner.credential_env:
        if host_env.get(key, "").strip():  # an empty variable is no key ("Not logged in")
            env[key] = host_env[key]
        elif base_url:
            env[key] = PLACEHOLDER_KEY
    env.update(HOME=str(home_dir), TMPDIR=str(tmp_dir))
    env[runner.config_dir_env] = str(config_dir)
    env.update(runner.isolation_env)
    if base_url:
        if runner.base_url_env:
            suffix = BASE_URL_SUFFIX.get(runner.parser, "")
            url = base_url.rstrip("/")
            env[runner.base_url_env] = url if not suffix or url.endswith(suffix) \
                else url + suffix
        elif runner.parser not in CONFIG_URL_PARSERS:
            raise ConfigError(f"runner {runner.name!r} has no `base_url_env`: it cannot be "
                             "pointed at another endpoint", f"runners/{runner.name}.yaml")
    return env
