from __future__ import annotations

from pathlib import Path

import pytest

from copeca_action.agent import cli_version, resolve_binary
from copeca_action.scenario import Runner

from .conftest import ROOT, fake_cli


def test_runners_bin_dir_wins(bin_dir: Path, claude: Runner) -> None:
    assert resolve_binary(claude) == bin_dir / "claude"
    assert cli_version(claude) == "9.8.7"


def test_version_none_when_missing(claude: Runner, tmp_path: Path,
                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.delenv("COPECA_RUNNERS_BIN", raising=False)
    assert cli_version(claude.model_copy(update={"binary": "absent-cli"})) is None


def test_version_of_a_cli_that_prints_none(tmp_path: Path, claude: Runner) -> None:
    exe = fake_cli(tmp_path, "quiet", "echo no version here")
    assert cli_version(claude.model_copy(update={"binary": str(exe)})) is None


@pytest.mark.cli
@pytest.mark.parametrize(("name", "pinned"), [("claude", "@anthropic-ai/claude-code"),
                                              ("codex", "@openai/codex")])
def test_pinned_clis_report_the_pinned_version(name: str, pinned: str,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    import json

    from copeca_action.scenario import load_runner

    monkeypatch.delenv("COPECA_RUNNERS_BIN", raising=False)
    exe = ROOT / "runners" / "node_modules" / ".bin" / name
    if not exe.exists():
        pytest.skip(f"{exe} not installed (make node)")
    runner = load_runner(ROOT / "runners" / f"{name}.yaml")
    wanted = json.loads((ROOT / "runners" / "package.json").read_text())["dependencies"][pinned]
    assert cli_version(runner) == wanted
