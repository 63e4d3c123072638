"""Which paths are test files: the agent's changes to them never reach evaluation.

The rules follow what the test runners themselves collect (pytest's `test_*.py`, Go's
`*_test.go`, Jest's `__tests__/` and `*.test.js`, Cargo's `tests/`, Django's `tests.py`), so a
file a runner would run is a test file whatever else it holds. Per-repository globs
(`RepoSpec.test_patterns`) add rules; a glob starting with `!` exempts matching paths from every
rule.

Paths in or naming a `.git` are git data, never applied whatever the globs say
(`protected:.git/`).

Besides test files, **protected** files are never applied either: what configures or replaces
the test runner (`pytest.ini`, `tox.ini`, `setup.cfg`, `pyproject.toml`, `package.json`, jest,
mocha and vitest configs, `go.mod`, `Cargo.toml`, `.cargo/`) and what Python imports before any
test (`sitecustomize.py`, `usercustomize.py`, `*.pth`, a `pytest.py` or `_pytest/` that would
shadow the runner). A task adds globs with `grading.test.protected` (`!glob` exempts).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache

TEST_DIRS: frozenset[str] = frozenset({"tests", "test", "__tests__", "spec", "testdata"})
"""A path with one of these as a directory segment is a test file (Rust `tests/`, Jasmine and
RSpec `spec/`, Go's `testdata/` fixtures included)."""

_JS = r"(?:[cm]?[jt]sx?)"
NAME_RULES: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("test_*.py", re.compile(r"^test_.+\.py$")),
    ("*_test.py", re.compile(r"^.+_test\.py$")),
    ("conftest.py", re.compile(r"^conftest\.py$")),
    ("tests.py", re.compile(r"^tests\.py$")),
    ("*Test.java", re.compile(r"^.*Tests?\.(?:java|kt|cs|scala)$")),
    ("*_test.go", re.compile(r"^.+_test\.go$")),
    ("*.test.[jt]sx?", re.compile(rf"^.+\.test\.{_JS}$")),
    ("*.spec.[jt]sx?", re.compile(rf"^.+\.spec\.{_JS}$")),
)
"""Base-name rules, each with the name a report shows."""

DEFAULT_PROTECTED: tuple[str, ...] = (
    "pytest.ini", "tox.ini", "setup.cfg", "pyproject.toml", ".pytest.ini",
    "sitecustomize.py", "usercustomize.py", "*.pth", "/pytest.py", "/_pytest/**",
    "package.json", ".mocharc*", "jest.config.*", "vitest.config.*", "vite.config.*",
    ".babelrc", "babel.config.*", "go.mod", "go.sum", "go.work", "Cargo.toml",
    ".cargo/**", "rust-toolchain*",
)
"""Test-runner configuration and import hooks: an agent's change to them is never applied.
A glob starting with `/` is anchored at the repository root."""

ARTEFACTS: tuple[str, ...] = (
    "**/__pycache__/**", "*.pyc", "*.pyo", "**/.pytest_cache/**", "**/.mypy_cache/**",
    "**/.ruff_cache/**", "**/node_modules/**", ".tox/**", ".nox/**",
)
"""What running tools leaves behind (an agent that ran the tests itself): never applied and
not counted as a test change."""


GIT_DATA = "protected:.git/"
"""The rule of a path inside (or naming) a `.git`: git data, never a file of the tree. `git
apply` refuses such paths; GNU patch, the ladder's last rung, would write them (a planted
config, hooks). No `!glob` exempts it."""


def _is_git_dir(segment: str) -> bool:
    """`.git`, as git itself refuses it: any case, trailing dots and spaces (NTFS) ignored,
    and NTFS's short name `git~1`."""
    name = segment.lower().rstrip(". ")
    return name in (".git", "git~1")


@lru_cache(maxsize=256)
def glob_to_regex(pattern: str) -> re.Pattern[str]:
    """A path glob: `*` and `?` stay inside one segment, `**` spans segments. A glob without
    `/` matches the base name at any depth (like .gitignore); a leading `/` anchors it at the
    repository root."""
    if pattern.startswith("/"):
        pattern = pattern[1:]
    elif "/" not in pattern:
        pattern = "**/" + pattern
    out: list[str] = []
    i = 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            out.append(r"(?:.*/)?")
            i += 3
        elif pattern.startswith("**", i):
            out.append(r".*")
            i += 2
        elif pattern[i] == "*":
            out.append(r"[^/]*")
            i += 1
        elif pattern[i] == "?":
            out.append(r"[^/]")
            i += 1
        elif pattern[i] == "[":
            end = pattern.find("]", i + 1)
            if end == -1:
                out.append(re.escape("["))
                i += 1
                continue
            body = pattern[i + 1:end].replace("\\", "\\\\")
            if body.startswith("!"):
                body = "^" + body[1:]
            out.append(f"[{body}]")
            i = end + 1
        else:
            out.append(re.escape(pattern[i]))
            i += 1
    return re.compile("^" + "".join(out) + "$")


@dataclass(frozen=True)
class TestFileRules:
    """The built-in rules plus a repository's own globs (`!glob` exempts)."""

    __test__ = False  # not a pytest class, despite the name

    extra: tuple[str, ...] = ()
    exempt: tuple[str, ...] = ()
    protected: tuple[str, ...] = DEFAULT_PROTECTED
    """Runner configuration globs (never applied); `protected:<glob>` in a report."""

    @classmethod
    def from_patterns(cls, patterns: Iterable[str],
                      protected: Iterable[str] = ()) -> TestFileRules:
        """Repository `test_patterns` and a task's `protected` globs; `!glob` exempts (from
        the test rules, or from the default protected list)."""
        extra = tuple(p for p in patterns if not p.startswith("!"))
        exempt = tuple(p[1:] for p in patterns if p.startswith("!"))
        more = [p for p in protected if not p.startswith("!")]
        unprotect = {p[1:] for p in protected if p.startswith("!")}
        guarded = tuple(dict.fromkeys(
            [p for p in DEFAULT_PROTECTED if p not in unprotect] + more))
        return cls(extra=extra, exempt=exempt, protected=guarded)

    def classify(self, path: str) -> str | None:
        """The rule that makes `path` a test file, or None when it is not one."""
        path = path.replace("\\", "/").lstrip("/")
        parts = path.split("/")
        if any(_is_git_dir(segment) for segment in parts):
            return GIT_DATA
        for glob in self.protected:
            if glob_to_regex(glob).match(path):
                return f"protected:{glob}"
        if any(glob_to_regex(g).match(path) for g in self.exempt):
            return None
        for segment in parts[:-1]:
            if segment in TEST_DIRS:
                return f"{segment}/"
        for name, regex in NAME_RULES:
            if regex.match(parts[-1]):
                return name
        for glob in self.extra:
            if glob_to_regex(glob).match(path):
                return glob
        return None

    def artefact(self, path: str) -> str | None:
        """The build-artefact glob `path` matches, or None."""
        path = path.replace("\\", "/").lstrip("/")
        return next((g for g in ARTEFACTS if glob_to_regex(g).match(path)), None)

    def is_test(self, path: str) -> bool:
        return self.classify(path) is not None
