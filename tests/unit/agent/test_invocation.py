from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest

from copeca_action.agent import PLACEHOLDER_KEY, prepare_run
from copeca_action.agent._config import RUN_KEY_HEADER
from copeca_action.errors import ConfigError, InfraError
from copeca_action.scenario import Mode, Runner
from copeca_action.scripted import VARIANT_HEADER

from .conftest import HOST_ENV

CODESEARCH = Mode(name="codesearch", mcp_config={"mcpServers": {"codesearch": {
    "command": "python3", "args": ["{tool_dir}/server.py"], "env": {"ROOT": "{tool_dir}"}}}},
    env={"TOOL_HOME": "{tool_dir}/state", "DISABLE_TELEMETRY": "0"})


def _prepare(runner: Runner, tmp_path: Path, **kw: object):  # type: ignore[no-untyped-def]
    args: dict[str, object] = dict(model="m-1", prompt="Where is {model} defined?",
                                   workdir=tmp_path / "wd", run_dir=tmp_path / "run",
                                   mode=None, max_turns=7, run_budget_usd=None,
                                   base_url="http://127.0.0.1:9", tool_dir=None,
                                   host_env=HOST_ENV)
    args.update(kw)
    return prepare_run(runner, **args)  # type: ignore[arg-type]


def test_env_is_an_allow_list(bin_dir: Path, claude: Runner, tmp_path: Path) -> None:
    inv = _prepare(claude, tmp_path)
    assert inv.env["ANTHROPIC_API_KEY"] == "sk-host"
    assert inv.env["LANG"] == "C.UTF-8" and inv.env["PATH"] == HOST_ENV["PATH"]
    for leaked in ("CLAUDE_CODE_USE_BEDROCK", "MCP_TIMEOUT", "GITHUB_TOKEN", "XDG_CONFIG_HOME",
                   "HTTPS_PROXY"):
        assert leaked not in inv.env
    assert inv.env["HOME"] == str(inv.home_dir) != "/root"
    assert inv.env["CLAUDE_CONFIG_DIR"] == str(inv.config_dir)
    assert inv.env["TMPDIR"] == str(inv.tmp_dir)
    assert inv.env["ANTHROPIC_BASE_URL"] == "http://127.0.0.1:9"
    assert inv.env["CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC"] == "1"
    assert not str(inv.tmp_dir).startswith(str(inv.config_dir))


def test_vendor_runs_keep_the_proxy_and_need_the_real_key(bin_dir: Path, claude: Runner,
                                                          tmp_path: Path) -> None:
    inv = _prepare(claude, tmp_path, base_url=None)
    assert inv.env["HTTPS_PROXY"] == "http://proxy:3128"
    assert "ANTHROPIC_BASE_URL" not in inv.env
    no_key = {k: v for k, v in HOST_ENV.items() if k != "ANTHROPIC_API_KEY"}
    assert "ANTHROPIC_API_KEY" not in _prepare(claude, tmp_path, base_url=None,
                                               host_env=no_key).env
    assert _prepare(claude, tmp_path, host_env=no_key).env["ANTHROPIC_API_KEY"] == \
        PLACEHOLDER_KEY


def test_argv_from_the_runner(bin_dir: Path, claude: Runner, tmp_path: Path) -> None:
    inv = _prepare(claude, tmp_path, run_budget_usd=0.5)
    assert inv.argv[0] == str(bin_dir / "claude") and inv.binary == bin_dir / "claude"
    # The prompt's own braces are not template fields.
    assert inv.argv[1:3] == ["-p", "Where is {model} defined?"]
    assert inv.argv[inv.argv.index("--model") + 1] == "m-1"
    assert inv.argv[inv.argv.index("--max-turns") + 1] == "7"
    assert inv.argv[inv.argv.index("--max-budget-usd") + 1] == "0.5000"
    assert "--mcp-config" not in inv.argv
    assert inv.cwd == tmp_path / "wd"
    assert inv.stdout_path == tmp_path / "run" / "stdout.jsonl"


def test_config_dir_and_home_are_fresh(bin_dir: Path, claude: Runner, tmp_path: Path) -> None:
    first = _prepare(claude, tmp_path)
    (first.config_dir / "settings.json").write_text("{}")
    (first.home_dir / ".bashrc").write_text("echo hi")
    second = _prepare(claude, tmp_path)
    assert list(second.config_dir.iterdir()) == [] and list(second.home_dir.iterdir()) == []


def test_claude_mode_mcp_env_and_tool_dir(bin_dir: Path, claude: Runner,
                                          tmp_path: Path) -> None:
    tool = tmp_path / "tool"
    inv = _prepare(claude, tmp_path, mode=CODESEARCH, tool_dir=tool)
    mcp_path = Path(inv.argv[inv.argv.index("--mcp-config") + 1])
    doc = json.loads(mcp_path.read_text())
    assert doc["mcpServers"]["codesearch"]["args"] == [f"{tool}/server.py"]
    assert doc["mcpServers"]["codesearch"]["env"] == {"ROOT": str(tool)}
    assert "--strict-mcp-config" in inv.argv
    allowed = [inv.argv[i + 1] for i, a in enumerate(inv.argv) if a == "--allowedTools"]
    assert allowed == ["Bash Read Grep Glob Edit Write", "mcp__codesearch"]
    assert inv.env["TOOL_HOME"] == f"{tool}/state"
    assert inv.env["DISABLE_TELEMETRY"] == "0"  # the mode's env is merged last


def test_tool_dir_required_when_the_mode_uses_it(bin_dir: Path, claude: Runner,
                                                 tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="tool_dir"):
        _prepare(claude, tmp_path, mode=CODESEARCH)


def test_agent_config_and_wrapper(bin_dir: Path, claude: Runner, tmp_path: Path) -> None:
    mode = Mode(name="hooked", agent_config={"hooks": {"x": "{tool_dir}/h"}},
                wrapper=["{tool_dir}/proxy", "--"])
    inv = _prepare(claude, tmp_path, mode=mode, tool_dir=Path("/t"))
    settings = json.loads((inv.config_dir / "settings.json").read_text())
    assert settings == {"hooks": {"x": "/t/h"}}  # not the hooks shape: left as it is
    assert inv.argv[:3] == ["/t/proxy", "--", str(bin_dir / "claude")]


def test_codex_config_toml(bin_dir: Path, codex: Runner, tmp_path: Path) -> None:
    mode = CODESEARCH.model_copy(update={"agent_config": {"model_reasoning_effort": "low"}})
    inv = _prepare(codex, tmp_path, mode=mode, tool_dir=Path("/t"),
                   base_url="http://127.0.0.1:4242")
    doc = tomllib.loads((inv.config_dir / "config.toml").read_text())
    provider = doc["model_providers"][doc["model_provider"]]
    assert provider["base_url"] == "http://127.0.0.1:4242/v1"
    assert provider["wire_api"] == "responses" and provider["env_key"] == "OPENAI_API_KEY"
    assert doc["analytics"] == {"enabled": False} and doc["features"] == {"plugins": False}
    assert doc["mcp_servers"]["codesearch"] == {"command": "python3", "args": ["/t/server.py"],
                                                "env": {"ROOT": "/t"},
                                                "default_tools_approval_mode": "approve"}
    assert doc["model_reasoning_effort"] == "low"
    assert inv.env["CODEX_HOME"] == str(inv.config_dir)
    assert inv.env["OPENAI_API_KEY"] == PLACEHOLDER_KEY
    assert "--mcp-config" not in inv.argv and "--max-turns" not in inv.argv
    assert inv.argv[-2:] == ["-m", "m-1"]


def test_codex_vendor_run_has_no_provider(bin_dir: Path, codex: Runner,
                                          tmp_path: Path) -> None:
    inv = _prepare(codex, tmp_path, base_url=None)
    doc = tomllib.loads((inv.config_dir / "config.toml").read_text())
    assert "model_provider" not in doc and doc["analytics"] == {"enabled": False}


def test_missing_binary_is_an_infra_error(claude: Runner, tmp_path: Path,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.delenv("COPECA_RUNNERS_BIN", raising=False)
    runner = claude.model_copy(update={"binary": "no-such-agent-cli"})
    with pytest.raises(InfraError, match="make node"):
        _prepare(runner, tmp_path)
    absolute = claude.model_copy(update={"binary": str(tmp_path / "gone")})
    with pytest.raises(InfraError, match="does not exist"):
        _prepare(absolute, tmp_path)


def test_keys_stay_out_of_repr(bin_dir: Path, claude: Runner, tmp_path: Path) -> None:
    inv = _prepare(claude, tmp_path)
    assert inv.env["ANTHROPIC_API_KEY"] == "sk-host" and "sk-host" not in repr(inv)


def test_run_key_reaches_a_local_endpoint_in_both_cli_families(
        bin_dir: Path, claude: Runner, codex: Runner, tmp_path: Path) -> None:
    """The scripted server fixes a run's variant by this header; Codex once went without it,
    so its scripted draws changed with the worktree path from one smoke run to the next."""
    inv = _prepare(codex, tmp_path / "c", run_key="r-123")
    doc = tomllib.loads((inv.config_dir / "config.toml").read_text())
    assert doc["model_providers"][doc["model_provider"]]["http_headers"] == {
        RUN_KEY_HEADER: "r-123"}
    inv = _prepare(claude, tmp_path / "a", run_key="r-123")
    assert inv.env["ANTHROPIC_CUSTOM_HEADERS"] == f"{RUN_KEY_HEADER}: r-123"
    assert RUN_KEY_HEADER == VARIANT_HEADER


def test_run_key_is_not_sent_to_a_vendor(bin_dir: Path, claude: Runner, codex: Runner,
                                         tmp_path: Path) -> None:
    inv = _prepare(codex, tmp_path / "c", base_url=None, run_key="r-123")
    assert "r-123" not in (inv.config_dir / "config.toml").read_text()
    inv = _prepare(claude, tmp_path / "a", base_url=None, run_key="r-123")
    assert "ANTHROPIC_CUSTOM_HEADERS" not in inv.env
