"""Where a test command runs: one interface, a `local` and a `docker` implementation.

A sandbox gets a prepared tree (patches already applied on the host) and an argv; it runs the
argv over the tree with no network, bounded processes and memory, and a timeout that kills
every process it started. The harness, not the sandbox, decides what the exit code means.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol

from pydantic import Field

from copeca_action._util.model import RecordModel
from copeca_action.errors import ConfigError

OUTPUT_CAP = 64 * 1024
"""Characters of command output kept in results (head and tail)."""


class ExecResult(RecordModel):
    """What one sandboxed command did."""

    exit_code: int | None
    """None when the command was killed at the timeout."""
    output: str
    """stdout and stderr, interleaved as the command wrote them (capped by `cap_output`)."""
    timed_out: bool = False
    duration_s: float
    isolation: list[str] = Field(default_factory=list)
    """What isolated the command, e.g. `bwrap`, `netns`, `pids-cgroup`, `container`."""
    files: dict[str, str] = Field(default_factory=dict)
    """Requested files read back after the run (e.g. a JUnit XML report), by relative path."""


class Sandbox(Protocol):
    """Runs one command over one tree, isolated."""

    name: str

    def run(self, tree: Path, argv: Sequence[str], *, timeout_s: float,
            env: Mapping[str, str] | None = None, collect: Sequence[str] = (),
            writable: Sequence[Path] = ()) -> ExecResult:
        """Run `argv` with `tree` as the working directory.

        Args:
            tree: prepared working tree (host path); the command may write into it.
            argv: the command.
            timeout_s: wall-clock limit; every process of the command is killed after it.
            env: extra environment variables.
            collect: tree-relative files to read back after the run (missing ones are skipped).
            writable: host folders outside the tree the command may write to (a private copy
                of a build cache); only the local sandbox supports them.

        Raises:
            InfraError: the sandbox itself could not run (missing image, engine down).
        """
        ...

    def close(self) -> None:
        """Release what the sandbox holds (clients, cgroups)."""
        ...


SandboxFactory = Callable[..., Sandbox]
_REGISTRY: dict[str, SandboxFactory] = {}


def register_sandbox(name: str, factory: SandboxFactory) -> None:
    _REGISTRY[name] = factory


_BUILTIN = ("copeca_action.evaluate._local", "copeca_action.evaluate._docker")
"""Modules that register the built-in sandboxes when imported (the package's names load
lazily, so nothing else guarantees they were)."""


def _load_builtin() -> None:
    import importlib

    for module in _BUILTIN:
        importlib.import_module(module)


def sandbox_names() -> list[str]:
    _load_builtin()
    return sorted(_REGISTRY)


def make_sandbox(name: str, **options: Any) -> Sandbox:
    """A sandbox by name; an unknown name is a config error listing the known ones."""
    _load_builtin()
    if name not in _REGISTRY:
        raise ConfigError(f"--backend: unknown sandbox {name!r}; known: "
                          + ", ".join(sandbox_names()), file="--backend")
    return _REGISTRY[name](**options)


def cap_output(text: str, cap: int = OUTPUT_CAP) -> str:
    """Keep the head and the tail (where test summaries are) of long output."""
    if len(text) <= cap:
        return text
    head = cap // 4
    tail = cap - head
    return (text[:head] + f"\n[... {len(text) - cap} characters cut ...]\n" + text[-tail:])
