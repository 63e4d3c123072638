"""The container step keeps the runner's files (event payload, $GITHUB_OUTPUT,
$GITHUB_STEP_SUMMARY) in a folder of the workspace, beside the tool's checkout, which agents
and the tool under test may write. The action hides that folder from every agent and
graded command before any code of the tool runs: an MCP server could otherwise plant a link
there (`summary.md -> /proc/self/environ`), a heredoc that swallows the action's outputs, or
text in the job summary. Run for real under the agents' isolation."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest
from fake_github import FakeGitHub
from gh_support import parse_outputs, payload
from sample import sample_comment

from copeca_action.agent import _process
from copeca_action.agent._process import agent_isolation
from copeca_action.github import ActionContext, Outcome, main
from copeca_action.github._files import runner_file_dirs

PLANT = ("cd \"$1\" && ln -sf /proc/self/environ summary.md.new && mv -f summary.md.new "
         "summary.md; printf 'verdict<<X\\n' >> output; echo planted")


@pytest.mark.parametrize("level", ["bwrap", "unshare"])
def test_the_exchange_folder_is_out_of_agents_reach(fake_github: FakeGitHub, actions_env: Any,
                                                    level: str,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    if level == "unshare":  # the fallback where bubblewrap does not work: read-only mounts
        works = _process._works
        monkeypatch.setattr(_process, "_works", lambda argv: argv[0] != "bwrap" and works(argv))
    env = actions_env("pull_request", payload("pull_request.opened"), fake_github.url)
    ws = Path(env["GITHUB_WORKSPACE"])
    io = ws / ".copeca-io.abc123"
    io.mkdir()
    for name, var in (("event.json", "GITHUB_EVENT_PATH"), ("output", "GITHUB_OUTPUT"),
                      ("summary.md", "GITHUB_STEP_SUMMARY")):
        (io / name).write_bytes(Path(env[var]).read_bytes() if name == "event.json" else b"")
        env[var] = str(io / name)
    seen: list[subprocess.CompletedProcess[str]] = []

    def engine(ctx: ActionContext) -> Outcome:
        prefix, levels = agent_isolation(writable=[ctx.workspace])
        if level not in levels or not {"private-hidden", "harness-ro"} & set(levels):
            pytest.skip(f"agents' isolation here hides no folder ({levels})")
        seen.append(subprocess.run([*prefix, "sh", "-c", PLANT, "sh", str(io)],
                                   capture_output=True, text=True, check=False, timeout=60))
        return Outcome(comment=sample_comment(ctx.inputs.comment_id), outputs={})

    assert main(env, engine) == 0
    assert len(seen) == 1  # it ran (into an empty folder of its own, or a read-only one)
    assert not (io / "summary.md").is_symlink()
    assert "INPUT_GITHUB_TOKEN" not in (io / "summary.md").read_text()
    assert parse_outputs(io / "output")["verdict"] == "improvement"


def test_a_folder_holding_the_workspace_is_never_hidden(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    env = {"GITHUB_OUTPUT": str(tmp_path / "output"),
           "GITHUB_STEP_SUMMARY": str(ws / ".copeca-io.x" / "summary.md"),
           "GITHUB_EVENT_PATH": "/event.json"}
    assert runner_file_dirs(env, ws) == [ws / ".copeca-io.x"]
