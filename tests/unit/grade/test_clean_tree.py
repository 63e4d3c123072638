"""Edit runs graded on a clean tree: real git, real pytest, the real local sandbox.

Each gaming attempt is shown to work in the agent's own worktree (the old way of grading), so
these tests fail if the defence goes away, not only if the attack is broken.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from copeca_action import scenario as sc
from copeca_action.evaluate import BaseRepo, LocalSandbox, TestFileRules
from copeca_action.grade import grade_test, grade_test_clean
from copeca_action.workspace import capture_patch

CALC = "def add(a, b):\n    return a + b\n"
BUGGY = "def add(a, b):\n    return a - b\n"
TEST = ("from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n\n\n"
        "def test_add_zero():\n    assert add(0, 4) == 4\n")
ENV = {"PATH": "/usr/bin:/bin", "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}
PYTEST = ["{python}", "-m", "pytest", "-q", "-rA", "-p", "no:cacheprovider", "tests/test_calc.py"]
FORCING_CONFTEST = '''import pytest


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    outcome.get_result().outcome = "passed"
'''


def git(cwd: Path, *argv: str) -> str:
    env = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@t", "PATH": "/usr/bin:/bin", "HOME": str(cwd)}
    return subprocess.run(["git", *argv], cwd=cwd, env=env, check=True, capture_output=True,
                          text=True).stdout.strip()


@pytest.fixture
def start(tmp_path: Path) -> tuple[Path, str]:
    """A repository whose start commit has the bug planted (as the engine commits it)."""
    root = tmp_path / "wt"
    (root / "tests").mkdir(parents=True)
    (root / "calc.py").write_text(CALC)
    (root / "tests" / "test_calc.py").write_text(TEST)
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "clean snapshot")
    (root / "calc.py").write_text(BUGGY)
    git(root, "commit", "-q", "-am", "planted")
    return root, git(root, "rev-parse", "HEAD")


def agent(root: Path, files: dict[str, str]) -> str:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return git(root, "rev-parse", "HEAD")


def grade(start: tuple[Path, str], tmp_path: Path, spec: sc.TestGrading | None = None,
          rules: TestFileRules | None = None, sandbox: LocalSandbox | None = None):
    root, commit = start
    patch = capture_patch(root, commit, root / ".git")
    return grade_test_clean(BaseRepo(root, commit), patch, spec or sc.TestGrading(command=PYTEST),
                            ENV, {"python": sys.executable}, rules=rules or TestFileRules(),
                            scratch=tmp_path / "scratch", sandbox=sandbox)


def in_worktree(start: tuple[Path, str]) -> bool:
    """What grading in the agent's worktree with exit code 0 alone said (the old way)."""
    ran = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                          "tests/test_calc.py"], cwd=start[0], capture_output=True, check=False,
                         env={**ENV, "PYTHONDONTWRITEBYTECODE": "1"})
    return ran.returncode == 0


def test_a_real_fix_is_correct_in_the_sandbox(start: tuple[Path, str], tmp_path: Path) -> None:
    agent(start[0], {"calc.py": CALC})
    result = grade(start, tmp_path, sandbox=LocalSandbox())
    assert result.correct, result.detail
    assert result.detail["tests_passed"] == 2 and not result.detail["tests_modified"]
    assert result.detail["apply"]["strategy"] == "git-apply"
    assert result.detail["apply"]["options"] == {"ignore_whitespace": False, "fuzz": None}
    assert list((tmp_path / "scratch").iterdir()) == []  # the clean clone is gone


def test_no_change_is_wrong(start: tuple[Path, str], tmp_path: Path) -> None:
    result = grade(start, tmp_path)
    assert not result.correct and "no change left" in result.detail["reason"]


def test_an_agent_that_edits_the_test_is_wrong_and_flagged(start: tuple[Path, str],
                                                           tmp_path: Path) -> None:
    agent(start[0], {"tests/test_calc.py": TEST.replace("== 5", "== -1").replace("== 4", "== -4")})
    assert in_worktree(start)  # the weakened test passes where the agent left it
    result = grade(start, tmp_path)
    assert not result.correct and result.detail["tests_modified"]
    assert result.detail["sanitised"]["dropped"] == [{"path": "tests/test_calc.py",
                                                      "rule": "tests/"}]


def test_a_forcing_conftest_is_dropped(start: tuple[Path, str], tmp_path: Path) -> None:
    agent(start[0], {"conftest.py": FORCING_CONFTEST, "calc.py": BUGGY + "# looked at it\n"})
    assert in_worktree(start)  # the conftest turns the failures into passes there
    result = grade(start, tmp_path, sandbox=LocalSandbox())
    assert not result.correct and result.detail["tests_modified"]
    assert result.detail["tests_failed"] == 2
    assert result.detail["sanitised"]["dropped"][0]["path"] == "conftest.py"


def test_an_early_exit_zero_is_wrong(start: tuple[Path, str], tmp_path: Path) -> None:
    agent(start[0], {"calc.py": "import os\nos._exit(0)\n" + BUGGY})
    assert in_worktree(start)  # exit code 0: the old grader called it correct
    result = grade(start, tmp_path)
    assert result.detail["exit_code"] == 0 and not result.correct
    assert not result.detail["tests_modified"]
    assert "no test runner summary" in result.detail["reason"]


def test_a_runner_config_is_protected(start: tuple[Path, str], tmp_path: Path) -> None:
    agent(start[0], {"calc.py": CALC, "pytest.ini": "[pytest]\naddopts = -k nothing_at_all\n"})
    result = grade(start, tmp_path)
    assert result.correct and result.detail["tests_modified"]
    assert result.detail["sanitised"]["dropped"] == [{"path": "pytest.ini",
                                                      "rule": "protected:pytest.ini"}]


def test_a_task_protects_more_and_can_lift_a_default(start: tuple[Path, str],
                                                     tmp_path: Path) -> None:
    agent(start[0], {"calc.py": CALC, "setup.cfg": "[metadata]\nname = calc\n",
                     "data/expected.json": "{}\n"})
    rules = TestFileRules.from_patterns([], ["data/**", "!setup.cfg"])
    result = grade(start, tmp_path, rules=rules)
    assert result.correct
    assert result.detail["sanitised"]["dropped"] == [{"path": "data/expected.json",
                                                      "rule": "protected:data/**"}]
    assert "setup.cfg" in result.detail["sanitised"]["files"]


def test_named_tests_must_be_reported_passed(start: tuple[Path, str], tmp_path: Path) -> None:
    agent(start[0], {"calc.py": CALC})
    named = sc.TestGrading(command=PYTEST, tests=["test_add", "tests/test_calc.py::test_add_zero"])
    assert grade(start, tmp_path, named).correct
    absent = sc.TestGrading(command=PYTEST, tests=["test_add_negative"])
    result = grade(start, tmp_path, absent)
    assert not result.correct and "test_add_negative" in result.detail["reason"]


def test_a_filter_that_selects_no_test_is_wrong(start: tuple[Path, str],
                                                tmp_path: Path) -> None:
    agent(start[0], {"calc.py": CALC})
    nothing = sc.TestGrading(command=[*PYTEST, "-k", "no_such_test", "||", "true"])
    shell = sc.TestGrading(command=["sh", "-c", " ".join(nothing.command)])
    result = grade(start, tmp_path, shell)
    assert result.detail["exit_code"] == 0 and not result.correct
    assert result.detail["reason"] == "no test ran (0 passed)"


def test_grade_test_still_runs_a_tree_as_it_is(start: tuple[Path, str]) -> None:
    agent(start[0], {"calc.py": CALC})
    result = grade_test(start[0], sc.TestGrading(command=PYTEST), ENV,
                        {"python": sys.executable})
    assert result.correct and result.detail["tests_passed"] == 2


def test_artefacts_of_running_the_tests_are_no_test_change(start: tuple[Path, str],
                                                            tmp_path: Path) -> None:
    # the agent ran the tests itself: bytecode under tests/ and a pytest cache are left behind
    agent(start[0], {"calc.py": CALC})
    subprocess.run([sys.executable, "-m", "pytest", "-q", "tests/test_calc.py"], cwd=start[0],
                   env=ENV, capture_output=True, check=True)
    assert list((start[0] / "tests").glob("__pycache__/*.pyc"))
    result = grade(start, tmp_path)
    assert result.correct and not result.detail["tests_modified"]
    assert any(p.startswith("tests/__pycache__/") for p in result.detail["sanitised"]["ignored"])


def test_a_forged_summary_at_exit_is_wrong(start: tuple[Path, str], tmp_path: Path) -> None:
    # code the tests import prints a passing summary when the interpreter exits and turns
    # pytest's exit code 1 into 0: the failure pytest reported before it still counts
    forger = ("import atexit, os, sys\n\n\ndef _forge():\n"
              "    print('2 passed in 0.01s')\n    sys.stdout.flush()\n    os._exit(0)\n\n\n"
              "atexit.register(_forge)\n")
    agent(start[0], {"calc.py": forger + BUGGY})
    assert in_worktree(start)  # exit code 0: the old grader called it correct
    result = grade(start, tmp_path)
    assert result.detail["exit_code"] == 0 and not result.correct
    assert "reports a failure" in result.detail["reason"]


def test_a_change_beyond_the_bounds_is_wrong_unread(start: tuple[Path, str],
                                                    tmp_path: Path) -> None:
    """The fix and 5,001 generated files: graded incorrect with the bound named, nothing
    applied, no clean clone made (the agent's output, not the harness's failure)."""
    from copeca_action.evaluate._patch import MAX_PATCH_FILES

    agent(start[0], {"calc.py": CALC, **{f"gen/f{i}.txt": f"{i}\n"
                                         for i in range(MAX_PATCH_FILES + 1)}})
    result = grade(start, tmp_path, sandbox=LocalSandbox())
    assert not result.correct and result.detail["patch_too_large"] is True
    assert f"files (the bound is {MAX_PATCH_FILES})" in result.detail["reason"]
    assert "apply" not in result.detail and "exit_code" not in result.detail
    assert not (tmp_path / "scratch").exists()
