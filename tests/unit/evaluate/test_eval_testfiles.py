"""Which paths count as test files, including look-alikes and per-repo globs."""

from __future__ import annotations

import pytest

from copeca_action.evaluate import TestFileRules

RULES = TestFileRules()


@pytest.mark.parametrize(("path", "rule"), [
    ("tests/test_x.py", "tests/"),
    ("pkg/tests/helpers.py", "tests/"),
    ("test/unit/a.go", "test/"),
    ("src/__tests__/a.js", "__tests__/"),
    ("crates/core/tests/integration.rs", "tests/"),
    ("pkg/test_api.py", "test_*.py"),
    ("test_helpers.py", "test_*.py"),
    ("pkg/api_test.py", "*_test.py"),
    ("conftest.py", "conftest.py"),
    ("docs/conftest.py", "conftest.py"),
    ("server/handler_test.go", "*_test.go"),
    ("src/a.test.js", "*.test.[jt]sx?"),
    ("src/a.test.tsx", "*.test.[jt]sx?"),
    ("src/a.test.mjs", "*.test.[jt]sx?"),
    ("src/a.spec.ts", "*.spec.[jt]sx?"),
    ("src/a.spec.jsx", "*.spec.[jt]sx?"),
])
def test_test_files_are_recognised(path: str, rule: str) -> None:
    assert RULES.classify(path) == rule


@pytest.mark.parametrize("path", [
    "latests.py",           # ends in "tests.py" but is no test module
    "pkg/testing.py",
    "pkg/testhelpers/__init__.py",
    "pkg/helpers_for_tests.py",
    "contest.py",
    "src/attest.go",
    "src/latest_test.go.orig",
    "src/a.testing.js",
    "src/test.js",          # a module named `test`, not a `*.test.js` file
    "src/protest/x.py",     # a directory merely containing "test"
    "testsuite/x.py",
    "src/spec.ts",
    "README.md",
])
def test_look_alikes_are_not_test_files(path: str) -> None:
    assert RULES.classify(path) is None


def test_helpers_package_under_test_name_is_a_test_file() -> None:
    # Decision (docs/patch-evaluation.md): pytest collects `test_*.py`, so a `test_helpers.py`
    # module is a test file even when it holds only helpers; a `test_helpers/` folder is not
    # a test folder by itself, but its `test_*.py` modules are.
    assert RULES.classify("pkg/test_helpers.py") == "test_*.py"
    assert RULES.classify("pkg/test_helpers/util.py") is None
    assert RULES.classify("pkg/test_helpers/test_util.py") == "test_*.py"


def test_repo_globs_add_rules_and_bang_exempts() -> None:
    rules = TestFileRules.from_patterns(["fixtures/**", "*.snap", "!django/test/**"])
    assert rules.classify("fixtures/models/user.json") == "fixtures/**"
    assert rules.classify("spec/models/user_spec.rb") == "spec/"  # built in since CooperBench
    assert rules.classify("ui/__snapshots__/a.snap") == "*.snap"
    assert rules.classify("django/test/client.py") is None
    assert rules.classify("django/tests/test_x.py") == "tests/"
    assert rules.classify("lib/spec_helper.rb") is None


def test_windows_separators_and_leading_slash() -> None:
    assert RULES.classify("pkg\\tests\\a.py") == "tests/"
    assert RULES.classify("/tests/a.py") == "tests/"


def test_cooperbench_test_file_rules_are_ours_too() -> None:
    # the cases where CooperBench's rule and ours disagreed, now agreed
    assert RULES.classify("app/tests.py") == "tests.py"  # Django's test module
    assert RULES.classify("pkg/testdata/golden.txt") == "testdata/"
    assert RULES.classify("src/main/java/FooTest.java") == "*Test.java"
    assert RULES.classify("src/FooTests.cs") == "*Test.java"
    assert RULES.classify("src/Contest.java") is None
    # deliberate differences: CooperBench treats `test.py` as a test file and not conftest.py
    assert RULES.classify("tools/test.py") is None
    assert RULES.classify("conftest.py") == "conftest.py"


def test_protected_runner_files_are_never_applied() -> None:
    assert RULES.classify("pytest.ini") == "protected:pytest.ini"
    assert RULES.classify("sub/pyproject.toml") == "protected:pyproject.toml"
    assert RULES.classify("package.json") == "protected:package.json"
    assert RULES.classify(".mocharc.yml") == "protected:.mocharc*"
    assert RULES.classify("go.mod") == "protected:go.mod"
    assert RULES.classify(".cargo/config.toml") == "protected:.cargo/**"
    assert RULES.classify("pytest.py") == "protected:/pytest.py"
    assert RULES.classify("pkg/pytest.py") is None  # only the root one shadows the runner
    assert RULES.classify("site-packages/evil.pth") == "protected:*.pth"
    lifted = TestFileRules.from_patterns([], ["!package.json", "config/*.yml"])
    assert lifted.classify("package.json") is None
    assert lifted.classify("config/app.yml") == "protected:config/*.yml"
