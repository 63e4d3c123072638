"""Solo and coop evaluation end to end on a real repo, real git, the local sandbox and pytest."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from evalrepo import CALC, FIXED_ADD, PYTEST, TEST_ADD, MakeDiff

from copeca_action.evaluate import (
    FeatureSpec,
    LocalSandbox,
    base_repo,
    evaluate_coop,
    evaluate_solo,
)

SANDBOX = LocalSandbox()
FIXED_BOTH = FIXED_ADD + "\n\ndef sub(a, b):\n    return a - b\n"


def solo(repo: Path, features: list[FeatureSpec], patch: str):  # type: ignore[no-untyped-def]
    return evaluate_solo(base_repo(repo), features, patch, SANDBOX, repo="calc", task_id="t1")


def test_solo_pass_counts_tests(repo: Path, make_diff: MakeDiff, feature_add: FeatureSpec,
                                feature_mul: FeatureSpec) -> None:
    result = solo(repo, [feature_add, feature_mul], make_diff({"calc.py": FIXED_ADD}))
    assert result.status == "pass" and result.both_passed and result.error is None
    assert result.feature1 is not None and result.feature2 is not None
    assert (result.feature1.tests_passed, result.feature1.tests_total) == (2, 2)
    assert result.feature1.framework == "pytest" and result.feature1.exit_code == 0
    assert result.feature2.tests_passed == 1
    assert result.patches["solo"].strategy == "git-apply"
    assert result.merge is None and result.setting == "solo" and result.features == [1, 2]


def test_solo_wrong_fix_is_a_failure_not_an_error(repo: Path, make_diff: MakeDiff,
                                                  feature_add: FeatureSpec) -> None:
    wrong = make_diff({"calc.py": CALC.replace("a - b", "a * b")})
    result = solo(repo, [feature_add], wrong)
    assert result.status == "fail" and result.error is None
    assert result.feature1 is not None
    assert (result.feature1.tests_passed, result.feature1.tests_failed) == (0, 2)
    assert result.feature1.exit_code == 1


def test_editing_the_tests_does_not_help(repo: Path, make_diff: MakeDiff,
                                         feature_add: FeatureSpec) -> None:
    # The agent "fixes" the test it could see and adds a conftest that skips everything.
    cheat = make_diff({"tests/test_add.py": "def test_add():\n    pass\n",
                       "conftest.py": "import pytest\n\n\ndef pytest_collection_modifyitems"
                       "(items):\n    for i in items:\n        i.add_marker(pytest.mark.skip)\n"})
    result = solo(repo, [feature_add], cheat)
    assert result.status == "fail"
    assert result.patches["solo"].empty
    assert {d.path for d in result.patches["solo"].dropped} == {"tests/test_add.py", "conftest.py"}
    assert result.feature1 is not None and "empty patch" in result.feature1.test_output


def test_patch_that_does_not_apply_is_a_failure(repo: Path, feature_add: FeatureSpec) -> None:
    bogus = ("diff --git a/calc.py b/calc.py\n--- a/calc.py\n+++ b/calc.py\n@@ -1,2 +1,2 @@\n"
             " def nope():\n-    x\n+    y\n")
    result = solo(repo, [feature_add], bogus)
    assert result.status == "fail" and not result.patches["solo"].applied
    assert result.feature1 is not None and "does not apply" in result.feature1.test_output


def test_tests_patch_that_does_not_apply_is_an_error(repo: Path, make_diff: MakeDiff) -> None:
    broken = FeatureSpec(id=1, tests_patch="diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1 +1 @@\n"
                         "-not there\n+y\n", command=PYTEST)
    result = solo(repo, [broken], make_diff({"calc.py": FIXED_ADD}))
    assert result.status == "error" and "tests patch does not apply" in (result.error or "")
    assert result.feature1 is None


def test_missing_test_command_is_an_error(repo: Path, make_diff: MakeDiff,
                                          feature_add: FeatureSpec) -> None:
    gone = FeatureSpec(id=1, tests_patch=feature_add.tests_patch,
                       command=["/nonexistent/bin/pytest"])
    result = solo(repo, [gone], make_diff({"calc.py": FIXED_ADD}))
    assert result.status == "error" and "command not found" in (result.error or "")


def test_a_patch_that_loops_forever_is_killed_and_fails(repo: Path, make_diff: MakeDiff,
                                                        feature_add: FeatureSpec) -> None:
    looping = make_diff({"calc.py": FIXED_ADD.replace("return a + b",
                                                      "while True:\n        pass")})
    quick = FeatureSpec(id=1, tests_patch=feature_add.tests_patch, command=feature_add.command,
                        timeout_s=3, env=feature_add.env)
    result = solo(repo, [quick], looping)
    assert result.status == "fail" and result.error is None
    assert result.feature1 is not None and result.feature1.timed_out
    assert result.feature1.exit_code is None and result.feature1.duration_s < 30


def test_junit_xml_counts_win_over_text(repo: Path, make_diff: MakeDiff,
                                        feature_add: FeatureSpec) -> None:
    junit = FeatureSpec(id=1, tests_patch=feature_add.tests_patch,
                        command=[*feature_add.command, "--junitxml=report.xml"],
                        junit=("report.xml",), env=feature_add.env)
    result = solo(repo, [junit], make_diff({"calc.py": FIXED_ADD}))
    assert result.feature1 is not None and result.feature1.framework == "junit"
    assert result.feature1.tests_passed == 2


# ------------------------------------------------------------------ coop


def coop(repo: Path, features: list[FeatureSpec], a: str, b: str):  # type: ignore[no-untyped-def]
    return evaluate_coop(base_repo(repo), features, [a, b], SANDBOX, repo="calc", task_id="t1")


def test_coop_clean_merge_runs_both_features(repo: Path, make_diff: MakeDiff,
                                             feature_add: FeatureSpec,
                                             feature_mul: FeatureSpec) -> None:
    a = make_diff({"calc.py": FIXED_ADD})
    b = make_diff({"extra.py": "def sub(a, b):\n    return a - b\n"})
    result = coop(repo, [feature_add, feature_mul], a, b)
    assert result.merge is not None and result.merge.status == "clean"
    assert result.merge.strategy == "naive" and "extra.py" in result.merge.diff
    assert result.both_passed and result.status == "pass"
    assert set(result.patches) == {"agent1", "agent2"}


def test_coop_conflict_records_files_and_union_fallback(repo: Path, make_diff: MakeDiff,
                                                        feature_add: FeatureSpec,
                                                        feature_mul: FeatureSpec) -> None:
    a = make_diff({"calc.py": FIXED_ADD})
    b = make_diff({"calc.py": CALC.replace("a - b", "b + a")})
    result = coop(repo, [feature_add, feature_mul], a, b)
    assert result.merge is not None and result.merge.status == "conflict"
    assert result.merge.conflicted_files == ["calc.py"]
    assert result.merge.strategy == "union"
    # The union keeps both lines; the second `return` is dead code, so add() still works.
    assert "a + b" in result.merge.diff and "b + a" in result.merge.diff
    assert result.status == "pass"


def test_coop_failed_when_a_patch_does_not_apply(repo: Path, make_diff: MakeDiff,
                                                 feature_add: FeatureSpec,
                                                 feature_mul: FeatureSpec) -> None:
    a = make_diff({"calc.py": FIXED_ADD})
    b = "diff --git a/calc.py b/calc.py\n--- a/calc.py\n+++ b/calc.py\n@@ -9 +9 @@\n-zz\n+yy\n"
    result = coop(repo, [feature_add, feature_mul], a, b)
    assert result.merge is not None and result.merge.status == "failed"
    assert result.merge.failed_patch == "agent2" and result.merge.strategy is None
    assert result.status == "fail" and result.error is None
    assert result.feature1 is not None and result.feature1.exit_code is None


def test_coop_identical_patches_merge_cleanly(repo: Path, make_diff: MakeDiff,
                                              feature_add: FeatureSpec,
                                              feature_mul: FeatureSpec) -> None:
    a = make_diff({"calc.py": FIXED_BOTH})
    result = coop(repo, [feature_add, feature_mul], a, a)
    assert result.merge is not None and result.merge.status == "clean"
    assert result.status == "pass"


@pytest.mark.skipif(sys.platform != "linux", reason="needs Linux namespaces")
def test_eval_result_round_trips_as_json(repo: Path, make_diff: MakeDiff,
                                         feature_add: FeatureSpec) -> None:
    from copeca_action.evaluate import EvalResult
    result = solo(repo, [feature_add], make_diff({"calc.py": FIXED_ADD}))
    data = result.model_dump(mode="json")
    assert list(data)[:10] == ["repo", "task_id", "features", "setting", "merge", "feature1",
                               "feature2", "both_passed", "error", "evaluated_at"]
    assert EvalResult.model_validate_json(result.model_dump_json()) == result
    assert TEST_ADD  # the hidden test source the feature used


def _many_files(make_diff: MakeDiff, count: int) -> str:
    """A real fix plus `count` new files (a model that dumped generated files in the repo)."""
    from copeca_action.evaluate._patch import MAX_PATCH_FILES

    assert count > MAX_PATCH_FILES
    return make_diff({"calc.py": FIXED_ADD, **{f"gen/f{i}.txt": f"{i}\n" for i in range(count)}})


def test_a_patch_beyond_the_bounds_is_the_agents_failure_not_an_error(
        repo: Path, make_diff: MakeDiff, feature_add: FeatureSpec) -> None:
    """The fix is in it, but so are 5,001 other files: not read, not applied, a failure named
    (an error would leave the run out of the pass rate, and the engine would run it again)."""
    from copeca_action.evaluate._patch import MAX_PATCH_FILES

    result = solo(repo, [feature_add], _many_files(make_diff, MAX_PATCH_FILES + 1))
    assert result.status == "fail" and result.error is None and not result.both_passed
    report = result.patches["solo"]
    assert report.too_large is not None and not report.applied and not report.files
    assert result.feature1 is not None and result.feature1.exit_code is None
    assert result.feature1.reason == report.too_large
    assert f"{MAX_PATCH_FILES + 2} files (the bound is {MAX_PATCH_FILES})" in report.too_large


def test_coop_a_patch_beyond_the_bounds_fails_both_features_naming_whose(
        repo: Path, make_diff: MakeDiff, feature_add: FeatureSpec,
        feature_mul: FeatureSpec) -> None:
    from copeca_action.evaluate._patch import MAX_PATCH_FILES

    a = make_diff({"calc.py": FIXED_ADD})
    result = coop(repo, [feature_add, feature_mul], a, _many_files(make_diff,
                                                                  MAX_PATCH_FILES + 1))
    assert result.status == "fail" and result.error is None and result.merge is None
    assert result.patches["agent1"].too_large is None
    assert result.patches["agent2"].too_large is not None
    for feature in (result.feature1, result.feature2):
        assert feature is not None and (feature.reason or "").startswith("agent2's patch: ")
