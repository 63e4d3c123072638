"""Pre-flight before any spend: keys per runner, the tool under test starts; and a tool that
fails to start during a run is an infra error with its cause, not a non-adoption."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest
import yaml
from engine_helpers import config, fake, make_corpus, scenario

from copeca_action.agent._probe import mode_start_problems
from copeca_action.agent._process import agent_isolation
from copeca_action.engine import run_plan
from copeca_action.engine._context import DEMO_TOOL_DIR
from copeca_action.errors import ConfigError, InfraError
from copeca_action.pipeline._preflight import check_keys, check_tools
from copeca_action.plan import build_plan
from copeca_action.records import read_records
from copeca_action.scenario import Mode, load_corpus

ENV = {"PATH": "/usr/bin:/bin"}


def _with_key(corpus: Path, root: Path) -> None:
    """The fake runner needs FAKE_KEY, as claude needs ANTHROPIC_API_KEY."""
    path = root / "runners" / "fake.yaml"
    data = yaml.safe_load(path.read_text())
    data["credential_env"] = ["FAKE_KEY"]
    path.write_text(yaml.safe_dump(data))


def test_a_runner_without_its_key_is_refused_before_any_run(tmp_path: Path) -> None:
    corpus = make_corpus(tmp_path, {"q": {"prompt": fake(answer="42")}})
    _with_key(corpus, tmp_path)
    cfg = config(tmp_path, corpus, scenario(repetitions=2))
    plan = build_plan(cfg.scenario, cfg.corpus.tasks)
    with pytest.raises(ConfigError) as err:
        check_keys(cfg, plan)
    text = str(err.value)
    assert "runner 'fake' (2 planned run(s)) needs FAKE_KEY" in text
    assert "nothing was charged" in text and "--dry-run" in text
    cfg.host_env = {**ENV, "FAKE_KEY": "k"}
    check_keys(cfg, plan)  # now it passes
    cfg.host_env = dict(ENV)
    cfg.base_url = "http://127.0.0.1:9"  # an endpoint needs no vendor key
    check_keys(cfg, plan)


def test_an_mcp_server_that_does_not_start_is_refused(tmp_path: Path) -> None:
    broken = {"mcpServers": {"my-tool": {
        "command": sys.executable,
        "args": ["-c", "import sys; print('ModuleNotFoundError: mytool', file=sys.stderr); "
                 "sys.exit(1)"]}}}
    corpus = make_corpus(tmp_path, {"q": {"prompt": fake(answer="42")}},
                         modes={"my-tool": {"mcp_config": broken,
                                            "validity": {"kind": "tool_call_prefix",
                                                         "prefix": "mcp__my-tool__"}}})
    cfg = config(tmp_path, corpus, scenario(modes=["baseline", "my-tool"]))
    plan = build_plan(cfg.scenario, cfg.corpus.tasks)
    with pytest.raises(InfraError) as err:
        check_tools(cfg, plan, timeout_s=10)
    text = str(err.value)
    assert "mode 'my-tool': MCP server 'my-tool'" in text
    assert "exited with 1 before answering initialize" in text
    assert "ModuleNotFoundError: mytool" in text
    assert not cfg.out.results.exists()  # nothing ran


def test_the_demo_server_starts_and_a_missing_wrapper_does_not(tmp_path: Path) -> None:
    demo = Mode.model_validate({"name": "codesearch", "mcp_config": {"mcpServers": {
        "codesearch": {"command": sys.executable, "args": [str(DEMO_TOOL_DIR)]}}},
        "validity": {"kind": "tool_call_prefix", "prefix": "mcp__codesearch__"}})
    assert mode_start_problems(demo, ENV, tmp_path) == []
    wrapped = Mode.model_validate({"name": "w", "wrapper": [str(tmp_path / "bin" / "w")],
                                   "validity": {"kind": "marker_file", "path": ".w"}})
    [problem] = mode_start_problems(wrapped, ENV, tmp_path)
    assert "not found or not executable" in problem and "exit 127" in problem


def _script(path: Path, body: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(0o755)
    return path


def test_a_wrapper_must_run_the_command_it_is_given(tmp_path: Path) -> None:
    """A wrapper that fails before it runs the agent would fail every run of its arm: the
    preflight gives it a command that prints a word and wants the word back."""
    def problems(body: str) -> list[str]:
        wrapper = _script(tmp_path / "bin" / "w", body)
        mode = Mode.model_validate({"name": "w", "wrapper": [str(wrapper)],
                                    "validity": {"kind": "marker_file", "path": ".w"}})
        # the tool's checkout (here its bin folder) is what the agent's view shows of /tmp
        return mode_start_problems(mode, ENV, tmp_path, timeout_s=10, shown=[wrapper.parent])

    assert problems('exec "$@"\n') == []
    [failed] = problems('echo "proxy: port 8080 in use" >&2\nexit 1\n')
    assert "exited with 1 when given a command to run" in failed
    assert "the agent would never start" in failed and "port 8080 in use" in failed
    [ignored] = problems("exit 0\n")
    assert "exited 0 without running it" in ignored


@pytest.mark.skipif("private-hidden" not in agent_isolation()[1],
                    reason="bubblewrap does not work here")
def test_the_wrapper_probe_runs_in_its_own_folder_not_the_hosts_root(tmp_path: Path) -> None:
    """Not shown in the sandbox, the probe's folder was left for `/`: a wrapper that plants
    files where it starts (a `.git` of its own) wrote them on the host's root."""
    where = tmp_path / "where.txt"
    wrapper = _script(tmp_path / "bin" / "w", f'pwd > {where}\nexec "$@"\n')
    mode = Mode.model_validate({"name": "w", "wrapper": [str(wrapper)],
                                "validity": {"kind": "marker_file", "path": ".w"}})
    assert mode_start_problems(mode, ENV, tmp_path, timeout_s=10) == []
    assert where.read_text().strip() == str(tmp_path)


def test_a_hook_whose_program_is_missing_is_refused(tmp_path: Path) -> None:
    """Claude Code runs a hook that cannot start, says "A hook gave no usable answer" and goes
    on without it: every run would read as the tool not adopted."""
    hook = _script(tmp_path / "bin" / "hook.sh", "exit 0\n")

    def problems(*commands: str) -> list[str]:
        mode = Mode.model_validate({"name": "h", "agent_config": {"hooks": {"PreToolUse": [
            {"matcher": "Bash", "hooks": [{"type": "command", "command": c}
                                          for c in commands]}]}},
            "validity": {"kind": "marker_file", "path": ".h"}})
        return mode_start_problems(mode, ENV, tmp_path)

    assert problems(str(hook), f"sh {hook} --fast", f"cd {tmp_path} && ./missing") == []
    [missing] = problems(str(tmp_path / "bin" / "gone.sh"))
    assert f"hook command '{tmp_path}/bin/gone.sh' not found or not executable" in missing
    [program] = problems("no-such-program --serve")
    assert "its program 'no-such-program' not found" in program
    hook.chmod(0o644)
    assert len(problems(str(hook))) == 1  # not executable


def test_a_wrapper_that_fails_in_a_run_is_an_infra_error_not_a_wrong_answer(
        tmp_path: Path) -> None:
    wrapper = _script(tmp_path / "bin" / "w", 'echo "proxy: upstream refused" >&2\nexit 3\n')
    corpus = make_corpus(tmp_path, {"q": {"prompt": fake(answer="42")}},
                         modes={"w": {"wrapper": [str(wrapper)],
                                      "validity": {"kind": "marker_file", "path": ".w"}}})
    cfg = config(tmp_path, corpus, scenario(modes=["w"]))
    cfg.tool_dir = wrapper.parent  # the agent's view shows the tool's checkout
    cfg.max_attempts = 1
    run_plan(cfg, build_plan(cfg.scenario, cfg.corpus.tasks), resume=False,
             scenario_text="name: t\n")
    [record] = read_records(cfg.out.results)
    assert record.outcome == "infra_error"  # before: agent_error, a wrong answer at $0
    assert record.error == (f"the tool under test failed: wrapper {str(wrapper)!r} exited 3 "
                            "before the agent printed anything; its stderr: proxy: upstream "
                            "refused")


def test_an_mcp_failure_during_a_run_is_an_infra_error_with_its_cause(tmp_path: Path) -> None:
    corpus = make_corpus(tmp_path, {"q": {"prompt": fake(answer="42", mcp_failed="my-tool")}})
    cfg = config(tmp_path, corpus, scenario())
    cfg.max_attempts = 1
    plan = build_plan(cfg.scenario, cfg.corpus.tasks)
    run_plan(cfg, plan, resume=False, scenario_text="name: t\n")
    [record] = read_records(cfg.out.results)
    assert record.outcome == "infra_error"
    assert record.error == ("the tool under test did not start: MCP server 'my-tool' failed "
                            "to start")
    assert record.tool_adopted is None
    assert load_corpus(corpus).require_ok()


def test_a_refused_key_is_an_infra_error_not_a_wrong_answer(tmp_path: Path) -> None:
    corpus = make_corpus(tmp_path, {"q": {"prompt": fake(
        answer="Not logged in · Please run /login", exit=1)}})
    cfg = config(tmp_path, corpus, scenario())
    cfg.max_attempts = 1
    run_plan(cfg, build_plan(cfg.scenario, cfg.corpus.tasks), resume=False,
             scenario_text="name: t\n")
    [record] = read_records(cfg.out.results)
    assert record.outcome == "infra_error"
    assert record.error is not None and "refused the key" in record.error


def test_an_empty_key_variable_is_no_key(tmp_path: Path) -> None:
    """`ANTHROPIC_API_KEY=` (an unset secret in a workflow) must not reach a CLI talking to a
    local endpoint: it then says "Not logged in" instead of using the placeholder."""
    from copeca_action.agent._invocation import PLACEHOLDER_KEY, _env
    from copeca_action.scenario import load_runner

    runner = load_runner(Path(__file__).resolve().parents[3] / "runners" / "claude.yaml")
    env = _env(runner, {"ANTHROPIC_API_KEY": " ", **ENV}, base_url="http://127.0.0.1:1",
               config_dir=tmp_path, home_dir=tmp_path, tmp_dir=tmp_path)
    assert env["ANTHROPIC_API_KEY"] == PLACEHOLDER_KEY


_SNOOP = ("cat /proc/{pid}/environ /proc/{pid}/cmdline {key} > {out} 2>&1; "
          "echo done >> {out}; exit 1")


def _snoop_setup(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, str]:
    """A key file the harness holds, and the shell line that tries to read it and this
    process's (the harness's) environment and command line."""
    from copeca_action._util import scrub

    key = tmp_path / "signing.key"
    key.write_text("-----BEGIN PRIVATE KEY-----\nPLANTED\n-----END PRIVATE KEY-----\n")
    monkeypatch.setattr(scrub, "_SECRET_FILES", {key.resolve()})
    out = tmp_path / "seen.txt"
    return out, _SNOOP.format(pid=os.getpid(), key=key, out=out)


def _harness_in(path: Path) -> bool:
    """Whether the file shows this process's environment or command line."""
    seen = path.read_bytes()
    proc = Path(f"/proc/{os.getpid()}")
    return any(part in seen for part in ((proc / "environ").read_bytes()[:100],
                                         (proc / "cmdline").read_bytes()))


@pytest.mark.skipif(not agent_isolation()[1], reason="no pid namespace can be made here")
def test_the_probed_tool_cannot_read_the_harness(tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """The pre-flight starts the tool under test (code of the pull request) itself: it gets
    the isolation an agent gets, not the harness's /proc/<pid>/environ and key file."""
    out, line = _snoop_setup(tmp_path, monkeypatch)
    mode = Mode.model_validate({"name": "snoop", "mcp_config": {"mcpServers": {
        "snoop": {"command": "/bin/sh", "args": ["-c", line]}}},
        "validity": {"kind": "tool_call_prefix", "prefix": "mcp__snoop__"}})
    [problem] = mode_start_problems(mode, ENV, tmp_path)
    seen = out.read_text(errors="replace")
    assert "exited with 1" in problem and "done" in seen
    assert not _harness_in(out)
    if "keys-hidden" in agent_isolation()[1]:
        assert "PLANTED" not in seen


@pytest.mark.skipif(not agent_isolation()[1], reason="no pid namespace can be made here")
def test_a_mode_set_up_command_cannot_read_the_harness(tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    from copeca_action.engine._execute import _run_mode_setup

    out, line = _snoop_setup(tmp_path, monkeypatch)
    corpus = make_corpus(tmp_path, {"q": {"prompt": fake(answer="42")}})
    cfg = config(tmp_path, corpus, scenario())
    (tmp_path / "run" / "home").mkdir(parents=True)
    _run_mode_setup(cfg, [["/bin/sh", "-c", line.replace("exit 1", "true")]], tmp_path,
                    tmp_path / "run", None)
    seen = out.read_text(errors="replace")
    assert "done" in seen and not _harness_in(out)
    if "keys-hidden" in agent_isolation()[1]:
        assert "PLANTED" not in seen


@pytest.mark.parametrize("kind", ["scripted", "dry_run", "real", "real, COPECA_KEY_PROXY=off"])
def test_against_the_scripted_model_the_agent_never_gets_the_real_key(
        tmp_path: Path, kind: str) -> None:
    """The scripted model takes any key: in a dry run the agent, and the tool under test
    beside it, get the placeholder even when the job holds the real key. A real endpoint
    (`--base-url`, a proxy that needs the key) gets it from the key forwarder: the agent
    holds the forwarder's placeholder and talks to it on loopback. `COPECA_KEY_PROXY=off`
    gives the agent the key itself, and its record says so."""
    from copeca_action.agent._invocation import PLACEHOLDER_KEY
    from copeca_action.keyproxy import PLACEHOLDER_PREFIX

    corpus = make_corpus(tmp_path, {"q": {"prompt": fake(answer="42", env_file="env.json")}})
    path = tmp_path / "runners" / "fake.yaml"
    data = yaml.safe_load(path.read_text())
    data.update(credential_env=["FAKE_KEY"], base_url_env="FAKE_BASE_URL")
    path.write_text(yaml.safe_dump(data))
    cfg = config(tmp_path, corpus, scenario())
    off = {"COPECA_KEY_PROXY": "off"} if "off" in kind else {}
    cfg.host_env = {**ENV, "FAKE_KEY": "the-real-key-0123456789", **off}
    cfg.base_url, cfg.endpoint_kind = "http://127.0.0.1:9", kind.split(",")[0]  # type: ignore[assignment]
    run_plan(cfg, build_plan(cfg.scenario, cfg.corpus.tasks), resume=False,
             scenario_text="name: t\n")
    [seen] = cfg.out.root.glob("runs/*/home/env.json")  # the agent's HOME, in its run folder
    env = json.loads(seen.read_text())
    [record] = read_records(cfg.out.results)
    if kind == "real":
        assert env["FAKE_BASE_URL"].startswith("http://127.0.0.1:")
        assert env["FAKE_BASE_URL"] != "http://127.0.0.1:9"
        assert env["FAKE_KEY"].startswith(PLACEHOLDER_PREFIX)
        assert "key_in_agent_env" not in record.flags
        return
    assert env["FAKE_BASE_URL"] == "http://127.0.0.1:9"
    assert env["FAKE_KEY"] == ("the-real-key-0123456789" if "off" in kind else PLACEHOLDER_KEY)
    assert ("key_in_agent_env" in record.flags) == ("off" in kind)
