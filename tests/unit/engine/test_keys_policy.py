"""When the key forwarder stands in front of real runs: by default only behind a --base-url
(a vendor's own API would see its CLI pointed elsewhere, which changes what it does)."""

from __future__ import annotations

from pathlib import Path

import pytest

from copeca_action.engine._keys import forwarder_wanted, start_forwarder
from copeca_action.scenario import load_runner

URL = "http://127.0.0.1:9"


@pytest.mark.parametrize(("setting", "base_url", "wanted"), [
    ("", None, False),  # the vendor's API: the CLI keeps its first-party host
    ("auto", None, False),
    ("", URL, True),  # the user's endpoint: nothing changes for the CLI
    ("on", None, True), ("TRUE", None, True), ("1", URL, True),
    ("off", URL, False), ("no", None, False),
])
def test_the_forwarder_is_wanted(setting: str, base_url: str | None, wanted: bool) -> None:
    env = {"COPECA_KEY_PROXY": setting} if setting else {}
    assert forwarder_wanted(env, base_url) is wanted


def test_a_vendor_job_starts_no_forwarder_unless_asked() -> None:
    runner = load_runner(Path(__file__).parents[3] / "runners" / "claude.yaml")
    env = {"ANTHROPIC_API_KEY": "sk-ant-test-0123456789"}
    assert start_forwarder({"claude": runner}, env, None) is None
    with start_forwarder({"claude": runner}, {**env, "COPECA_KEY_PROXY": "on"}, None) as fwd:
        assert fwd is not None and fwd.routes == ["claude"]
        assert fwd.upstream("claude") == "https://api.anthropic.com"
    with start_forwarder({"claude": runner}, env, URL) as fwd:
        assert fwd is not None and fwd.upstream("claude") == URL


@pytest.mark.parametrize("setting", ["onn", "enabled", "forward"])
def test_an_unknown_setting_refuses_the_job_before_any_run(tmp_path: Path,
                                                            setting: str) -> None:
    """A typo was taken as unset: a job meant to keep the key from its agents (`onn`) handed
    it to them, and only the report's flag said so afterwards."""
    from dataclasses import replace

    from engine_helpers import config, fake, make_corpus, scenario

    from copeca_action.engine import run_plan
    from copeca_action.errors import ConfigError
    from copeca_action.plan import build_plan

    with pytest.raises(ConfigError, match=r"\$COPECA_KEY_PROXY: unknown value .*expected on, "
                                          r"off or auto"):
        forwarder_wanted({"COPECA_KEY_PROXY": setting}, URL)
    corpus = make_corpus(tmp_path, {"q": {"prompt": fake(answer="42")}})
    cfg = config(tmp_path, corpus, scenario())
    cfg = replace(cfg, host_env={**cfg.host_env, "COPECA_KEY_PROXY": setting})
    with pytest.raises(ConfigError, match="COPECA_KEY_PROXY"):
        run_plan(cfg, build_plan(cfg.scenario, cfg.corpus.tasks), resume=False,
                 scenario_text="name: t\n")
    assert not cfg.out.results.exists()


@pytest.mark.parametrize("setting", ["off", "None", "bwrap", "0"])
def test_an_unknown_isolation_setting_refuses_the_job_before_any_run(
        tmp_path: Path, setting: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Any value of COPECA_AGENT_ISOLATION but `none` was taken as `auto` without a word:
    a user who wrote `off` to debug, or `bwrap` to insist on it, was never told."""
    from engine_helpers import config, fake, make_corpus, scenario

    from copeca_action.agent._process import check_isolation
    from copeca_action.engine import run_plan
    from copeca_action.errors import ConfigError
    from copeca_action.plan import build_plan

    for fine in ("", "auto", "none"):
        check_isolation({"COPECA_AGENT_ISOLATION": fine})
    monkeypatch.setenv("COPECA_AGENT_ISOLATION", setting)
    corpus = make_corpus(tmp_path, {"q": {"prompt": fake(answer="42")}})
    cfg = config(tmp_path, corpus, scenario())
    with pytest.raises(ConfigError, match=r"\$COPECA_AGENT_ISOLATION: unknown value .*"
                                          r"expected auto"):
        run_plan(cfg, build_plan(cfg.scenario, cfg.corpus.tasks), resume=False,
                 scenario_text="name: t\n")
    assert not cfg.out.results.exists()
