"""Read-only views of the harness's files for code it starts but does not trust, where
bubblewrap does not work but `unshare` makes a mount namespace: the harness's folders cannot
be blanked there (the code's own folders lie inside them), but they can be bind-mounted
read-only, the code's own folders writable again deeper, and each key file and home
credential replaced by an empty file or folder, before the code starts.

One implementation for both: `copeca_action.agent._process` (agents, levels `harness-ro`,
`keys-hidden`) and `copeca_action.evaluate._local` (graded code, the same levels); each says
which folders are read-only and which writable (`view_ops`), this module mounts them.
"""

from __future__ import annotations

import contextlib
import functools
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Literal

from copeca_action._util.hidden import home_credentials
from copeca_action._util.scrub import secret_files

Mode = Literal["ro", "rw"]

UNSHARE_VIEW = """\
import os, subprocess, sys
mount, fd, args = sys.argv[1], sys.argv[2], sys.argv[3:]
cut = args.index("--")
ops, argv = args[:cut], args[cut + 1:]
for i in range(0, len(ops), 3):
    op, path, opts = ops[i:i + 3]
    steps = {"ro": [["--bind", path, path], ["-o", "remount,bind,ro" + opts, path]],
             "rw": [["--bind", path, path], ["-o", "remount,bind,rw" + opts, path]],
             "file": [["--bind", "/dev/null", path]],
             "dir": [["-t", "tmpfs", "-o", "mode=0700", "copeca-masked", path]]}[op]
    for step in steps:
        done = subprocess.run([mount, *step], stdin=subprocess.DEVNULL, capture_output=True)
        if done.returncode:
            if not os.path.lexists(path):  # removed since it was listed: nothing to guard
                break
            said = " ".join(done.stderr.decode("utf-8", "replace").split())
            sys.stderr.write(f"copeca-action: sandbox: cannot mount {path} ({op}): {said}\\n")
            sys.exit(112)
if fd != "-":
    os.write(int(fd), b"ready\\n")
    os.close(int(fd))
os.execvp(argv[0], argv)
"""
"""Run by the harness's interpreter inside the `unshare` fallback's own mount namespace,
before the untrusted code (its arguments: the `mount` program, the ready pipe's descriptor or
`-`, then the operations): each `OP PATH MOUNT-OPTIONS` triple (see `view_ops`) up to `--`,
then, when its second argument is a file descriptor, `ready` written to it and closed (the
code never holds it), then the code. A mount that fails stops it with exit 112, before the
code starts; but for a path gone since the harness listed it (another harness's folder of git
views, removed as that harness exited): nothing is left there to guard, as for one made after
the code started."""
VIEW_FAILED = 112
"""`UNSHARE_VIEW`'s exit code when a mount failed."""

_VIEW_PYTHON = (sys.executable, "-I", "-S", "-c")
_KEPT_FLAGS = ("nosuid", "nodev", "noexec", "noatime", "nodiratime", "relatime",
               "strictatime")


def mount_program() -> str:
    return shutil.which("mount") or "/bin/mount"


def view_command(ops: Sequence[str], ready_fd: int | None = None) -> list[str]:
    """What goes between the `unshare` prefix and the untrusted command: `UNSHARE_VIEW` with
    `ops`, told to write `ready` to `ready_fd` (when given) once every mount is made."""
    return [*_VIEW_PYTHON, UNSHARE_VIEW, mount_program(),
            "-" if ready_fd is None else str(ready_fd), *ops, "--"]


def view_ops(mounts: Mapping[Path, Mode]) -> list[str]:
    """`UNSHARE_VIEW`'s operations: each existing folder of `mounts` (but `/`) bound
    read-only or writable, outermost first (so a writable folder inside a read-only one is
    made after it and none hides one made before it), with the flags its mount must keep;
    last, each key file and home credential replaced by an empty file or folder."""
    order = sorted((len(p.parts), p) for p in mounts if p.exists() and p != Path("/"))
    ops: list[str] = []
    for _, path in order:
        ops += [mounts[path], str(path), locked_flags(path)]
    for path in dict.fromkeys(p.resolve() for p in (*secret_files(), *home_credentials())):
        if path.is_file():
            ops += ["file", str(path), ""]
        elif path.is_dir():
            ops += ["dir", str(path), ""]
    return ops


def locked_flags(path: Path) -> str:
    """The flags of the mount holding `path` that a remount must repeat (in a user
    namespace they are locked: a remount dropping one is refused), as `,flag,...`."""
    best: tuple[int, str] = (-1, "")
    try:
        lines = Path("/proc/self/mountinfo").read_text().splitlines()
    except OSError:
        return ""
    for line in lines:
        fields = line.split()
        if len(fields) < 6:
            continue
        point = Path(re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), fields[4]))
        if path.is_relative_to(point) and len(point.parts) >= best[0]:
            best = (len(point.parts), fields[5])
    return "".join(f",{f}" for f in best[1].split(",") if f in _KEPT_FLAGS)


@functools.cache
def view_works(variant: tuple[str, ...]) -> bool:
    """Whether `UNSHARE_VIEW` can mount here (read-only, writable again inside, a file
    masked) under the `unshare` prefix `variant`, tried on a folder of its own."""
    with tempfile.TemporaryDirectory(prefix="copeca-view-probe-") as tmp:
        root = Path(tmp)
        (root / "in").mkdir()
        (root / "key").write_text("secret")
        ops = ["ro", str(root), locked_flags(root), "rw", str(root / "in"),
               locked_flags(root), "file", str(root / "key"), ""]
        check = ('! touch "$1/no" 2>/dev/null && touch "$1/in/yes" && '
                 '[ ! -s "$1/key" ]')
        try:
            done = subprocess.run(
                [*variant, *view_command(ops), "/bin/sh", "-c", check, "sh", str(root)],
                capture_output=True, timeout=10, check=False)
        except (OSError, subprocess.TimeoutExpired):
            return False
        return done.returncode == 0 and (root / "in" / "yes").is_file() and not (
            root / "no").exists() and (root / "key").read_text() == "secret"


def was_ready(ready_r: int) -> bool:
    """Whether `UNSHARE_VIEW` said `ready` on the pipe read by `ready_r` (called once the
    process has ended; the descriptor stays open)."""
    os.set_blocking(ready_r, False)
    with contextlib.suppress(BlockingIOError):
        return os.read(ready_r, 64) == b"ready\n"
    return False
