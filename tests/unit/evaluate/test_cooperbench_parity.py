"""CooperBench's evaluator side by side with ours, rebuilt as fixtures on a real repository.

Each case is a row of docs/patch-evaluation.md ("Where we differ from CooperBench"): where the
two now agree the test pins the shared verdict; where we differ on purpose it pins ours and
says what CooperBench's evaluator (src/cooperbench/eval/sandbox.py) gives.
"""

from __future__ import annotations

from pathlib import Path

from evalrepo import CALC, FIXED_ADD, PYTEST, QUIET, TEST_ADD, MakeDiff

from copeca_action.evaluate import (
    ApplyOptions,
    FeatureSpec,
    LocalSandbox,
    apply_patch,
    base_repo,
    clone_tree,
    evaluate_coop,
    evaluate_solo,
)

SANDBOX = LocalSandbox()
FORCING_CONFTEST = '''import pytest


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    outcome.get_result().outcome = "passed"
'''


def solo(repo: Path, feature: FeatureSpec, patch: str):  # type: ignore[no-untyped-def]
    return evaluate_solo(base_repo(repo), [feature], patch, SANDBOX, repo="calc", task_id="t")


def test_exit_zero_with_no_test_run_fails_in_both(repo: Path, make_diff: MakeDiff) -> None:
    # CooperBench: passed = exit 0 and tests_passed > 0; an early os._exit(0) passes nothing
    feature = FeatureSpec(id=1, tests_patch=make_diff({"tests/test_add.py": TEST_ADD}),
                          command=[*PYTEST, "tests/test_add.py"], timeout_s=60, env=QUIET)
    early = make_diff({"calc.py": "import os\nos._exit(0)\n" + CALC})
    result = solo(repo, feature, early)
    assert result.feature1 is not None and result.feature1.exit_code == 0
    assert not result.both_passed and result.error is None
    assert "no test runner summary" in (result.feature1.reason or "")


def test_a_binary_section_without_payload_is_refused_in_both(repo: Path,
                                                              make_diff: MakeDiff) -> None:
    fix = make_diff({"calc.py": FIXED_ADD})
    hollow = fix + ("diff --git a/logo.png b/logo.png\nnew file mode 100644\n"
                    "index 0000000..3b18e51\nBinary files /dev/null and b/logo.png differ\n")
    feature = FeatureSpec(id=1, tests_patch=make_diff({"tests/test_add.py": TEST_ADD}),
                          command=[*PYTEST, "tests/test_add.py"], timeout_s=60, env=QUIET)
    result = solo(repo, feature, hollow)
    assert not result.both_passed and not result.patches["solo"].applied
    assert "binary change without payload" in result.patches["solo"].apply_log
    assert "logo.png" in result.patches["solo"].apply_log
    assert solo(repo, feature, fix).both_passed  # the same fix without it passes


def test_a_forcing_conftest_is_dropped_here(repo: Path, make_diff: MakeDiff) -> None:
    # CooperBench's rule has no conftest.py: it applies it, and the wrong fix passes there
    feature = FeatureSpec(id=1, tests_patch=make_diff({"tests/test_add.py": TEST_ADD}),
                          command=[*PYTEST, "tests/test_add.py"], timeout_s=60, env=QUIET)
    cheat = make_diff({"conftest.py": FORCING_CONFTEST, "calc.py": CALC + "# tried\n"})
    result = solo(repo, feature, cheat)
    assert not result.both_passed
    assert [d.path for d in result.patches["solo"].dropped] == ["conftest.py"]


def test_django_tests_py_is_a_test_file_in_both(repo: Path, make_diff: MakeDiff) -> None:
    feature = FeatureSpec(id=1, tests_patch=make_diff({"tests/test_add.py": TEST_ADD}),
                          command=[*PYTEST, "tests/test_add.py"], timeout_s=60, env=QUIET)
    patch = make_diff({"calc.py": FIXED_ADD, "app/tests.py": "def test_x():\n    pass\n"})
    result = solo(repo, feature, patch)
    assert result.both_passed
    assert [d.rule for d in result.patches["solo"].dropped] == ["tests.py"]


def test_a_quote_escape_in_content_survives_here(repo: Path, make_diff: MakeDiff,
                                                 tmp_path: Path) -> None:
    # CooperBench rewrites every `'\''` in a patch to `'`, which corrupts a file whose
    # content holds it (a shell script): the patch no longer matches. We keep bytes as they are.
    script = "#!/bin/sh\necho 'it'\\''s fine'\n"
    patch = make_diff({"run.sh": script})
    tree = clone_tree(base_repo(repo), tmp_path / "t")
    assert apply_patch(tree, patch).applied
    assert (tree / "run.sh").read_text() == script


def test_leniencies_are_explicit_and_recorded(repo: Path, make_diff: MakeDiff,
                                              tmp_path: Path) -> None:
    # context that differs only in whitespace: CooperBench's `git apply --ignore-whitespace`
    # step takes it; the strict options (edit tasks' run diffs) refuse it
    patch = make_diff({"calc.py": FIXED_ADD}).replace("\n def mul(a, b):", "\n def  mul(a, b):")
    tree = clone_tree(base_repo(repo), tmp_path / "t")
    lenient = apply_patch(tree, patch, ApplyOptions(ignore_whitespace=True, fuzz=None))
    assert lenient.applied and lenient.strategy == "git-apply-ignore-whitespace"
    assert lenient.options == {"ignore_whitespace": True, "fuzz": None}
    tree2 = clone_tree(base_repo(repo), tmp_path / "t2")
    strict = apply_patch(tree2, patch, ApplyOptions.strict())
    assert not strict.applied and strict.options == {"ignore_whitespace": False, "fuzz": None}


def test_coop_merges_agent1_into_agent2_as_cooperbench(repo: Path, make_diff: MakeDiff) -> None:
    # Both agents append a different LIMIT at the end of calc.py: a conflict; the union merge
    # keeps the checked-out side's lines first. Merging agent1 into agent2 (CooperBench's
    # order) leaves agent1's line last, so agent1's value wins; the reverse order (ours
    # before) gave agent2's.
    check = ("from calc import LIMIT\n\n\ndef test_limit():\n    assert LIMIT == 1\n")
    feature1 = FeatureSpec(id=1, tests_patch=make_diff({"tests/test_limit.py": check}),
                           command=[*PYTEST, "tests/test_limit.py"], timeout_s=60, env=QUIET)
    feature2 = FeatureSpec(id=2, tests_patch=make_diff({"tests/test_add.py": TEST_ADD}),
                           command=[*PYTEST, "tests/test_add.py"], timeout_s=60, env=QUIET)
    agent1 = make_diff({"calc.py": FIXED_ADD + "\nLIMIT = 1\n"})
    agent2 = make_diff({"calc.py": FIXED_ADD + "\nLIMIT = 2\n"})
    result = evaluate_coop(base_repo(repo), [feature1, feature2], [agent1, agent2], SANDBOX,
                           repo="calc", task_id="t")
    assert result.merge is not None and result.merge.status == "conflict"
    assert result.merge.strategy == "union"
    assert result.merge.diff.index("+LIMIT = 2") < result.merge.diff.index("+LIMIT = 1")
    assert result.both_passed
