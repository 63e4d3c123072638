"""Debian pins: find the upstream `.orig.tar.gz` (a local folder first, then the apt client,
which needs a `deb-src` entry), check its sha256 before use, and snapshot it like an sdist."""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from collections.abc import Sequence
from pathlib import Path

from copeca_action._util.hashing import sha256_file
from copeca_action.errors import WorkspaceError
from copeca_action.scenario import DebianPin
from copeca_action.workspace._sdist import snapshot_archive

APT_TIMEOUT_S = 600


def find_local_orig(pin: DebianPin, dirs: Sequence[Path]) -> Path | None:
    """The pinned tarball in `dirs`: right file name and right sha256 (others are ignored)."""
    for folder in dirs:
        candidate = folder / pin.filename
        if candidate.is_file() and sha256_file(candidate) == pin.sha256:
            return candidate
    return None


def apt_download_orig(package: str, into: Path) -> list[Path]:
    """`apt-get source --download-only --tar-only` into `into`; returns the main upstream
    tarballs it left there (component tarballs `.orig-<name>` are not the project).
    --tar-only: Debian's packaging may be gone from a mirror that still serves the tarball."""
    into.mkdir(parents=True, exist_ok=True)
    try:
        proc = subprocess.run(["apt-get", "source", "--download-only", "--tar-only", "-qq",
                               package], cwd=into, text=True, capture_output=True,
                              timeout=APT_TIMEOUT_S, check=False, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise WorkspaceError(f"apt-get source {package} could not run: {exc}") from exc
    main = sorted(p for p in into.glob("*.orig.tar.*") if ".orig-" not in p.name)
    # A component tarball the mirror no longer serves (node-yargs's `.orig-types-yargs`) makes
    # apt exit non-zero after the main tarball arrived; the caller checks its sha256.
    if proc.returncode != 0 and not main:
        raise WorkspaceError(f"apt-get source {package} failed (exit {proc.returncode}; a "
                             f"deb-src entry and `apt-get update` are needed): "
                             f"{(proc.stderr or proc.stdout).strip()[-400:]}")
    return main


def download_orig(pin: DebianPin, dest_dir: Path) -> Path:
    """Fetch the pinned tarball with apt into a private folder, keep it only if its sha256
    matches, and move it into `dest_dir` under its pool file name."""
    dest_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=".apt-", dir=dest_dir) as tmp:
        got = apt_download_orig(pin.package, Path(tmp))
        for path in got:
            if sha256_file(path) == pin.sha256:
                final = dest_dir / pin.filename
                shutil.move(str(path), final)
                return final
    names = ", ".join(p.name for p in got) or "nothing"
    raise WorkspaceError(f"apt-get source {pin.package} gave {names}; none has the pinned "
                         f"sha256 {pin.sha256[:12]}… of {pin.filename} (the archive moved on "
                         "to another version, or the pin is wrong)")


def snapshot_debian(archive: Path, pin: DebianPin, git_dir: Path) -> str:
    """Check `archive` against the pin, then commit it into `git_dir` exactly like an sdist."""
    if sha256_file(archive) != pin.sha256:
        raise WorkspaceError(f"{archive} does not have the pinned sha256 {pin.sha256[:12]}…")
    message = f"{pin.package} {pin.version} (debian orig sha256 {pin.sha256})"
    return snapshot_archive(archive, git_dir, message, f"debian-{pin.version}")
