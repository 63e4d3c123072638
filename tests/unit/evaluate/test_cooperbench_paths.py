"""Which paths are test files, ours beside CooperBench's rule, path by path.

The `cooperbench` column is what CooperBench's filter (`_is_test_path` in
src/cooperbench/eval/sandbox.py) decides for each path, written down as data: a directory named
tests/test/__tests__/spec/testdata, or a base name test_*, *_test.*, *.test.*, *.spec.*,
*Test(s).java/kt/cs/scala, test.py or tests.py. Every disagreement must be one documented in
docs/patch-evaluation.md ("Where we differ from CooperBench").
"""

from __future__ import annotations

import pytest

from copeca_action.evaluate import TestFileRules

RULES = TestFileRules()

CASES: list[tuple[str, bool, bool]] = [
    # path, ours (dropped), cooperbench (dropped)
    ("tests/test_api.py", True, True),
    ("pkg/test_api.py", True, True),
    ("pkg/api_test.py", True, True),
    ("server/handler_test.go", True, True),
    ("src/a.test.tsx", True, True),
    ("src/b.spec.mjs", True, True),
    ("src/__tests__/a.js", True, True),
    ("crates/x/tests/it.rs", True, True),
    ("spec/models/user_spec.rb", True, True),
    ("pkg/testdata/golden.txt", True, True),
    ("src/test/java/FooTest.java", True, True),
    ("src/FooTests.cs", True, True),
    ("app/tests.py", True, True),
    ("test/index.js", True, True),
    ("calc.py", False, False),
    ("fastapi/utils.py", False, False),
    ("lib/response.js", False, False),
    ("context.go", False, False),
    ("crates/core/main.rs", False, False),
    ("src/protest/x.py", False, False),
    ("latests.py", False, False),
    ("testing.py", False, False),
    ("attest.go", False, False),
    ("testsuite/x.py", False, False),
    ("src/Contest.java", False, False),
    ("README.md", False, False),
    # deliberate differences
    ("conftest.py", True, False),          # pytest loads it before any test: ours drops it
    ("docs/conftest.py", True, False),
    ("pytest.ini", True, False),           # protected runner configuration
    ("pyproject.toml", True, False),
    ("package.json", True, False),
    ("sitecustomize.py", True, False),
    ("tools/test.py", False, True),        # pytest does not collect test.py
    ("pkg/test_helpers.go", False, True),  # Go: only *_test.go is a test file
    ("src/parser_test.rs", False, True),   # Rust: a module like any other
    ("ui/button.test.snap", False, True),  # .test. with a non-JS extension
]
DIFFERENCES = {"conftest.py", "docs/conftest.py", "pytest.ini", "pyproject.toml",
               "package.json", "sitecustomize.py", "tools/test.py", "pkg/test_helpers.go",
               "src/parser_test.rs", "ui/button.test.snap"}


@pytest.mark.parametrize(("path", "ours", "theirs"), CASES, ids=[c[0] for c in CASES])
def test_path_rule(path: str, ours: bool, theirs: bool) -> None:
    assert (RULES.classify(path) is not None) == ours


def test_disagreements_are_exactly_the_documented_ones() -> None:
    assert len(CASES) >= 36
    assert {p for p, ours, theirs in CASES if ours != theirs} == DIFFERENCES
