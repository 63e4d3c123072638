"""The `local` sandbox: the command runs on this host over the prepared tree.

Levels, strongest first, each recorded in `ExecResult.isolation` exactly:
- `bwrap`: new network, pid and IPC namespaces and a fresh /proc; the host read-only
  (`ro-host`) with the harness's private places replaced by empty folders (`private-hidden`:
  the harness's HOME, /root, /home, /tmp, /var/tmp, /dev/shm, the output folder with every
  other run, each registered private folder) and its key files by empty files
  (`keys-hidden`); writable: only the tree, a private HOME/TMPDIR and `writable`; the
  interpreter, the snapshot cache and the harness's own install stay readable.
- `unshare` with a mount namespace: new network, pid and mount namespaces and a fresh /proc;
  in the command's own mount namespace, before it starts, the harness's files are bound
  read-only (`harness-ro`: the output and worktrees folders, the snapshot cache, the git views,
  the tree's git data beside it, the interpreter, the harness's package, PATH's installs in
  hidden places), the tree, its HOME and `writable` writable again, and the key files and
  home credentials replaced by empty ones (`keys-hidden`); the mounts are
  `copeca_action/_util/mountview.py`'s, the same as agents'. Nothing is hidden: the code can
  read the other runs' files, and write the rest of the host where the harness's user may.
  A mount that fails is an InfraError: the command never started.
- `unshare` without one (the mounts cannot be made here): new network and pid namespaces
  only; the file system is the harness's own, writable (`no-fs-isolation`): the code can
  read keys and change other runs.
- none: nothing (`no-isolation`).
Processes and memory: a cgroup when one can be made. Timeout: the process group, the pid
namespace and the cgroup are all killed, so nothing outlives the evaluation.
"""

from __future__ import annotations

import contextlib
import functools
import os
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import IO, Literal

from copeca_action._util.hidden import bwrap_view, interpreter_dirs, private_places, tool_roots
from copeca_action._util.mountview import Mode, view_command, view_ops, view_works, was_ready
from copeca_action._util.paths import PACKAGE_DIR
from copeca_action._util.scrub import private_dirs, readable_dirs
from copeca_action._util.text import one_line
from copeca_action.errors import ConfigError, InfraError
from copeca_action.evaluate._cgroup import create_cgroup
from copeca_action.evaluate._sandbox import OUTPUT_CAP, ExecResult, register_sandbox

Network = Literal["auto", "bwrap", "unshare", "none"]
ENV_PASSTHROUGH = ("PATH", "LANG", "LC_ALL", "TZ", "VIRTUAL_ENV", "GOPATH", "GOCACHE",
                   "GOFLAGS", "CARGO_HOME", "RUSTUP_HOME", "NODE_PATH", "JAVA_HOME")
"""Host variables a test command may see; everything else (keys, tokens) stays out."""


@functools.cache
def _works(argv: tuple[str, ...]) -> bool:
    """Whether a namespace tool really works here (it may exist but be refused)."""
    if shutil.which(argv[0]) is None:
        return False
    try:
        return subprocess.run([*argv, "true"], capture_output=True, timeout=10,
                              check=False).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


BWRAP_PROBE = ("bwrap", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc",
               "--unshare-net", "--unshare-pid", "--die-with-parent", "--")
UNSHARE_VARIANTS = (("unshare", "--net", "--pid", "--mount", "--fork", "--mount-proc",
                     "--kill-child"),
                    ("unshare", "--map-root-user", "--net", "--pid", "--mount", "--fork",
                     "--mount-proc", "--kill-child"),
                    ("unshare", "--net", "--pid", "--fork", "--kill-child"),
                    ("unshare", "--map-root-user", "--net", "--pid", "--fork", "--kill-child"))
"""As root, new namespaces directly; otherwise inside a user namespace (`unshare -rn`). With
a mount namespace and a fresh /proc (the harness's environment out of sight) where the host
allows it, else (a /proc that cannot be mounted) the network and pid namespaces alone."""


def unshare_prefix() -> tuple[str, ...] | None:
    return next((v for v in UNSHARE_VARIANTS if _works(v)), None)


def graded_view_works() -> bool:
    """Whether the `unshare` fallback gives graded code its read-only view (`harness-ro`):
    a mount namespace of its own in which `UNSHARE_VIEW` can mount."""
    prefix = unshare_prefix()
    return prefix is not None and "--mount" in prefix and view_works(prefix)


def graded_view(tree: Path, home: Path, writable: Sequence[Path]) -> list[str]:
    """The graded code's mounts under the `unshare` fallback (`view_ops`): read-only the
    output and worktrees folders, the snapshot cache, every folder of git views, the tree's
    git data beside it (`<tree>.git`, which the harness's git obeys), the interpreter, the
    harness's package and the installs of PATH's programs in hidden places; writable again,
    deeper, the tree, its HOME and `writable`; each key file and home credential read
    empty."""
    from copeca_action.workspace._git import view_folders

    ro = {*private_dirs(), *readable_dirs(), *view_folders(), *interpreter_dirs(),
          PACKAGE_DIR, *tool_roots(private_places()), tree.with_name(tree.name + ".git")}
    mounts: dict[Path, Mode] = {p.resolve(): "ro" for p in ro}
    for path in (tree, home, *writable):
        mounts[path.resolve()] = "rw"
    return view_ops(mounts)


def detect_network_cut() -> Network:
    """The strongest network isolation this host offers."""
    if _works(BWRAP_PROBE):
        return "bwrap"
    if unshare_prefix() is not None:
        return "unshare"
    return "none"


class LocalSandbox:
    """Runs commands on the host, cut off from the network when the host allows it."""

    name = "local"

    def __init__(self, network: Network = "auto", pids_max: int = 1024,
                 memory_bytes: int = 4 * 2**30, **_: object) -> None:
        if (network == "bwrap" and not _works(BWRAP_PROBE)) or (
                network == "unshare" and unshare_prefix() is None):
            raise ConfigError(f"network isolation {network!r} does not work on this host",
                              file="--network")
        self.network: Network = detect_network_cut() if network == "auto" else network
        self.pids_max = pids_max
        self.memory_bytes = memory_bytes

    def _wrap(self, tree: Path, home: Path, argv: Sequence[str], writable: Sequence[Path] = (),
              ready_fd: int | None = None) -> tuple[list[str], list[str]]:
        if self.network == "bwrap":
            binds = [a for p in writable for a in ("--bind", str(p), str(p))]
            prefix = ["bwrap", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc",
                      *_hidden_view(), "--bind", str(tree), str(tree), "--bind", str(home),
                      str(home), *binds, "--unshare-net", "--unshare-pid", "--unshare-ipc",
                      "--die-with-parent", "--chdir", str(tree), "--"]
            return [*prefix, *argv], ["bwrap", "netns", "pidns", "ro-host", "private-hidden",
                                      "keys-hidden"]
        prefix_unshare = unshare_prefix() if self.network == "unshare" else None
        if prefix_unshare is not None and graded_view_works():
            ops = graded_view(tree, home, writable)
            return [*prefix_unshare, *view_command(ops, ready_fd), *argv], [
                "netns", "pidns", "harness-ro", "keys-hidden"]
        if prefix_unshare is not None:
            return [*prefix_unshare, *argv], ["netns", "pidns", "no-fs-isolation"]
        return list(argv), ["no-isolation"]

    def run(self, tree: Path, argv: Sequence[str], *, timeout_s: float,
            env: Mapping[str, str] | None = None, collect: Sequence[str] = (),
            writable: Sequence[Path] = ()) -> ExecResult:
        tree = tree.resolve()
        with tempfile.TemporaryDirectory(prefix="copeca-home-") as home_dir, _Pipe() as ready:
            return self._run(tree, Path(home_dir), argv, timeout_s, env, collect,
                             [p.resolve() for p in writable], ready)

    def _run(self, tree: Path, home: Path, argv: Sequence[str], timeout_s: float,
             env: Mapping[str, str] | None, collect: Sequence[str], writable: list[Path],
             ready: _Pipe) -> ExecResult:
        """`run` with a private HOME and the pipe on which the `unshare` view says its
        mounts are made (its write end closed here once the command holds it)."""
        wrapped, isolation = self._wrap(tree, home, argv, writable, ready.write)
        viewed = "harness-ro" in isolation
        full_env = {k: os.environ[k] for k in ENV_PASSTHROUGH if k in os.environ}
        full_env.update({"HOME": str(home), "TMPDIR": str(home), "CI": "true",
                         "PYTHONDONTWRITEBYTECODE": "1"})
        full_env.update(env or {})
        if not _resolvable(argv[0], tree, full_env.get("PATH")):
            return ExecResult(exit_code=127, output=f"command not found: {argv[0]}",
                              duration_s=0.0, isolation=isolation)
        group = create_cgroup(self.pids_max, self.memory_bytes)
        start = time.monotonic()
        with tempfile.TemporaryFile() as out:
            try:
                proc = subprocess.Popen(group.wrap(wrapped), cwd=tree, env=full_env,
                                        stdin=subprocess.DEVNULL, stdout=out,
                                        stderr=subprocess.STDOUT, start_new_session=True,
                                        pass_fds=(ready.write,) if viewed else ())
            except FileNotFoundError as exc:
                group.remove()
                return ExecResult(exit_code=127, output=f"command not found: {exc}",
                                  duration_s=0.0, isolation=isolation)
            finally:
                ready.close_write()
            timed_out = False
            try:
                code: int | None = proc.wait(timeout=timeout_s)
            except subprocess.TimeoutExpired:
                timed_out = True
                code = None
            finally:
                _kill_group(proc.pid)
                group.remove()
                proc.wait()
            duration = time.monotonic() - start
            output = _read_capped(out)
        if viewed and not was_ready(ready.read):
            said = next((line for line in output.splitlines() if line.strip()), "")
            raise InfraError(
                "the graded code's sandbox (unshare, read-only harness files) could not be "
                f"made, so the command never ran (exit {proc.returncode}): "
                f"{one_line(said) or 'no message'}")
        files = _collect(tree, collect)
        if timed_out:
            output += f"\n[copeca: killed after {timeout_s:g}s timeout]\n"
        return ExecResult(exit_code=code, output=output, timed_out=timed_out,
                          duration_s=round(duration, 3), isolation=isolation + group.labels,
                          files=files)

    def close(self) -> None:
        return None


class _Pipe:
    """A pipe whose ends are each closed once: the write end as soon as the command holds
    it, both at the latest on leaving the `with`."""

    def __init__(self) -> None:
        self.read, self.write = os.pipe()
        self._open = {self.read, self.write}

    def close_write(self) -> None:
        self._close(self.write)

    def _close(self, fd: int) -> None:
        if fd in self._open:
            self._open.discard(fd)
            os.close(fd)

    def __enter__(self) -> _Pipe:
        return self

    def __exit__(self, *_: object) -> None:
        for fd in (self.read, self.write):
            self._close(fd)


def _hidden_view() -> list[str]:
    """bwrap arguments that blank the harness's private places, then show again, read-only,
    what a test needs from inside them (the interpreter's install, the snapshot cache, the
    installs of PATH's programs); key files and home credentials read empty."""
    hidden = private_places()
    return bwrap_view(hidden, readable={*interpreter_dirs(), *readable_dirs(),
                                        *tool_roots(hidden)})


def _resolvable(program: str, tree: Path, path: str | None) -> bool:
    """Whether the command can start: checked on the host, whose file system the sandbox
    shares read-only (bwrap and unshare see the same paths)."""
    if "/" in program:
        return (tree / program).exists()  # an absolute path replaces the tree prefix
    return shutil.which(program, path=path) is not None


def _read_capped(handle: IO[bytes], cap: int = 4 * OUTPUT_CAP) -> str:
    """The whole output when small, else its head and tail (a chatty test cannot fill memory)."""
    size = handle.seek(0, os.SEEK_END)
    handle.seek(0)
    if size <= cap:
        return handle.read().decode("utf-8", "replace")
    head = handle.read(cap // 4).decode("utf-8", "replace")
    handle.seek(size - (cap - cap // 4))
    tail = handle.read().decode("utf-8", "replace")
    return f"{head}\n[... {size - cap} bytes cut ...]\n{tail}"


def _kill_group(pgid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGKILL)


def _collect(tree: Path, paths: Sequence[str], cap: int = 8 * 2**20) -> dict[str, str]:
    found: dict[str, str] = {}
    for rel in paths:
        path = (tree / rel).resolve()
        if path.is_relative_to(tree) and path.is_file() and path.stat().st_size <= cap:
            found[rel] = path.read_text("utf-8", "replace")
    return found


register_sandbox("local", LocalSandbox)
