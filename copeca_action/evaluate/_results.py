"""Counting tests in a command's output: pytest, go test (verbose or not), cargo test,
jest, vitest, node's test runner, and JUnit XML reports.

Counts are evidence, not the verdict: the exit code decides pass or fail. A parser that finds
nothing leaves the counts at zero and `framework` None.
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
        pkg_ok = len(re.findall(r"^ok\s+\S+\s", text, re.M))
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
    ("node", parse_node), ("go", parse_go), ("pytest", parse_pytest),
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
