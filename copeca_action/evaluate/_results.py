"""Counting tests in a command's output: pytest, go test (verbose or not), cargo test,
jest, vitest, mocha, node's test runner, the JUnit Platform console launcher, and JUnit XML
reports.

A pass needs more than exit code 0 (`verdict_of`): the output must be recognised, at least
one test must have passed and none failed, and every test the task names must be among those
reported passed. So an early `os._exit(0)`, a filter that matches nothing or a runner that
never started cannot pass. A parser that finds nothing leaves the counts at zero and
`framework` None.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Callable, Iterable

from copeca_action._util.model import RecordModel


class TestCounts(RecordModel):
    """Tests seen in one run's output."""

    __test__ = False  # not a pytest class, despite the name

    passed: int = 0
    failed: int = 0
    errors: int = 0
    skipped: int = 0
    framework: str | None = None
    """Which parser recognised the output (None: none did)."""

    @property
    def total(self) -> int:
        return self.passed + self.failed + self.errors


_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


def _num(pattern: str, text: str) -> int:
    return sum(int(m) for m in re.findall(pattern, text))


def parse_pytest(text: str) -> TestCounts | None:
    """The final `N passed, M failed ... in 1.2s` line (with or without `=` rules)."""
    lines = [ln for ln in text.splitlines()
             if re.search(r"\b\d+ (passed|failed|errors?|skipped|xfailed|xpassed|deselected)\b",
                          ln) and re.search(r"\bin [\d.]+s\b", ln)]
    if not lines:
        if re.search(r"\bno tests ran in [\d.]+s\b", text):
            return TestCounts(framework="pytest")
        return None
    line = lines[-1]
    return TestCounts(passed=_num(r"(\d+) passed", line) + _num(r"(\d+) xpassed", line),
                      failed=_num(r"(\d+) failed", line),
                      errors=_num(r"(\d+) errors?\b", line),
                      skipped=_num(r"(\d+) skipped", line) + _num(r"(\d+) xfailed", line),
                      framework="pytest")


def parse_go(text: str) -> TestCounts | None:
    """Top-level `--- PASS/FAIL/SKIP: Test` lines (-v, and failures without -v); when there
    are none, package lines (`ok pkg`, `FAIL pkg`) count one each."""
    results = re.findall(r"^--- (PASS|FAIL|SKIP): ", text, re.M)
    passed = results.count("PASS")
    failed = results.count("FAIL")
    skipped = results.count("SKIP")
    if not re.search(r"^=== RUN ", text, re.M):
        # Without -v only failures are listed; passing packages add one each.
        pkg_ok = len([ln for ln in re.findall(r"^ok\s+\S+\s.*$", text, re.M)
                      if "[no tests to run]" not in ln])
        if not pkg_ok and re.search(r"^ok\s+\S+\s.*\[no tests to run\]", text, re.M):
            return TestCounts(framework="go")
        pkg_fail = len(re.findall(r"^FAIL\s+\S+\s+[\d.]+s", text, re.M))
        pkg_fail += len(re.findall(r"^FAIL\s+\S+\s+\[(?:build|setup) failed\]", text, re.M))
        if not results and not (pkg_ok or pkg_fail):
            return None
        passed += pkg_ok
        if not failed:
            failed = pkg_fail
    elif not results:
        return None
    return TestCounts(passed=passed, failed=failed, skipped=skipped, framework="go")


def parse_cargo(text: str) -> TestCounts | None:
    """Every `test result: ok. N passed; M failed; K ignored` line, summed over targets."""
    lines = re.findall(r"^test result: \w+\. (.*)$", text, re.M)
    if not lines:
        return None
    joined = "\n".join(lines)
    return TestCounts(passed=_num(r"(\d+) passed", joined), failed=_num(r"(\d+) failed", joined),
                      skipped=_num(r"(\d+) ignored", joined), framework="cargo")


def parse_jest(text: str) -> TestCounts | None:
    """Jest's `Tests: 1 failed, 2 skipped, 5 passed, 8 total`."""
    match = re.findall(r"^Tests:\s+(.*\d+ total)\s*$", text, re.M)
    if not match:
        return None
    line = match[-1]
    return TestCounts(passed=_num(r"(\d+) passed", line), failed=_num(r"(\d+) failed", line),
                      skipped=_num(r"(\d+) (?:skipped|todo|pending)", line), framework="jest")


def parse_vitest(text: str) -> TestCounts | None:
    """Vitest's `Tests  1 failed | 5 passed | 1 skipped (7)`."""
    match = re.findall(r"^\s*Tests\s+(.*)\((\d+)\)\s*$", text, re.M)
    if not match:
        return None
    line = match[-1][0]
    return TestCounts(passed=_num(r"(\d+) passed", line), failed=_num(r"(\d+) failed", line),
                      skipped=_num(r"(\d+) (?:skipped|todo)", line), framework="vitest")


def parse_node(text: str) -> TestCounts | None:
    """node --test summaries: TAP `# pass 4` or spec-reporter `ℹ pass 4` lines."""
    def field(name: str) -> int | None:
        found = re.findall(rf"^(?:#|ℹ) {name} (\d+)\s*$", text, re.M)
        return int(found[-1]) if found else None
    tests, passed, failed = field("tests"), field("pass"), field("fail")
    if tests is None or passed is None or failed is None:
        return None
    skipped = (field("skipped") or 0) + (field("todo") or 0)
    return TestCounts(passed=passed, failed=failed, skipped=skipped, framework="node")


def parse_mocha(text: str) -> TestCounts | None:
    """Mocha's epilogue (spec and dot reporters): `  12 passing (30ms)`, `  1 failing`,
    `  2 pending`."""
    passing = re.findall(r"^\s*(\d+) passing \(\d+(?:\.\d+)?m?s\)\s*$", text, re.M)
    if not passing:
        return None
    failing = re.findall(r"^\s*(\d+) failing\s*$", text, re.M)
    pending = re.findall(r"^\s*(\d+) pending\s*$", text, re.M)
    return TestCounts(passed=int(passing[-1]), failed=int(failing[-1]) if failing else 0,
                      skipped=int(pending[-1]) if pending else 0, framework="mocha")


def parse_junit_console(text: str) -> TestCounts | None:
    """The JUnit Platform console launcher's summary box (`[  12 tests successful  ]`,
    `[  0 tests failed  ]`, `[  1 tests aborted  ]`, `[  2 tests skipped  ]`); the last box
    in the output counts."""
    def field(name: str) -> int | None:
        found = re.findall(rf"^\s*\[\s*(\d+) tests {name}\s*\]\s*$", text, re.M)
        return int(found[-1]) if found else None
    successful, failed = field("successful"), field("failed")
    if successful is None or failed is None:
        return None
    return TestCounts(passed=successful, failed=failed, errors=field("aborted") or 0,
                      skipped=field("skipped") or 0, framework="junit-console")


def parse_junit(xml_texts: Iterable[str]) -> TestCounts | None:
    """JUnit XML (`<testsuites>` or `<testsuite>`): one count per `<testcase>`."""
    counts = {"passed": 0, "failed": 0, "errors": 0, "skipped": 0}
    seen = False
    for text in xml_texts:
        try:
            root = ET.fromstring(text)
        except ET.ParseError:
            continue
        for case in root.iter("testcase"):
            seen = True
            tags = {child.tag for child in case}
            if "error" in tags:
                counts["errors"] += 1
            elif "failure" in tags:
                counts["failed"] += 1
            elif "skipped" in tags:
                counts["skipped"] += 1
            else:
                counts["passed"] += 1
    return TestCounts(**counts, framework="junit") if seen else None


PARSERS: tuple[tuple[str, Callable[[str], TestCounts | None]], ...] = (
    ("cargo", parse_cargo), ("jest", parse_jest), ("vitest", parse_vitest),
    ("node", parse_node), ("mocha", parse_mocha), ("junit-console", parse_junit_console),
    ("go", parse_go), ("pytest", parse_pytest),
)
"""Tried in order; the most specific formats first (pytest's summary shape is the loosest)."""


def parse_test_output(output: str, junit: Iterable[str] = ()) -> TestCounts:
    """Counts from JUnit reports when there are any, else from the first parser that
    recognises the output."""
    from_xml = parse_junit(junit)
    if from_xml is not None:
        return from_xml
    text = _ANSI.sub("", output)
    for _, parser in PARSERS:
        counts = parser(text)
        if counts is not None:
            return counts
    return TestCounts()


_PASSED_NAME = (
    re.compile(r"^PASSED (\S+)", re.M),                    # pytest -rA
    re.compile(r"^(\S+::\S+) PASSED\b", re.M),            # pytest -v
    re.compile(r"^\s*--- PASS: (\S+) \(", re.M),          # go test -v (subtests: A/B)
    re.compile(r"^test (\S+) \.\.\. ok$", re.M),          # cargo test
    re.compile(r"^ok \d+ (?:- )?(.+?)\s*(?:# .*)?$", re.M),  # TAP (node, mocha tap)
    re.compile(r"^\s*[✓✔] (.+?)(?: \(\d+(?:\.\d+)?m?s\))?$", re.M),  # mocha/node spec
)
_FAILED_NAME = (
    re.compile(r"^(?:FAILED|ERROR) (\S+)", re.M),
    re.compile(r"^(\S+::\S+) (?:FAILED|ERROR)\b", re.M),
    re.compile(r"^\s*--- FAIL: (\S+) \(", re.M),
    re.compile(r"^test (\S+) \.\.\. FAILED$", re.M),
    re.compile(r"^not ok \d+ (?:- )?(.+?)\s*(?:# .*)?$", re.M),
)


def reported_names(output: str) -> tuple[set[str], set[str]]:
    """(passed, failed) test names the output lists: pytest node ids (`-rA` or `-v`), go test
    names (`-v`), cargo test paths, TAP and spec-reporter titles."""
    text = _ANSI.sub("", output)
    passed = {m.strip() for rx in _PASSED_NAME for m in rx.findall(text)}
    failed = {m.strip() for rx in _FAILED_NAME for m in rx.findall(text)}
    return passed, failed


_FAILURE_LINE = re.compile(
    r"^(?:.*\b[1-9]\d* (?:failed|errors?)\b.*\bin [\d.]+s\b.*"   # pytest summary
    r"|\s*[1-9]\d* failing\s*"                                    # mocha
    r"|test result: FAILED\..*"                                     # cargo
    r"|\s*--- FAIL: .*"                                             # go test
    r"|Tests:.*\b[1-9]\d* failed\b.*"                               # jest
    r"|not ok \d+(?!.*#\s*(?:TODO|SKIP)).*"                          # TAP (not a TODO)
    r"|(?:#|ℹ) fail [1-9]\d*\s*"                                    # node --test
    r"|\s*\[\s*[1-9]\d* tests (?:failed|aborted)\s*\]\s*)$", re.M)  # JUnit console


def failure_reported(output: str) -> str | None:
    """The first line anywhere in the output where a runner reported a failure: a summary
    printed after it (by code running at exit) cannot hide it."""
    found = _FAILURE_LINE.search(_ANSI.sub("", output))
    return found.group(0).strip() if found else None


def _matches(name: str, reported: str) -> bool:
    return reported == name or reported.endswith(("::" + name, "/" + name))


def verdict_of(exit_code: int | None, timed_out: bool, counts: TestCounts, output: str,
                 required: tuple[str, ...] | list[str] = ()) -> tuple[bool, str | None]:
    """Whether a test command passed, and why not: exit 0 within the timeout, output the
    parsers recognise, at least one test passed and none failed or errored (in the summary,
    and in no failure line anywhere in the output), and each name in `required` reported
    passed (and not failed)."""
    if timed_out:
        return False, "the tests timed out"
    if exit_code != 0:
        return False, f"the test command exited {exit_code}"
    if counts.framework is None:
        return False, ("exit 0 but no test runner summary in the output: the tests did not "
                       "run to the end (an early exit?)")
    if counts.failed or counts.errors:
        return False, (f"exit 0 but {counts.failed} failed and {counts.errors} errors "
                       "reported")
    failure = failure_reported(output)
    if failure is not None:
        return False, f"exit 0 but the output reports a failure: {failure[:200]}"
    if counts.passed == 0:
        return False, "no test ran (0 passed)"
    if required:
        passed, failed = reported_names(output)
        missing = [n for n in required if not any(_matches(n, p) for p in passed)
                   or any(_matches(n, f) for f in failed)]
        if missing:
            return False, "required tests not reported passed: " + ", ".join(missing)
    return True, None
