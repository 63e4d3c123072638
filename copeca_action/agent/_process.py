"""Running one agent CLI: its own process group, no stdin, output to files, and a timeout or
a cancel that kills the whole group. Agent failures are results, never exceptions.

The agent, its tools and MCP servers never see the harness: when bubblewrap works they run
in their own pid namespace with a fresh /proc (the harness's environment, and every other
process's, is out of sight), the output folder blank but for their own run folder and
worktree (no other run's transcript or record, no results.jsonl, no model request log), the
harness user's home (and /root, /home, /tmp) blank but for what they need from it (its
credentials: .netrc, .ssh, .m2, whatever it keeps), and the harness's key files replaced by
empty ones (`--ro-bind /dev/null KEY`); else, with
`unshare`, in their own pid and mount namespaces with a fresh /proc, where the harness's
files (the snapshot cache, its git views, its install, the output folder) are mounted
read-only but for the agent's own and key files read empty (`harness-ro`, `keys-hidden`;
the mounts are `copeca_action/_util/mountview.py`'s, shared with graded code;
the output folder stays readable: recorded). `AgentResult.isolation` says which.

No window leaves an agent behind a killed harness: the process starts as a gate (`sh`)
that waits for one line on a pipe; the harness registers the gate's process group with the
watchdog first, then opens the gate, and only then does the gate `exec` the agent. A harness
killed before that closes the pipe, and the gate exits without starting anything.
"""

from __future__ import annotations

import contextlib
import functools
import os
import shutil
import signal
import subprocess
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

from pydantic import Field

from copeca_action._util.hidden import (
    bwrap_view,
    interpreter_dirs,
    private_places,
    tool_roots,
)
from copeca_action._util.model import RecordModel
from copeca_action._util.mountview import Mode, view_command, view_ops, view_works, was_ready
from copeca_action._util.paths import PACKAGE_DIR
from copeca_action._util.scrub import private_dirs, readable_dirs
from copeca_action._util.text import one_line
from copeca_action.agent._invocation import AgentInvocation
from copeca_action.agent._watchdog import WATCHDOG
from copeca_action.errors import ConfigError, InfraError, Problem

BWRAP_AGENT = ("bwrap", "--dev-bind", "/", "/", "--proc", "/proc", "--unshare-pid",
               "--die-with-parent")
"""The host as it is (the agent needs its network and writes its worktree and run folder),
but a pid namespace of its own with its own /proc."""
UNSHARE_AGENT = (("unshare", "--pid", "--fork", "--mount-proc", "--kill-child"),
                 ("unshare", "--user", "--map-current-user", "--pid", "--fork",
                  "--mount-proc", "--kill-child"))
ISOLATION_ENV = "COPECA_AGENT_ISOLATION"
"""`auto` (default): bwrap, else unshare, else none; `none` turns it off (recorded)."""


def check_isolation(env: Mapping[str, str]) -> None:
    """Refuses a value of COPECA_AGENT_ISOLATION other than `auto`, `none` or unset: a typo
    (`off`, `None`) was taken as `auto` without a word, so a user who meant to turn it off,
    or to ask for something else, was never told."""
    value = env.get(ISOLATION_ENV, "")
    if value not in ("", "auto", "none"):
        raise ConfigError(Problem(f"${ISOLATION_ENV}", f"unknown value {value[:40]!r}; "
                                  "expected auto (the default: bwrap, else unshare) or none "
                                  "(no isolation, for debugging)"))
_GATE = 'IFS= read -r go && [ "$go" = go ] || exit 111; exec "$@" < /dev/null'
"""Reads the go line from its stdin (the pipe), then becomes the agent with /dev/null as
stdin."""


@functools.cache
def _works(argv: tuple[str, ...]) -> bool:
    if shutil.which(argv[0]) is None:
        return False
    try:
        return subprocess.run([*argv, "--", "true"] if argv[0] == "bwrap" else [*argv, "true"],
                              capture_output=True, timeout=10, check=False).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


def install_dirs(binary: Path) -> list[Path]:
    """Where an agent CLI's executable lives: for each of its path and its link's target,
    the `node_modules` folder holding it (npm's `.bin` links lead into a package there),
    else its folder."""
    found: list[Path] = []
    for path in (binary.absolute(), binary.resolve()):
        found.append(next((p for p in path.parents if p.name == "node_modules"), path.parent))
    return found


def agent_isolation(writable: Sequence[Path] = (), readable: Sequence[Path] = (),
                    ready_fd: int | None = None) -> tuple[list[str], list[str]]:
    """The prefix that starts an agent cut off from the harness, and what it isolates:
    `pidns` (own pid namespace and /proc), `keys-hidden` (key files replaced by empty ones),
    `private-hidden` (the harness user's home, /root, /home, /tmp, /var/tmp, /dev/shm and the
    output folder, with every other run, blank).

    `writable`: the folders it works in (its worktree and run folder, the tool's checkout);
    `readable`: what else it needs (the CLI's install). Both, the harness's interpreter and
    package, PATH's installs and the snapshot cache are shown where they lie in a blanked
    place."""
    if os.environ.get(ISOLATION_ENV, "auto") == "none":
        return [], []
    if _works(BWRAP_AGENT):
        hidden = private_places()
        view = bwrap_view(hidden, readable=[*readable, *interpreter_dirs(), PACKAGE_DIR,
                                            *tool_roots(hidden), *readable_dirs()],
                          writable=writable)
        return [*BWRAP_AGENT, *view, *git_data_binds(writable), "--"], [
            "bwrap", "pidns", "keys-hidden", "private-hidden"]
    for variant in UNSHARE_AGENT:
        if _works(variant):
            if not view_works(variant):
                return [*variant], ["unshare", "pidns"]
            return [*variant, *view_command(unshare_view(writable), ready_fd)], [
                "unshare", "pidns", "harness-ro", "keys-hidden"]
    return [], []


def unshare_view(writable: Sequence[Path]) -> list[str]:
    """The agent's mounts under the `unshare` fallback (`view_ops`, the module shared with
    graded code), which cannot blank folders (the agent's own are inside them) but can make
    them read-only in the agent's mount namespace: the snapshot cache and every folder of
    git views (the harness's git trusts their config), the harness's interpreter and
    package, the output and worktree folders (other runs' records, results.jsonl); writable
    again, deeper, the agent's folders and the git data its own git writes (as under
    bubblewrap, `git_data_binds`); last, each key file and home credential replaced by an
    empty file or folder."""
    from copeca_action.workspace._git import view_folders

    ro = {*readable_dirs(), *view_folders(), *interpreter_dirs(), PACKAGE_DIR, *private_dirs()}
    mounts: dict[Path, Mode] = {p.resolve(): "ro" for p in ro}
    for path in writable:
        mounts[path.resolve()] = "rw"
    git = git_data_binds(writable)
    for i in range(0, len(git), 3):
        flag, _, target = git[i:i + 3]
        mounts.setdefault(Path(target), "ro" if flag == "--ro-bind" else "rw")
        if flag == "--bind":
            mounts[Path(target)] = "rw"
    return view_ops(mounts)


def git_data_binds(writable: Sequence[Path]) -> list[str]:
    """bwrap arguments (after the view) that make the snapshot cache read-only (its
    repositories' config, hooks, info, refs, packed-refs: a shared branch or stash would
    also show one run's work to the next), but for what the agent's own git in each of its
    worktrees writes: the worktree's admin folder (HEAD, index, logs; its `gitdir` and
    `commondir` read-only) and the repository's loose objects (`objects/info` and
    `objects/pack` read-only)."""
    from copeca_action.workspace._worktree import worktree_git_data

    cache = [d for d in readable_dirs() if d.is_dir()]
    args: list[str] = []
    for place in cache:
        args += ["--ro-bind", str(place), str(place)]
    for path in (p.resolve() for p in writable):
        if path.is_dir() and any(path.is_relative_to(d) for d in cache):
            args += ["--bind", str(path), str(path)]  # shown writable, inside the cache
    for path in writable:
        found = worktree_git_data(path)
        if found is None or not found[0].is_dir() or not any(
                found[0].is_relative_to(d) for d in cache):
            continue
        admin, repo = found
        args += ["--bind", str(admin), str(admin)]
        args += [a for name in ("gitdir", "commondir") if (admin / name).is_file()
                 for a in ("--ro-bind", str(admin / name), str(admin / name))]
        objects = repo / "objects"
        if objects.is_dir() and not objects.is_symlink():
            args += ["--bind", str(objects), str(objects)]
            args += [a for name in ("info", "pack") if (objects / name).is_dir()
                     for a in ("--ro-bind", str(objects / name), str(objects / name))]
    return args


def files_visible_warning() -> str | None:
    """What agents started now can read of the harness's files, when isolation cannot hide
    them (None: it can)."""
    levels = agent_isolation()[1]
    if "private-hidden" in levels:
        return None
    if "harness-ro" in levels:
        return ("agents are not confined to their own files: bubblewrap does not work here "
                "(`unshare` gives a pid namespace and makes the harness's files read-only, "
                "but cannot hide them), so each agent, its tools and MCP servers can read the "
                "output folder (the other runs' transcripts and records, results.jsonl, the "
                "model request log) and the harness user's home (its known credential files "
                "and the signing-key file read empty)")
    how = "isolation is off" if not levels else "bubblewrap does not work here (`unshare` " \
        "gives a pid namespace but cannot hide files)"
    return (f"agents are not confined to their own files: {how}, so each agent, its tools and "
            "MCP servers can read the output folder (the other runs' transcripts and records, "
            "results.jsonl, the model request log), the harness user's home with its "
            "credentials, and the signing-key file")


GRACE_S = 2.0
"""After SIGTERM, how long the group may take to exit before SIGKILL."""
_POLL_S = 0.05


class AgentResult(RecordModel):
    """How the process ended. `exit_code` is None when it was killed by us."""

    exit_code: int | None
    pid: int | None = None
    """The CLI's process id, also its process group id (the group we kill)."""
    timed_out: bool = False
    cancelled: bool = False
    duration_s: float
    stdout_path: Path
    stderr_path: Path
    isolation: list[str] = Field(default_factory=list)
    """What cut the agent off from the harness (`pidns`, `keys-hidden`); empty: nothing (it
    could read the harness's /proc/<pid>/environ)."""


def _kill_group(pgid: int, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)


def _members(pgid: int) -> list[int]:
    """The group's processes other than its leader (from /proc; empty where unreadable)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == pgid:
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rfind(")") + 2:].split()
        if len(fields) > 2 and fields[2] == str(pgid):
            found.append(int(entry.name))
    return found


def reap_orphaned_inits(pgid: int | None = None, wait_s: float = 2.0) -> int:
    """When the harness is PID 1 (the action's container), orphans are re-parented to it;
    bwrap's outer process exits without reaping its namespace's init, which would stay a
    zombie for good. Reap those (comm `bwrap`, our child, not a group leader we started);
    never a process a Popen of ours still owns. The number reaped.

    `pgid`: the group of the run just stopped. Its members were sent SIGKILL but may not
    have died yet; wait (up to `wait_s`) until none is left alive, so an init that dies
    after the first look is not left behind."""
    if os.getpid() != 1:
        return 0
    reaped = 0
    deadline = time.monotonic() + wait_s
    while True:
        alive = 0
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            comm = stat[stat.find("(") + 1:stat.rfind(")")]
            fields = stat[stat.rfind(")") + 2:].split()
            pid = int(entry.name)
            if comm == "bwrap" and fields[:2] == ["Z", "1"] and fields[2] != str(pid):
                with contextlib.suppress(ChildProcessError, OSError):
                    os.waitpid(pid, os.WNOHANG)
                    reaped += 1
            elif pgid is not None and len(fields) > 2 and fields[2] == str(pgid) \
                    and fields[0] != "Z" and pid != pgid:
                alive += 1
        if not alive or time.monotonic() >= deadline:
            return reaped
        time.sleep(0.01)


def _signal_members(pgid: int, sig: int) -> None:
    for pid in _members(pgid):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, sig)


def _stop(proc: subprocess.Popen[bytes], isolated: bool = False) -> None:
    """SIGTERM the group, then SIGKILL whatever is left after the grace period. Isolated,
    the leader is bwrap: the members are signalled first, so bwrap outlives its namespace's
    init and reaps it instead of leaving a zombie for PID 1 (in a container, the harness
    itself, which never reaps it); then the whole group, to be sure."""
    if isolated:
        _signal_members(proc.pid, signal.SIGTERM)
    else:
        _kill_group(proc.pid, signal.SIGTERM)
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(timeout=GRACE_S)
    if isolated:
        _signal_members(proc.pid, signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=GRACE_S)
    _kill_group(proc.pid, signal.SIGKILL)
    proc.wait()


def _wait(proc: subprocess.Popen[bytes], deadline: float,
          cancel: threading.Event | None) -> str | None:
    """Wait for the process; return "timeout" or "cancel" when we must stop it."""
    while True:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            return "timeout"
        if cancel is not None and cancel.is_set():
            return "cancel"
        step = remaining if cancel is None else min(remaining, _POLL_S)
        try:
            proc.wait(timeout=step)
            return None
        except subprocess.TimeoutExpired:
            continue


def run_agent(inv: AgentInvocation, timeout_s: float,
              cancel: threading.Event | None = None) -> AgentResult:
    """Run the CLI to completion, timeout or cancel.

    Raises:
        InfraError: the executable is missing or cannot be started, or (under `unshare`)
            its read-only view could not be mounted: the agent never started.
    """
    if not inv.binary.is_file():
        raise InfraError(f"agent CLI {inv.binary} is missing; run `make node`")
    inv.stdout_path.parent.mkdir(parents=True, exist_ok=True)
    ready_r, ready_w = os.pipe()
    try:
        try:
            prefix, isolation = agent_isolation(
                writable=[inv.cwd, inv.run_dir, *inv.shown], readable=install_dirs(inv.binary),
                ready_fd=ready_w) if inv.isolate else ([], [])
        except BaseException:
            os.close(ready_w)
            raise
        result = _run_gated(inv, timeout_s, cancel, prefix, isolation, ready_w)
        ready = was_ready(ready_r)
    finally:
        os.close(ready_r)
    if "harness-ro" in isolation and not ready:
        said = one_line(_first_line(inv.stderr_path))
        raise InfraError(f"the agent's sandbox (unshare, read-only harness files) could not be "
                         f"made, so the agent never started (exit {result.exit_code}): "
                         f"{said or 'no message'}")
    return result


def _first_line(path: Path) -> str:
    try:
        with path.open("rb") as fh:
            return fh.readline(400).decode("utf-8", "replace").strip()
    except OSError:
        return ""


def _run_gated(inv: AgentInvocation, timeout_s: float, cancel: threading.Event | None,
               prefix: list[str], isolation: list[str], ready_w: int) -> AgentResult:
    """Start `prefix + argv` behind the gate (see the module's doc), wait, stop. `ready_w`
    (closed here once the process has it) is the sandbox's ready pipe."""
    start = time.monotonic()
    with inv.stdout_path.open("wb") as out, inv.stderr_path.open("wb") as err:
        gate_r, gate_w = os.pipe()
        try:
            try:
                proc = subprocess.Popen(
                    ["/bin/sh", "-c", _GATE, "copeca-gate", *prefix, *inv.argv], cwd=inv.cwd,
                    env=inv.env, stdin=gate_r, stdout=out, stderr=err,
                    start_new_session=True,
                    pass_fds=(ready_w,) if "harness-ro" in isolation else ())
            except OSError as exc:
                raise InfraError(f"cannot start {inv.argv[0]}: {exc}") from exc
            finally:
                os.close(gate_r)
                os.close(ready_w)
            # registered before the agent exists: killed with its group if the harness dies
            WATCHDOG.watch(proc.pid)
            with contextlib.suppress(OSError):
                os.write(gate_w, b"go\n")
        finally:
            os.close(gate_w)
        try:
            why = _wait(proc, start + timeout_s, cancel)
        except BaseException:
            _stop(proc, bool(prefix))
            WATCHDOG.forget(proc.pid)
            raise
        if why is not None:
            _stop(proc, bool(prefix))
        else:
            # The CLI is done; anything it left behind in its group (MCP servers, shells) goes.
            _kill_group(proc.pid, signal.SIGKILL)
        WATCHDOG.forget(proc.pid)
        if prefix:
            reap_orphaned_inits(proc.pid)
    return AgentResult(exit_code=None if why else proc.returncode, pid=proc.pid,
                       timed_out=why == "timeout", cancelled=why == "cancel",
                       duration_s=round(time.monotonic() - start, 3),
                       stdout_path=inv.stdout_path, stderr_path=inv.stderr_path,
                       isolation=isolation)
