"""ContextBench's evaluator side by side with ours, rebuilt as small fixtures.

Each case is one row of docs/retrieval.md ("Where we differ from ContextBench's scripts"): where
we now agree, the test pins the shared result; where we differ on purpose, it pins ours and
states (and computes by hand) what ContextBench's evaluator gives.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from copeca_action.retrieval import Repo, evaluate_files

A = "def f():\n    return 1\n\n\n@cache\ndef g():\n    return 2\n"
"""g is decorated: its decorator is line 5, its def lines 6-7."""


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg/a.py").write_text(A)
    (root / "pkg/b.py").write_text("X = 1\n")
    return root


def files(tmp_path: Path, pred: dict[str, object],
          gold: dict[str, object]) -> tuple[Path, Path]:
    (tmp_path / "pred.json").write_text(json.dumps({"traj_data": pred}))
    (tmp_path / "gold.json").write_text(json.dumps(gold))
    return tmp_path / "pred.json", tmp_path / "gold.json"


GOLD_G = {"init_ctx": [{"file": "pkg/a.py", "start_line": 6, "end_line": 7}]}


def test_no_steps_scores_the_final_context_as_one_step(repo: Path, tmp_path: Path) -> None:
    # as ContextBench: `traj_steps = [final_step]` when there are none (we gave AUC 0 before)
    pred, gold = files(tmp_path, {"pred_steps": [], "pred_files": ["pkg/a.py"],
                                  "pred_spans": {"pkg/a.py": [{"type": "line", "start": 6,
                                                               "end": 7}]}}, GOLD_G)
    run = evaluate_files(pred, gold, Repo(repo))
    assert run.steps == 1
    assert run.trajectory_span is not None and run.trajectory_span.auc == 1.0
    assert run.trajectory_file is not None and run.trajectory_file.auc == 1.0
    assert run.span is not None and run.span.coverage == 1.0


def test_an_empty_step_is_dropped_here_and_counted_there(repo: Path, tmp_path: Path) -> None:
    # ContextBench keeps a step that viewed nothing: T = 2, coverage after each step
    # [0.0, 1.0], AUC 0.5. We leave it out (it is no retrieval step): T = 1, AUC 1.0.
    pred, gold = files(tmp_path, {"pred_steps": [
        {"files": [], "spans": {}},
        {"files": ["pkg/a.py"], "spans": {"pkg/a.py": [{"type": "line", "start": 6,
                                                        "end": 7}]}}]}, GOLD_G)
    run = evaluate_files(pred, gold, Repo(repo))
    assert run.steps == 1
    assert run.trajectory_span is not None
    assert run.trajectory_span.coverage_by_step == [1.0] and run.trajectory_span.auc == 1.0
    contextbench_auc = (0.0 + 1.0) / 2
    assert run.trajectory_span.auc != contextbench_auc


def test_unknown_prefixes_are_stripped_until_a_file_matches(repo: Path, tmp_path: Path) -> None:
    pred, gold = files(tmp_path, {"pred_steps": [
        {"files": ["/testbed/pkg/a.py"], "spans": {}},
        {"files": ["/workspace/proj/pkg/b.py", "/elsewhere/nothing.py"], "spans": {}}]},
        GOLD_G)
    stripped = evaluate_files(pred, gold, Repo(repo, strip_prefixes=True))
    assert stripped.steps == 2 and stripped.dropped_paths == ["/elsewhere/nothing.py"]
    assert stripped.trajectory_file is not None
    assert stripped.trajectory_file.coverage_by_step == [1.0, 1.0]
    strict = evaluate_files(pred, gold, Repo(repo))
    assert strict.steps == 0 and len(strict.dropped_paths) == 3
    aliased = evaluate_files(pred, gold, Repo(repo, ["/testbed"]))
    assert aliased.steps == 1


def test_stripping_also_matches_a_copy_outside_the_tree(repo: Path, tmp_path: Path) -> None:
    # The price of ContextBench's rule (kept for parity, off in our own runs): an installed
    # copy of the package counts as the repository's file.
    pred, gold = files(tmp_path, {"pred_steps": [
        {"files": ["/usr/lib/python3/site-packages/pkg/a.py"], "spans": {}}]}, GOLD_G)
    assert evaluate_files(pred, gold, Repo(repo, strip_prefixes=True)).steps == 1
    assert evaluate_files(pred, gold, Repo(repo)).steps == 0


def test_a_decorator_line_belongs_to_its_symbol_here(repo: Path, tmp_path: Path) -> None:
    # Gold is only the decorator line. Ours: the decorator is part of g, so the gold has one
    # symbol and a view of lines 6-7 covers it. ContextBench's extractor takes the bare
    # `function_definition` node (lines 6-7): the decorator line overlaps no symbol, its
    # symbol gold is empty and symbol coverage is 1.0 by convention, whatever was viewed.
    pred, gold = files(tmp_path, {"pred_steps": [
        {"files": [], "spans": {"pkg/a.py": [{"type": "line", "start": 1, "end": 2}]}}]},
        {"init_ctx": [{"file": "pkg/a.py", "start_line": 5, "end_line": 5}]})
    run = evaluate_files(pred, gold, Repo(repo))
    assert run.symbol is not None and run.symbol.gold == 1
    assert run.symbol.coverage == 0.0  # f was viewed, not g
