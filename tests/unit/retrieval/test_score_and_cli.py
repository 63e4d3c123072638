"""A whole run on the real fastapi snapshot (corpus task, Claude and Codex style calls, patch),
and the `context` verb on ContextBench-format files."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from copeca_action.cli import main
from copeca_action.errors import ConfigError
from copeca_action.retrieval import Repo, evaluate_files, score_run
from copeca_action.scenario import load_task
from copeca_action.transcript._model import ToolCall, Transcript, Turn

ROOT = Path(__file__).resolve().parents[3]
TASK = ROOT / "corpus/tasks/fastapi/fix-unique-id-method.yaml"

FIX = "\n".join([
    "diff --git a/fastapi/utils.py b/fastapi/utils.py",
    "--- a/fastapi/utils.py",
    "+++ b/fastapi/utils.py",
    '@@ -180,7 +180,7 @@ def generate_unique_id(route: "APIRoute") -> str:',
    '     operation_id = f"{route.name}{route.path_format}"',
    '     operation_id = re.sub(r"\\W", "_", operation_id)',
    "     assert route.methods",
    '-    operation_id = f"{operation_id}_{list(route.methods)[0].lower()}"',
    '+    operation_id = f"{operation_id}_{sorted(route.methods)[0].lower()}"',
    "     return operation_id",
    " ",
    " ",
    ""])


def test_score_run_on_fastapi(fastapi_src: Path) -> None:
    task = load_task(TASK)
    worktree = "/tmp/copeca/runs/abc/worktree"
    calls = [
        ToolCall(step=0, name="Grep", input={"pattern": "def generate_unique_id"},
                 result="Found 1 file\n" + worktree + "/fastapi/utils.py"),
        ToolCall(step=1, name="Read", input={"file_path": worktree + "/fastapi/routing.py",
                                             "offset": 428, "limit": 40}),
        ToolCall(step=2, name="Read", input={"file_path": worktree + "/fastapi/utils.py",
                                             "offset": 170, "limit": 20}),
    ]
    transcript = Transcript(parser="stream_json",
                            turns=[Turn(index=c.step, tool_calls=[c]) for c in calls],
                            tool_calls=calls)
    run = score_run(transcript, task, Repo(fastapi_src, [worktree]), patch=FIX, run_id="r1")
    assert run.steps == 3 and run.dropped_paths == []
    assert (run.run_id, run.task_id) == ("r1", "fastapi/fix-unique-id-method")
    assert run.file is not None and (run.file.intersection, run.file.pred) == (1, 2)
    assert run.symbol is not None
    assert run.symbol.gold == 1 and run.symbol.coverage == 1.0  # generate_unique_id
    # lines 170-189 also touch generate_operation_id_for_path and deep_dict_update; routing
    # 428-467 touches APIRoute and its __init__
    assert run.symbol.pred == 5
    assert run.span is not None and run.span.coverage == 1.0
    assert run.trajectory_file is not None
    assert run.trajectory_file.coverage_by_step == [1.0, 1.0, 1.0]
    assert run.trajectory_span is not None
    assert run.trajectory_span.coverage_by_step == [0.0, 0.0, 1.0]
    assert run.editloc is not None
    assert (run.editloc.intersection, run.editloc.gold, run.editloc.pred) == (1, 1, 1)


def test_score_run_comprehension_has_no_editloc(fastapi_src: Path) -> None:
    task = load_task(ROOT / "corpus/tasks/fastapi/locate-unique-id.yaml")
    run = score_run(Transcript(parser="codex_json"), task, Repo(fastapi_src))
    assert run.editloc is None and run.file is not None and run.file.coverage == 0.0


@pytest.fixture
def small_repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / "src").mkdir(parents=True)
    (root / "src/a.py").write_text("def f():\n    return 1\n\n\ndef g():\n    return 2\n")
    (root / "src/b.py").write_text("X = 1\n")
    return root


def write(path: Path, data: object) -> Path:
    path.write_text(json.dumps(data))
    return path


PRED = {"instance_id": "demo-1",
        "traj_data": {
            "pred_steps": [
                {"files": ["/testbed/src/b.py"], "spans": {}},
                {"files": [], "spans": {"src/a.py": [{"type": "line", "start": 1, "end": 2}]}},
                {"files": ["src/gone.py"],
                 "spans": [{"file": "src/a.py", "start_line": 5, "end_line": 6}]}],
            "pred_files": ["src/a.py"],
            "pred_spans": {"src/a.py": [{"type": "line", "start": 1, "end": 6}]}},
        "model_patch": ""}
GOLD_CB = {"init_ctx": [{"file": "src/a.py", "start_line": 5, "end_line": 6}],
           "add_ctx": [], "patch": "--- a/src/a.py\n+++ b/src/a.py\n@@ -6 +6 @@\n"
           "-    return 2\n+    return 3\n"}


def test_contextbench_files(small_repo: Path, tmp_path: Path) -> None:
    pred = write(tmp_path / "pred.json", PRED)
    gold = write(tmp_path / "gold.json", GOLD_CB)
    run = evaluate_files(pred, gold, Repo(small_repo, ["/testbed"]))
    assert run.steps == 3
    assert run.dropped_paths == ["src/gone.py"]
    # final context = pred_files + pred_spans: the whole of a.py
    assert run.file is not None and (run.file.intersection, run.file.pred) == (1, 1)
    assert run.symbol is not None and (run.symbol.intersection, run.symbol.gold,
                                       run.symbol.pred) == (1, 1, 2)
    assert run.trajectory_span is not None
    assert run.trajectory_span.coverage_by_step == [0.0, 0.0, 1.0]
    # model_patch "" beside traj_data: no change, gold edit line 6 from the reference patch
    assert run.editloc is not None
    assert (run.editloc.coverage, run.editloc.precision, run.editloc.f1) == (0.0, 1.0, 0.0)


def test_context_cli(small_repo: Path, tmp_path: Path,
                     capsys: pytest.CaptureFixture[str]) -> None:
    data = json.loads(json.dumps(PRED["traj_data"]))
    data["model_patch"] = GOLD_CB["patch"]
    pred = write(tmp_path / "pred.json", data)
    gold = write(tmp_path / "gold.json", {"gold_context": [{"file": "src/a.py",
                                                            "lines": [5, 6]}],
                                          "gold_edit_lines": [{"file": "src/a.py",
                                                               "lines": [6, 6]}]})
    shutil.copytree(small_repo, tmp_path / "testbed")
    code = main(["context", "--pred", str(pred), "--gold", str(gold),
                 "--repo", str(tmp_path / "testbed"), "--alias", "/testbed", "--json"])
    out = capsys.readouterr()
    assert code == 0
    result = json.loads(out.out)
    assert result["editloc"]["f1"] == 1.0
    assert result["span"]["coverage"] == 1.0
    assert "1 predicted paths are not files" in out.err
    code = main(["context", "--pred", str(pred), "--gold", str(gold), "--repo",
                 str(tmp_path / "testbed"), "--no-strip"])
    table = capsys.readouterr().out
    assert code == 0 and table.splitlines()[0].startswith("granularity")
    assert "editloc" in table
    assert "steps: 2" in table  # without the alias, /testbed/src/b.py is not in the repo
    code = main(["context", "--pred", str(pred), "--gold", str(gold), "--repo",
                 str(tmp_path / "testbed")])
    assert code == 0 and "steps: 3" in capsys.readouterr().out  # stripped to src/b.py


def test_bad_gold_names_file_and_field(small_repo: Path, tmp_path: Path) -> None:
    pred = write(tmp_path / "pred.json", PRED)
    gold = write(tmp_path / "gold.json", {"gold_context": [{"file": "src/a.py",
                                                            "lines": [6, 5]}]})
    with pytest.raises(ConfigError) as info:
        evaluate_files(pred, gold, Repo(small_repo))
    assert "gold.json: gold_context[0]" in str(info.value)
    assert "start <= end" in str(info.value)
    empty = write(tmp_path / "empty.json", {"init_ctx": []})
    with pytest.raises(ConfigError, match="non-empty"):
        evaluate_files(pred, empty, Repo(small_repo))


@pytest.mark.parametrize(("pred", "field"), [
    ({"pred_files": "src/a.py"}, "pred_files: expected a list of file paths"),
    ({"pred_files": [1, 2]}, "pred_files[0]: expected a file path"),
    ({"pred_steps": [{"files": "src/a.py"}]}, "pred_steps[0].files: expected a list"),
    ({"pred_files": ["src/a.py"], "model_patch": {"diff": "x"}}, "model_patch: expected"),
])
def test_a_bad_prediction_names_its_field(small_repo: Path, tmp_path: Path,
                                          pred: dict[str, object], field: str) -> None:
    """A bare string is not read one character a path (the error was "none of the
    predicted paths is a file (a, ., p…)"), a number is no path, a patch is text."""
    gold = write(tmp_path / "gold.json", {"gold_context": [{"file": "src/a.py",
                                                            "lines": [1, 2]}]})
    with pytest.raises(ConfigError) as info:
        evaluate_files(write(tmp_path / "pred.json", pred), gold, Repo(small_repo))
    assert f"pred.json: {field}" in str(info.value)


def test_context_cli_missing_repo_is_a_flag_error(tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["context", "--pred", "p.json", "--gold", "g.json",
                 "--repo", str(tmp_path / "none")])
    assert code == 2
    assert "--repo" in capsys.readouterr().err


def test_context_cli_with_a_task_yaml_as_gold(fastapi_src: Path, tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    pred = write(tmp_path / "pred.json", {
        "pred_steps": [{"files": ["fastapi/routing.py"]},
                       {"spans": {"fastapi/utils.py": [{"type": "line", "start": 179,
                                                        "end": 184}]}}],
        "model_patch": FIX})
    code = main(["context", "--pred", str(pred), "--gold", str(TASK), "--repo",
                 str(fastapi_src), "--json"])
    result = json.loads(capsys.readouterr().out)
    assert code == 0
    assert result["span"]["coverage"] == 1.0 and result["span"]["precision"] == 1.0
    assert result["symbol"]["coverage"] == 1.0
    assert result["file"]["precision"] == 0.5
    assert result["trajectory_file"]["auc"] == 0.5
    assert result["editloc"]["f1"] == 1.0
