"""The engine runs an edit task's test command (the agent's code) in the local sandbox."""

from __future__ import annotations

from pathlib import Path

import pytest
from engine_helpers import config, fake, make_corpus, scenario

from copeca_action.engine import run_plan
from copeca_action.evaluate._local import BWRAP_PROBE, _works
from copeca_action.plan import build_plan
from copeca_action.records import read_records


@pytest.mark.skipif(not _works(BWRAP_PROBE), reason="bubblewrap does not work on this host")
def test_test_command_writes_only_its_tree_and_home(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    # passes only when the worktree and HOME are writable and the rest of the host is not
    test_cmd = ["sh", "-c", f'touch ok-in-tree && touch "$HOME/ok-in-home" && '
                f'! touch "{outside}/planted" 2>/dev/null && '
                "printf '# tests 1\\n# pass 1\\n# fail 0\\n'"]
    mutation = {"file": "app.py", "search": "return 42", "replace": "return 42 "}
    corpus = make_corpus(tmp_path, {"one": {
        "type": "edit", "category": "fix",
        "prompt": fake(edit=["app.py", "return 42 ", "return 42"], answer="done"),
        "grading": {"test": {"command": test_cmd, "mutations": [mutation]}}}})
    cfg = config(tmp_path, corpus, scenario(repetitions=1))
    run_plan(cfg, build_plan(cfg.scenario, cfg.corpus.tasks), scenario_text="name: t\n")
    (record,) = read_records(cfg.out.results)
    assert record.correct, record.grading.get("output")
    assert "bwrap" in record.grading["isolation"]
    assert not (outside / "planted").exists()
