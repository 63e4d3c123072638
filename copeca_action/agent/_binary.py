"""Finding an agent CLI's executable and asking it its version."""

from __future__ import annotations

import functools
import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

from copeca_action._util.paths import runners_dir
from copeca_action.errors import InfraError
from copeca_action.scenario import Runner

BIN_DIR_ENV = "COPECA_RUNNERS_BIN"
"""A directory holding the CLIs (the image sets it); searched before runners/node_modules."""
_VERSION_RE = re.compile(r"\d+\.\d+\.\d+(?:[-+.][0-9A-Za-z.-]+)?")


def _candidates(binary: str) -> list[Path]:
    found: list[Path] = []
    if os.environ.get(BIN_DIR_ENV):
        found.append(Path(os.environ[BIN_DIR_ENV]) / binary)
    found.append(runners_dir() / "node_modules" / ".bin" / binary)
    on_path = shutil.which(binary)
    if on_path:
        found.append(Path(on_path))
    return found


def resolve_binary(runner: Runner) -> Path:
    """The executable for a runner: an absolute `binary`, else `$COPECA_RUNNERS_BIN`, the
    pinned install in runners/node_modules/.bin, then PATH.

    Raises:
        InfraError: none of them exists (the message says how to install the pinned CLIs).
    """
    if os.path.isabs(runner.binary):
        path = Path(runner.binary)
        if path.is_file() and os.access(path, os.X_OK):
            return path
        raise InfraError(f"runner {runner.name!r}: binary {path} does not exist or is not "
                         "executable")
    for path in _candidates(runner.binary):
        if path.is_file() and os.access(path, os.X_OK):
            return path
    where = runners_dir() / "node_modules" / ".bin"
    raise InfraError(f"runner {runner.name!r}: {runner.binary!r} not found in ${BIN_DIR_ENV}, "
                     f"{where} or PATH; run `make node` (npm ci in runners/) to install the "
                     "pinned CLIs")


def cli_version(runner: Runner) -> str | None:
    """The CLI's version (`2.1.330`), or None when it is missing or prints none."""
    try:
        binary = resolve_binary(runner)
    except InfraError:
        return None
    return _version(str(binary), tuple(runner.version_args), runner.config_dir_env)


@functools.lru_cache(maxsize=32)
def _version(binary: str, args: tuple[str, ...], config_env: str) -> str | None:
    # A throwaway HOME and config dir: asking a version must not touch the user's files.
    with tempfile.TemporaryDirectory(prefix="copeca-version-") as tmp:
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": tmp,
               config_env: tmp, "TMPDIR": tmp}
        try:
            done = subprocess.run([binary, *args], env=env, stdin=subprocess.DEVNULL,
                                  capture_output=True, text=True, timeout=30, check=False)
        except (OSError, subprocess.TimeoutExpired):
            return None
    match = _VERSION_RE.search(done.stdout) or _VERSION_RE.search(done.stderr)
    return match.group(0) if match else None
