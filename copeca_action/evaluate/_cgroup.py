"""Process and memory caps for the local sandbox, from cgroups when this host lets us.

Tried in order: cgroup v1 `pids` and `memory` hierarchies, then cgroup v2. When neither can be
written (an unprivileged user, a read-only /sys), the sandbox runs without caps and records it.
"""

from __future__ import annotations

import contextlib
import os
import signal
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

CGROUP_ROOT = Path("/sys/fs/cgroup")

JOIN_SCRIPT = ('while [ "$1" != -- ]; do echo $$ > "$1/cgroup.procs"; shift; done; '
               'shift; exec "$@"')
"""A shell that moves itself into each cgroup, then becomes the command (so all it starts
is counted)."""


@dataclass
class Cgroup:
    """One evaluation's cgroup(s) and the caps written into them."""

    dirs: list[Path] = field(default_factory=list)
    labels: list[str] = field(default_factory=list)

    def wrap(self, argv: list[str]) -> list[str]:
        if not self.dirs:
            return argv
        return ["/bin/sh", "-c", JOIN_SCRIPT, "copeca-cgroup", *map(str, self.dirs), "--", *argv]

    def pids(self) -> set[int]:
        found: set[int] = set()
        for d in self.dirs:
            with contextlib.suppress(OSError):
                found.update(int(x) for x in (d / "cgroup.procs").read_text().split())
        return found

    def kill_all(self, rounds: int = 200) -> None:
        """SIGKILL everything inside, again and again while a fork bomb refills it."""
        for _ in range(rounds):
            pids = self.pids()
            if not pids:
                return
            for pid in pids:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(pid, signal.SIGKILL)

    def remove(self, wait_s: float = 5.0) -> None:
        """Kill what is left and delete the cgroups. A killed process still counts until the
        kernel has reaped it, so rmdir is retried (briefly) while it answers EBUSY."""
        self.kill_all()
        deadline = time.monotonic() + wait_s
        for d in self.dirs:
            while True:
                try:
                    d.rmdir()
                    break
                except FileNotFoundError:
                    break
                except OSError:
                    if time.monotonic() > deadline:
                        break
                    self.kill_all(rounds=1)
                    time.sleep(0.01)


def create_cgroup(pids_max: int, memory_bytes: int) -> Cgroup:
    """A fresh cgroup with the caps, or an empty one (no caps) when none can be made."""
    name = f"copeca-eval-{uuid.uuid4().hex[:12]}"
    group = _v1(name, pids_max, memory_bytes)
    if not group.dirs:
        group = _v2(name, pids_max, memory_bytes)
    return group


def _make(parent: Path, name: str, settings: dict[str, str]) -> Path | None:
    if not parent.is_dir() or not os.access(parent, os.W_OK):
        return None
    path = parent / name
    try:
        path.mkdir()
        for key, value in settings.items():
            (path / key).write_text(value)
    except OSError:
        with contextlib.suppress(OSError):
            path.rmdir()
        return None
    return path


def _v1(name: str, pids_max: int, memory_bytes: int) -> Cgroup:
    group = Cgroup()
    pids = _make(CGROUP_ROOT / "pids", name, {"pids.max": str(pids_max)})
    if pids:
        group.dirs.append(pids)
        group.labels.append(f"pids-cgroup({pids_max})")
    mem = _make(CGROUP_ROOT / "memory", name, {"memory.limit_in_bytes": str(memory_bytes)})
    if mem:
        group.dirs.append(mem)
        group.labels.append(f"memory-cgroup({memory_bytes // 2**20}MiB)")
    return group


def _v2(name: str, pids_max: int, memory_bytes: int) -> Cgroup:
    controllers = CGROUP_ROOT / "cgroup.controllers"
    if not controllers.is_file() or "pids" not in controllers.read_text().split():
        return Cgroup()
    with contextlib.suppress(OSError):
        (CGROUP_ROOT / "cgroup.subtree_control").write_text("+pids +memory")
    path = _make(CGROUP_ROOT, name, {"pids.max": str(pids_max),
                                     "memory.max": str(memory_bytes)})
    if path is None:
        return Cgroup()
    return Cgroup([path], [f"pids-cgroup({pids_max})",
                           f"memory-cgroup({memory_bytes // 2**20}MiB)"])
