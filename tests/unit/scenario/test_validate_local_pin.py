"""`validate` refuses a `local:` pin whose clone holds the benchmark's own task files (a
benchmark kept in the repository it benchmarks), as `run` does before its first run
(engine `_answers_in_reach`), with the same words; on real clones made with git."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from copeca_action.cli import main
from copeca_action.scenario import validate_paths

SCENARIO = """\
name: s
tasks:
  include: ["app/*"]
modes: [baseline]
models: [claude-sonnet-4-5]
model_runner_map: {claude-sonnet-4-5: claude}
"""

def _git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t.invalid", *args],
                   cwd=cwd, check=True, capture_output=True)


TASK = """\
id: app/{name}
repo: app
type: comprehension
category: locate
language: python
prompt: Which function returns the answer of the program?
source:
  origin: original
grading:
  answer:
    required: [answer]
"""


def benchmark_in_its_repository(root: Path, pin: str = "..") -> Path:
    """A tool's clone that keeps its benchmark in bench/, pinned as `local: {path: ..}`:
    one task committed, one written after the commit."""
    bench = root / "bench"
    (bench / "tasks" / "app").mkdir(parents=True)
    (bench / "modes").mkdir()
    (bench / "scenarios").mkdir()
    (root / "app.py").write_text("def answer():\n    return 42\n")
    (bench / "repos.yaml").write_text(
        f"repos:\n  app:\n    language: python\n    local:\n      path: {pin}\n")
    (bench / "modes" / "baseline.yaml").write_text("name: baseline\n")
    (bench / "tasks" / "app" / "committed.yaml").write_text(TASK.format(name="committed"))
    (bench / "scenarios" / "s.yaml").write_text(SCENARIO)
    _git(root, "init", "-q")
    _git(root, "add", "-A")
    _git(root, "commit", "-qm", "tool and benchmark")
    (bench / "tasks" / "app" / "later.yaml").write_text(TASK.format(name="later"))
    return bench


def test_validate_refuses_a_local_pin_whose_clone_holds_the_tasks(tmp_path: Path) -> None:
    bench = benchmark_in_its_repository(tmp_path / "tool")
    task = bench / "tasks" / "app" / "committed.yaml"
    for paths in ([bench], [bench / "scenarios" / "s.yaml"], [task]):
        result = validate_paths(paths)
        shown = [str(e) for e in result.errors]
        assert len(shown) == 1, shown
        assert shown[0].startswith(f"{task}:2: repo: task app/committed: repository 'app' at ")
        assert (f"holds the task's own file ({task} as bench/tasks/app/committed.yaml), so "
                "the agent's checkout shows it the answers it is graded on") in shown[0]
    # the task written after the commit is not in the checkout a run takes (HEAD)
    assert validate_paths([bench / "tasks" / "app" / "later.yaml"]).ok


def test_validate_cli_exits_1_naming_the_task(tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    bench = benchmark_in_its_repository(tmp_path / "tool")
    assert main(["validate", "-q", str(bench)]) == 1
    out = capsys.readouterr()
    assert "holds the task's own file" in out.err and "Traceback" not in out.err
    assert out.out.startswith("invalid: ")


def test_a_benchmark_beside_the_pinned_clone_is_valid(tmp_path: Path) -> None:
    """The same benchmark with the clone it pins elsewhere: nothing of it in the checkout."""
    clone = tmp_path / "app"
    clone.mkdir()
    (clone / "app.py").write_text("def answer():\n    return 42\n")
    _git(clone, "init", "-q")
    _git(clone, "add", "-A")
    _git(clone, "commit", "-qm", "app")
    bench = benchmark_in_its_repository(tmp_path / "bench-repo", pin=str(clone))
    result = validate_paths([bench])
    assert result.ok, [str(e) for e in result.errors]


def test_a_local_pin_that_is_no_repository_is_named(tmp_path: Path) -> None:
    """A warning, not an error: the checkout may live elsewhere on this machine (validate
    --deep --repos-dir); `run` refuses it where it cannot read it."""
    bench = benchmark_in_its_repository(tmp_path / "tool", pin="../../nowhere")
    result = validate_paths([bench / "tasks" / "app" / "committed.yaml"])
    assert result.ok
    assert [str(e).split(": ", 1)[1] for e in result.warnings
            if "local pin" in str(e)] == [
        f"repo: task app/committed: local pin ../../nowhere of 'app' "
        f"({(tmp_path / 'nowhere').resolve()}) is not a git repository"]
