"""The one exception tree of copeca-action.

```
CopecaError                      root: the CLI and entrypoint catch it once, print, exit
├── ConfigError                  bad user input (YAML, flags); carries every Problem found
├── WorkspaceError               snapshots, worktrees, mode set-up could not be prepared
├── InfraError                   the harness itself broke (not the agent): retried, reported
├── BundleError                  a .copeca bundle could not be written or read
│   └── VerificationError        a bundle failed verification (its `kind` says how)
└── GitHubError                  talking to the GitHub API failed
```

Agent failures and timeouts are never exceptions: they are `RunRecord.outcome` values.
Messages name the file, line and field (or the flag) and what was expected.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Problem:
    """One thing wrong with one input, located as precisely as we can."""

    file: str
    message: str
    line: int | None = None
    field: str | None = None

    def __str__(self) -> str:
        where = self.file
        if self.line is not None:
            where += f":{self.line}"
        if self.field:
            where = f"{where}: {self.field}" if where else self.field
        return f"{where}: {self.message}" if where else self.message  # never ": message"


class CopecaError(Exception):
    """Root of every error copeca-action raises on purpose. Exit code 2, "the tool failed"
    (bad input, a broken harness, a full disk, an API that answered nonsense): never 1, which
    means "the verdict fails the job" (a regression under `fail-on`)."""

    exit_code = 2


class ConfigError(CopecaError):
    """Input that does not match its contract; holds every problem found, not just the first."""

    exit_code = 2

    def __init__(self, problems: list[Problem] | Problem | str, file: str | Path = "") -> None:
        if isinstance(problems, str):
            problems = [Problem(file=str(file), message=problems)]
        elif isinstance(problems, Problem):
            problems = [problems]
        self.problems: list[Problem] = problems
        super().__init__("\n".join(str(p) for p in problems))


class WorkspaceError(CopecaError):
    """A snapshot, worktree or arm could not be prepared."""


class InfraError(CopecaError):
    """The harness, not the agent, failed; the run is retried and reported apart."""


class BundleError(CopecaError):
    """A bundle could not be built or read."""


class VerificationError(BundleError):
    """A bundle failed verification; `kind` is one of corrupt, tampered, signature,
    unsigned, incomplete, report (what it publishes is not the report its records give),
    build (another build made its report, and this one recomputes it otherwise: not
    confirmed), newer (a later copeca-action made it, in a format or with a field this
    build does not understand: upgrade to verify it), and selects the exit code."""

    EXIT_CODES = {"corrupt": 10, "tampered": 11, "signature": 12, "unsigned": 13, "incomplete": 14,
                  "report": 15, "build": 16, "newer": 17}

    def __init__(self, kind: str, message: str) -> None:
        self.kind = kind
        self.exit_code = self.EXIT_CODES.get(kind, 2)
        super().__init__(message)


class GitHubError(CopecaError):
    """A GitHub API call failed after its retries."""


def os_error(exc: OSError) -> CopecaError:
    """An OSError the harness did not expect, as a named error: which file, what happened,
    and for a full disk that `--resume` continues."""
    import errno

    where = f"{exc.filename}: " if exc.filename else ""
    if exc.errno in (errno.ENOSPC, errno.EDQUOT):
        return InfraError(f"{where}the disk is full ({exc.strerror}); free some space, then "
                          "run again (`run --resume` keeps every run recorded so far)")
    if exc.errno == errno.EEXIST and exc.filename and not Path(exc.filename).is_dir():
        return InfraError(f"{where}exists and is not a folder (a folder was expected here)")
    if exc.errno == errno.ENOTDIR:
        return InfraError(f"{where}{exc.strerror}: a part of this path is a file, not a folder")
    return InfraError(f"{where}{exc.strerror or exc}")
