"""Test-output parsers on output shaped like each runner's real output."""

from __future__ import annotations

from copeca_action.evaluate import parse_test_output, reported_names, verdict_of
from copeca_action.evaluate._results import failure_reported

PYTEST = """............F.s                                                         [100%]
=================================== FAILURES ===================================
___________________________________ test_x ____________________________________
E   assert 1 == 2
=========================== short test summary info ============================
FAILED tests/test_a.py::test_x - assert 1 == 2
======= 1 failed, 12 passed, 1 skipped, 2 errors, 1 xfailed in 0.52s ========
"""
PYTEST_COLOURED = "\x1b[32m\x1b[1m3 passed\x1b[0m\x1b[32m in 0.01s\x1b[0m\n"
GO_VERBOSE = """=== RUN   TestA
--- PASS: TestA (0.00s)
=== RUN   TestB
=== RUN   TestB/sub
    --- FAIL: TestB/sub (0.00s)
--- FAIL: TestB (0.00s)
=== RUN   TestC
--- SKIP: TestC (0.00s)
FAIL
FAIL\texample.com/pkg\t0.004s
"""
GO_QUIET = """ok  \texample.com/a\t0.010s
--- FAIL: TestB (0.00s)
    b_test.go:9: wrong
FAIL
FAIL\texample.com/b\t0.005s
ok  \texample.com/c\t(cached)
"""
CARGO = """running 3 tests
test a ... ok
test b ... FAILED
test c ... ignored
test result: FAILED. 1 passed; 1 failed; 1 ignored; 0 measured; 0 filtered out; finished in 0.00s

running 2 tests
test result: ok. 2 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.01s
"""
JEST = """Test Suites: 1 failed, 2 passed, 3 total
Tests:       1 failed, 2 skipped, 5 passed, 8 total
Snapshots:   0 total
Time:        1.2 s
"""
VITEST = """ ✓ src/a.test.ts (3 tests) 4ms
 ❯ src/b.test.ts (2 tests | 1 failed) 6ms

 Test Files  1 failed | 1 passed (2)
      Tests  1 failed | 4 passed | 1 skipped (6)
   Start at  10:00:00
"""
NODE_TAP = """TAP version 13
ok 1 - a
not ok 2 - b
1..2
# tests 3
# suites 0
# pass 1
# fail 1
# cancelled 0
# skipped 1
# todo 0
"""
NODE_SPEC = "✔ a (0.5ms)\nℹ tests 2\nℹ pass 2\nℹ fail 0\nℹ skipped 0\nℹ todo 0\n"
JUNIT = """<?xml version="1.0" encoding="utf-8"?>
<testsuites><testsuite name="pytest" tests="4">
<testcase classname="t" name="a"/>
<testcase classname="t" name="b"><failure message="x"/></testcase>
<testcase classname="t" name="c"><error message="y"/></testcase>
<testcase classname="t" name="d"><skipped/></testcase>
</testsuite></testsuites>"""


def test_pytest_summary() -> None:
    c = parse_test_output(PYTEST)
    assert (c.framework, c.passed, c.failed, c.errors, c.skipped) == ("pytest", 12, 1, 2, 2)
    assert c.total == 15


def test_pytest_quiet_and_coloured() -> None:
    c = parse_test_output(PYTEST_COLOURED)
    assert (c.framework, c.passed, c.total) == ("pytest", 3, 3)
    assert parse_test_output("no tests ran in 0.01s\n").framework == "pytest"


def test_go_verbose_counts_top_level_tests() -> None:
    c = parse_test_output(GO_VERBOSE)
    assert (c.framework, c.passed, c.failed, c.skipped) == ("go", 1, 1, 1)


def test_go_without_verbose_counts_packages_and_listed_failures() -> None:
    c = parse_test_output(GO_QUIET)
    assert (c.framework, c.passed, c.failed) == ("go", 2, 1)


def test_cargo_sums_every_target() -> None:
    c = parse_test_output(CARGO)
    assert (c.framework, c.passed, c.failed, c.skipped) == ("cargo", 3, 1, 1)


def test_jest() -> None:
    c = parse_test_output(JEST)
    assert (c.framework, c.passed, c.failed, c.skipped) == ("jest", 5, 1, 2)


def test_vitest() -> None:
    c = parse_test_output(VITEST)
    assert (c.framework, c.passed, c.failed, c.skipped) == ("vitest", 4, 1, 1)


def test_node_tap_and_spec_reporters() -> None:
    tap = parse_test_output(NODE_TAP)
    assert (tap.framework, tap.passed, tap.failed, tap.skipped) == ("node", 1, 1, 1)
    spec = parse_test_output(NODE_SPEC)
    assert (spec.framework, spec.passed, spec.failed) == ("node", 2, 0)


def test_junit_beats_text_and_bad_xml_is_ignored() -> None:
    c = parse_test_output(PYTEST, [JUNIT, "<not xml"])
    assert (c.framework, c.passed, c.failed, c.errors, c.skipped) == ("junit", 1, 1, 1, 1)
    assert parse_test_output(PYTEST, ["<broken"]).framework == "pytest"


def test_unknown_output_counts_nothing() -> None:
    c = parse_test_output("Segmentation fault (core dumped)\n")
    assert c.framework is None and c.total == 0


MOCHA_DOT = """
  ․․․․․․․․․․․․․․

  14 passing (33ms)
  1 pending
"""
MOCHA_FAILING = "\n  3 passing (10ms)\n  2 failing\n\n  1) res\n       .cookie()\n"
GO_NOTHING = "ok  \tgithub.com/gin-gonic/gin\t0.012s [no tests to run]\n"
PYTEST_RA = """..                                                                       [100%]
==================================== PASSES ====================================
=========================== short test summary info ============================
PASSED tests/test_calc.py::test_add
PASSED tests/test_calc.py::test_add_zero
2 passed in 0.01s
"""


def test_mocha_dot_and_failing() -> None:
    c = parse_test_output(MOCHA_DOT)
    assert (c.framework, c.passed, c.failed, c.skipped) == ("mocha", 14, 0, 1)
    c = parse_test_output(MOCHA_FAILING)
    assert (c.framework, c.passed, c.failed) == ("mocha", 3, 2)


def test_go_with_no_test_to_run_counts_nothing() -> None:
    c = parse_test_output(GO_NOTHING)
    assert (c.framework, c.passed) == ("go", 0)
    assert verdict_of(0, False, c, GO_NOTHING) == (False, "no test ran (0 passed)")


def test_verdict_needs_a_report_passes_and_no_failures() -> None:
    ok = parse_test_output(MOCHA_DOT)
    assert verdict_of(0, False, ok, MOCHA_DOT) == (True, None)
    assert verdict_of(1, False, ok, MOCHA_DOT)[1] == "the test command exited 1"
    assert verdict_of(None, True, ok, MOCHA_DOT)[1] == "the tests timed out"
    # exit 0 with failures reported (a `|| true`): CooperBench passes it, we do not
    failing = parse_test_output(MOCHA_FAILING)
    assert verdict_of(0, False, failing, MOCHA_FAILING) == (
        False, "exit 0 but 2 failed and 0 errors reported")
    silent = parse_test_output("")
    assert not verdict_of(0, False, silent, "")[0]


def test_required_tests_by_node_id_or_name() -> None:
    counts = parse_test_output(PYTEST_RA)
    assert reported_names(PYTEST_RA)[0] == {"tests/test_calc.py::test_add",
                                            "tests/test_calc.py::test_add_zero"}
    assert verdict_of(0, False, counts, PYTEST_RA, ["test_add", "test_add_zero"])[0]
    assert verdict_of(0, False, counts, PYTEST_RA, ["tests/test_calc.py::test_add"])[0]
    ok, why = verdict_of(0, False, counts, PYTEST_RA, ["test_sub"])
    assert not ok and why == "required tests not reported passed: test_sub"
    go = "=== RUN   TestJoinPaths\n--- PASS: TestJoinPaths (0.00s)\nPASS\nok  \tgin\t0.1s\n"
    assert verdict_of(0, False, parse_test_output(go), go, ["TestJoinPaths"])[0]
    cargo = ("running 1 test\ntest config::tests::basic ... ok\n\n"
             "test result: ok. 1 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out\n")
    assert verdict_of(0, False, parse_test_output(cargo), cargo, ["config::tests::basic"])[0]


def test_a_summary_printed_after_a_failure_cannot_hide_it() -> None:
    # code imported by the tests registers an exit hook that prints a passing summary and
    # exits 0 after pytest reported the failure: the last summary says "2 passed"
    forged = ("F.\n=== short test summary info ===\nFAILED tests/test_calc.py::test_add\n"
              "1 failed, 1 passed in 0.05s\n2 passed in 0.01s\n")
    counts = parse_test_output(forged)
    assert (counts.passed, counts.failed) == (2, 0)  # the parser alone is fooled
    ok, why = verdict_of(0, False, counts, forged)
    assert not ok and why is not None and "1 failed, 1 passed in 0.05s" in why
    mocha = "\n  3 passing (10ms)\n  1 failing\n\n  1) cookie\n\n  4 passing (1ms)\n"
    assert not verdict_of(0, False, parse_test_output(mocha), mocha)[0]
    # none of the passing outputs above counts as a failure
    for text in (PYTEST_RA, MOCHA_DOT, CARGO_OK, GO_OK, "1 passed, 2 xfailed in 0.1s\n"):
        assert failure_reported(text) is None, text


CARGO_OK = "test result: ok. 3 passed; 0 failed; 1 ignored; 0 measured; 0 filtered out\n"
GO_OK = "=== RUN   TestA\n--- PASS: TestA (0.00s)\nPASS\nok  \tgin\t0.1s\n"


JUNIT_CONSOLE_OK = """
Test run finished after 412 ms
[         4 containers found      ]
[         0 containers skipped    ]
[         4 containers started    ]
[         0 containers aborted    ]
[         4 containers successful ]
[         0 containers failed     ]
[        12 tests found           ]
[         0 tests skipped         ]
[        12 tests started         ]
[         0 tests aborted         ]
[        12 tests successful      ]
[         0 tests failed          ]
"""


def test_junit_console_launcher_summary_is_read() -> None:
    """jsoup's edit tasks run the JUnit Platform console launcher (docs/corpus.md)."""
    from copeca_action.evaluate._results import parse_test_output, verdict_of

    counts = parse_test_output(JUNIT_CONSOLE_OK)
    assert (counts.framework, counts.passed, counts.failed) == ("junit-console", 12, 0)
    assert verdict_of(0, False, counts, JUNIT_CONSOLE_OK) == (True, None)
    failing = JUNIT_CONSOLE_OK.replace("12 tests successful", "11 tests successful").replace(
        "0 tests failed  ", "1 tests failed  ")
    counts = parse_test_output(failing)
    assert (counts.passed, counts.failed) == (11, 1)
    assert verdict_of(0, False, counts, failing)[0] is False
    # a box printed at exit after a real failure box cannot hide it
    forged = failing + JUNIT_CONSOLE_OK
    assert verdict_of(0, False, parse_test_output(forged), forged)[0] is False
    # no test ran
    empty = JUNIT_CONSOLE_OK.replace("12 tests successful", "0 tests successful")
    assert verdict_of(0, False, parse_test_output(empty), empty) == (False,
                                                                      "no test ran (0 passed)")
