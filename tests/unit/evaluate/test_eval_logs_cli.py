"""`copeca-action eval` and `check-task` over a real toy repository and corpus."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from evalrepo import CALC, FIXED_ADD, MakeDiff

from copeca_action.cli import main
from copeca_action.evaluate import discover_runs, read_eval

TAP = "print('# tests 1\\n# pass 1\\n# fail 0')\n"
"""A pass needs a test report besides exit 0: node's TAP counts are the shortest."""
CHECK_ADD = ("import sys\nsys.path.insert(0, '.')\nfrom calc import add\nassert add(2, 3) == 5\n"
             + TAP)
CHECK_MUL = ("import sys\nsys.path.insert(0, '.')\nfrom calc import mul\nassert mul(2, 3) == 6\n"
             + TAP)


def task_yaml(task_id: str, grading: str) -> str:
    return (f"id: {task_id}\nrepo: calc\ntype: edit\ncategory: fix\nlanguage: python\n"
            "prompt: Make the arithmetic helpers return the right results.\n"
            f"source: {{origin: original}}\ngrading:\n{grading}")


@pytest.fixture
def corpus(tmp_path: Path, make_diff: MakeDiff) -> Path:
    root = tmp_path / "corpus"
    tasks = root / "tasks" / "calc"
    (tasks / "t1" / "patches").mkdir(parents=True)
    (root / "repos.yaml").write_text("repos:\n  calc:\n    language: python\n    local: {path: .}\n"
                                     "    test_patterns: ['*.snap']\n")
    for n, check in ((1, CHECK_ADD), (2, CHECK_MUL)):
        (tasks / "t1" / "patches" / f"tests_f{n}.patch").write_text(
            make_diff({f"tests/check_{n}.py": check}))
        (tasks / "t1" / f"f{n}.yaml").write_text(task_yaml(
            f"calc/t1/f{n}", "  patch:\n    tests_patch: patches/tests_f" + str(n) + ".patch\n"
            "    reference_patch: patches/fix.patch\n"
            f"    command: [{sys.executable}, tests/check_{n}.py]\n    timeout_s: 60\n"))
    (tasks / "t1" / "patches" / "fix.patch").write_text(make_diff({"calc.py": FIXED_ADD}))
    (tasks / "mutant.yaml").write_text(task_yaml("calc/mutant", (
        "  test:\n    mutations:\n      - {file: calc.py, search: 'a * b', replace: 'a + b'}\n"
        f"    command: [{sys.executable}, -c, 'from calc import mul; assert mul(2, 3) == 6; "
        "print(\"# tests 1\\n# pass 1\\n# fail 0\")']\n")))
    (tasks / "weak.yaml").write_text(task_yaml("calc/weak", (
        "  patch:\n    tests_patch: t1/patches/tests_f2.patch\n"
        "    reference_patch: t1/patches/fix.patch\n"
        f"    command: [{sys.executable}, tests/check_2.py]\n")))
    return root


@pytest.fixture
def logs(tmp_path: Path, make_diff: MakeDiff) -> Path:
    root = tmp_path / "logs"
    fix = make_diff({"calc.py": FIXED_ADD, "tests/check_1.py": "print('cheat')\n"})
    wrong = make_diff({"calc.py": CALC.replace("a - b", "a * b")})
    other = make_diff({"calc.py": CALC.replace("a - b", "b + a")})
    runs = {"solo/calc/t1/f1_f2/solo.patch": fix,
            "coop/calc/t1/f1_f2/agent1.patch": fix, "coop/calc/t1/f1_f2/agent2.patch": other,
            "solo/calc/t2/f1_f2/solo.patch": fix,   # no corpus task calc/t2/fN: an error
            "coop/calc/t1/f2_f1/agent2.patch": wrong}  # agent1.patch missing: an error
    for rel, text in runs.items():
        path = root / "exp" / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


def run_cli(*argv: str) -> int:
    return main(list(argv))


def test_eval_writes_eval_json_and_a_whole_experiment_summary(
        repo: Path, corpus: Path, logs: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = run_cli("eval", "-n", "exp", "--logs", str(logs), "--corpus", str(corpus),
                   "--repo-dir", str(repo), "-c", "2")
    assert code == 1  # some runs are harness errors
    solo = read_eval(logs / "exp/solo/calc/t1/f1_f2/eval.json")
    assert solo is not None and solo.status == "pass"
    assert [d.path for d in solo.patches["solo"].dropped] == ["tests/check_1.py"]
    coop = read_eval(logs / "exp/coop/calc/t1/f1_f2/eval.json")
    assert coop is not None and coop.merge is not None
    assert (coop.merge.status, coop.merge.strategy) == ("conflict", "union")
    missing_task = read_eval(logs / "exp/solo/calc/t2/f1_f2/eval.json")
    assert missing_task is not None and "no corpus task 'calc/t2/f1'" in (missing_task.error or "")
    missing_patch = read_eval(logs / "exp/coop/calc/t1/f2_f1/eval.json")
    assert missing_patch is not None and "agent1.patch missing" in (missing_patch.error or "")
    summary = json.loads((logs / "exp/eval_summary.json").read_text())
    assert summary["total_runs"] == 4 and summary["errors"] == 2
    assert summary["passed"] + summary["failed"] == 2 and summary["skipped"] == 0
    assert summary["pass_rate"] == summary["passed"] / 2
    out = capsys.readouterr().out
    assert "solo/calc/t1/f1_f2" in out and "errors excluded" in out


def test_filters_reuse_and_force(repo: Path, corpus: Path, logs: Path) -> None:
    base = ["eval", "-n", "exp", "--logs", str(logs), "--corpus", str(corpus), "--repo-dir",
            f"calc={repo}"]
    # -f 1,2 matches the pair in either order (f2_f1 too, whose agent1.patch is missing).
    assert run_cli(*base, "-t", "t1", "-f", "1,2") == 1
    evaluated = {r.name for r in discover_runs(logs, "exp") if (r.path / "eval.json").exists()}
    assert evaluated == {"solo/calc/t1/f1_f2", "coop/calc/t1/f1_f2", "coop/calc/t1/f2_f1"}
    summary = json.loads((logs / "exp/eval_summary.json").read_text())
    assert summary["total_runs"] == 4 and summary["skipped"] == 1  # covers the whole tree
    eval_file = logs / "exp/solo/calc/t1/f1_f2/eval.json"
    stamp = eval_file.read_text()
    assert run_cli(*base, "-t", "t1", "-f", "1,2") == 0  # all reused: nothing new failed
    assert eval_file.read_text() == stamp  # reused, not evaluated again
    assert run_cli(*base, "-t", "t1", "-f", "1,2", "-r", "calc", "--force") == 1
    assert json.loads(eval_file.read_text())["evaluated_at"] >= json.loads(stamp)["evaluated_at"]


def test_eval_needs_a_checkout_for_every_repo(corpus: Path, logs: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    assert run_cli("eval", "-n", "exp", "--logs", str(logs), "--corpus", str(corpus)) == 2
    assert "--repo-dir" in capsys.readouterr().err
    assert run_cli("eval", "-n", "nope", "--logs", str(logs), "--corpus", str(corpus)) == 2
    assert run_cli("eval", "-n", "exp", "--logs", str(logs), "--corpus", str(corpus),
                   "-f", "1") == 2


def test_subset_file_selects_runs(repo: Path, corpus: Path, logs: Path, tmp_path: Path) -> None:
    subset = tmp_path / "subset.txt"
    subset.write_text("# only task 2\ncalc/t2\n")
    run_cli("eval", "-n", "exp", "--logs", str(logs), "--corpus", str(corpus), "--repo-dir",
            str(repo), "-s", str(subset))
    assert (logs / "exp/solo/calc/t2/f1_f2/eval.json").exists()
    assert not (logs / "exp/solo/calc/t1/f1_f2/eval.json").exists()


def test_check_task_for_test_and_patch_tasks(repo: Path, corpus: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    assert run_cli("check-task", "calc/mutant", "--corpus", str(corpus), "--repo-dir",
                   str(repo)) == 0
    assert run_cli("check-task", "calc/t1/f1", "--corpus", str(corpus), "--repo-dir",
                   str(repo)) == 0
    out = capsys.readouterr().out
    assert "ok: calc/mutant (test)" in out and "ok: calc/t1/f1 (patch)" in out
    # calc/weak's hidden test (mul) already passes without the fix: a useless task.
    assert run_cli("check-task", str(corpus / "tasks/calc/weak.yaml"), "--corpus", str(corpus),
                   "--repo-dir", str(repo), "--json") == 1
    result = json.loads(capsys.readouterr().out)
    assert [s["ok"] for s in result["steps"]] == [False, True]


def test_check_task_reports_a_mutation_that_does_not_match(repo: Path, corpus: Path,
                                                           capsys: pytest.CaptureFixture[str]
                                                           ) -> None:
    path = corpus / "tasks/calc/mutant.yaml"
    path.write_text(path.read_text().replace("'a * b'", "'a ** b'"))
    assert run_cli("check-task", "calc/mutant", "--corpus", str(corpus), "--repo-dir",
                   str(repo)) == 2
    assert "mutations[0].search: found 0 times in calc.py" in capsys.readouterr().err


def test_engine_path_extract_then_grade(repo: Path, corpus: Path, tmp_path: Path) -> None:
    """What the engine does after an agent run: extract the worktree's patch, grade it."""
    from evalrepo import run_git, write

    from copeca_action.evaluate import (
        LocalSandbox,
        TestFileRules,
        evaluate_task_patch,
        extract_patch,
    )
    from copeca_action.scenario import load_corpus

    agent_tree = tmp_path / "agent"
    run_git(tmp_path, "clone", "-q", str(repo), str(agent_tree))
    start = run_git(agent_tree, "rev-parse", "HEAD").strip()
    write(agent_tree, {"calc.py": FIXED_ADD, "tests/check_1.py": "print('ok')\n"})
    patch = extract_patch(agent_tree, start)
    loaded = load_corpus(corpus).require_ok()
    result = evaluate_task_patch(loaded.tasks["calc/t1/f1"], loaded.task_files["calc/t1/f1"],
                                 repo, patch, LocalSandbox(),
                                 TestFileRules.from_patterns(loaded.repos["calc"].test_patterns))
    assert result.status == "pass" and result.features == [1] and result.feature2 is None
    assert [d.path for d in result.patches["solo"].dropped] == ["tests/check_1.py"]


def test_table_marks_a_timeout_apart_from_a_wrong_answer() -> None:
    from copeca_action._cli.eval import _mark
    from copeca_action.evaluate._models import FeatureResult

    assert _mark(FeatureResult(feature_id=1, passed=False, timed_out=True)) == "✗ timeout"
    assert _mark(FeatureResult(feature_id=1, passed=False, exit_code=1)) == "✗"
    assert _mark(FeatureResult(feature_id=1, passed=True, exit_code=0)) == "✓"


def test_check_task_refuses_a_fix_the_grader_would_drop(repo: Path, tmp_path: Path) -> None:
    """A planted bug in a test file: the real fix is a test-file change, which grading never
    applies, so no run could be graded correct."""
    from copeca_action.evaluate import LocalSandbox, check_task
    from copeca_action.scenario import Task

    task = Task.model_validate({
        "id": "calc/bug-in-tests", "repo": "calc", "type": "edit", "category": "fix",
        "language": "python", "prompt": "The multiplication test is wrong. Fix it.",
        "source": {"origin": "original"},
        "grading": {"test": {"mutations": [{"file": "tests/test_visible.py",
                                            "search": "== 6", "replace": "== 7"}],
                             "command": [sys.executable, "-m", "pytest", "-q", "-p",
                                         "no:cacheprovider", "tests/test_visible.py"]}}})
    result = check_task(task, tmp_path / "task.yaml", repo, LocalSandbox())
    assert not result.ok
    fixed = result.steps[1]
    assert fixed.name == "real fix, sanitised and applied" and not fixed.ok
    assert "tests/test_visible.py (tests/)" in fixed.detail


def test_check_task_refuses_a_fix_beyond_the_bounds_grading_reads(repo: Path,
                                                                  tmp_path: Path) -> None:
    """A planted bug whose real fix is over 32 MiB of diff: grading would never read a run's
    fix, so no run could be graded correct; the check names the bound, the tests never run."""
    from copeca_action.evaluate import LocalSandbox, check_task
    from copeca_action.evaluate._patch import MAX_PATCH_BYTES
    from copeca_action.scenario import Task

    padding = "# padding line of the planted bug\n" * (MAX_PATCH_BYTES // 34 + 1)
    task = Task.model_validate({
        "id": "calc/huge-fix", "repo": "calc", "type": "edit", "category": "fix",
        "language": "python", "prompt": "Fix the add function.", "source": {"origin": "original"},
        "grading": {"test": {"mutations": [{"file": "calc.py", "search": "def mul",
                                            "replace": padding + "def mul"}],
                             "command": ["sh", "-c", "echo ran > /dev/null"]}}})
    result = check_task(task, tmp_path / "task.yaml", repo, LocalSandbox())
    assert not result.ok
    fixed = result.steps[1]
    assert fixed.name == "real fix, sanitised and applied" and not fixed.ok
    assert "MiB (the bound is 32 MiB)" in fixed.detail and "no run could pass" in fixed.detail


def test_eval_records_the_apply_options_it_was_given(repo: Path, corpus: Path, logs: Path) -> None:
    assert run_cli("eval", "-n", "exp", "--logs", str(logs), "--corpus", str(corpus),
                   "--repo-dir", str(repo), "-t", "t1", "-f", "1,2", "--no-fuzz",
                   "--no-ignore-whitespace") == 1  # f2_f1 lacks its agent1.patch: an error
    result = json.loads((logs / "exp/solo/calc/t1/f1_f2/eval.json").read_text())
    assert result["patches"]["solo"]["apply_options"] == {"ignore_whitespace": False,
                                                          "fuzz": None}
    assert run_cli("eval", "-n", "exp", "--logs", str(logs), "--corpus", str(corpus),
                   "--repo-dir", str(repo), "--fuzz", "-1") == 2


def test_an_experiment_without_matching_runs_is_refused_by_name(
        corpus: Path, logs: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """No run folder at all, or filters that match none: an error naming the folder and
    the filters, not an empty summary that passes."""
    (logs / "empty").mkdir()
    assert run_cli("eval", "-n", "empty", "--logs", str(logs), "--corpus", str(corpus)) == 2
    err = capsys.readouterr().err
    assert f"no run folder in {logs / 'empty'}" in err and "fA_fB" in err
    assert not (logs / "empty" / "eval_summary.json").exists()
    assert run_cli("eval", "-n", "exp", "--logs", str(logs), "--corpus", str(corpus),
                   "-t", "no-such-task", "-f", "1,2") == 2
    assert "matching -t no-such-task, -f 1,2" in capsys.readouterr().err


@pytest.mark.parametrize("fuzz", ["-1", "101", str(10**20)])
def test_fuzz_outside_what_patch_takes_is_refused(corpus: Path, logs: Path, fuzz: str,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    assert run_cli("eval", "-n", "exp", "--logs", str(logs), "--corpus", str(corpus),
                   "--fuzz", fuzz) == 2
    assert f"--fuzz {fuzz}: expected 0 to 100" in capsys.readouterr().err
