"""Which build of copeca-action computes a report: its version, a digest of the code and data
a report is computed and rendered with, and numpy's version. A bundle signs the build that
wrote its report; `verify` names both builds when the report it recomputes is not the one
the bundle publishes, since another build of the same version may word it otherwise.

Computed on first use (about 6 ms: some 100 files, 0.8 MB, read and hashed), never at
start-up.
"""

from __future__ import annotations

import functools
import hashlib
from dataclasses import dataclass

from copeca_action._util.paths import PACKAGE_DIR, runners_dir
from copeca_action._util.text import shown

REPORT_CODE = ("__init__.py", "errors.py", "_util", "bundle", "conclude", "plan", "records",
               "render", "report", "retrieval", "scenario")
"""The package's files and folders (each folder's .py files) that a bundle's report is
computed and rendered from, verify's recompute included (tests/unit/bundle/test_build_identity.py
checks that the recompute imports nothing outside them); with the bundled runner files,
whose `pricing_updated` dates the report reads for records that carry none."""


def _files() -> list[tuple[str, bytes]]:
    found = []
    for part in REPORT_CODE:
        path = PACKAGE_DIR / part
        for file in sorted(path.rglob("*.py")) if path.is_dir() else [path]:
            found.append((f"copeca_action/{file.relative_to(PACKAGE_DIR).as_posix()}", file))
    runners = runners_dir()
    found += [(f"runners/{f.name}", f) for f in sorted(runners.glob("*.yaml"))]
    return [(name, file.read_bytes()) for name, file in sorted(found)]


@functools.cache
def report_code() -> str | None:
    """sha256 (hex) of the report's sources and data, each file as its path (relative to the
    package, or runners/NAME.yaml), its size and its bytes; the same in a checkout, an
    editable install, a wheel or the image. None when a file cannot be read."""
    try:
        files = _files()
    except OSError:
        return None
    digest = hashlib.sha256()
    for name, data in files:
        digest.update(f"{name}\0{len(data)}\0".encode())
        digest.update(data)
    return digest.hexdigest()


def numpy_version() -> str:
    """The numpy the statistics run on (their arrays and seeded resamples); imported here
    when not yet (a report loads it anyway; importlib.metadata would cost ~30 ms)."""
    import numpy

    return str(numpy.__version__)


@dataclass(frozen=True)
class Build:
    """A build as a bundle records it; None parts were not recorded (an older bundle)."""

    version: str
    report_code: str | None
    numpy: str | None

    @classmethod
    def this(cls) -> Build:
        from copeca_action import __version__

        return cls(__version__, report_code(), numpy_version())

    @property
    def known(self) -> bool:
        return self.report_code is not None and self.numpy is not None

    def __str__(self) -> str:
        """The build for a message; each part escaped (`_util/text.shown`): a bundle's
        maker chose them."""
        version = shown(self.version, 64)
        if not self.known:
            return (f"copeca-action {version} (build not recorded: made before bundles "
                    "recorded their report's code)")
        assert self.report_code is not None
        return f"copeca-action {version} (report code {shown(self.report_code[:12])}, " \
               f"numpy {shown(self.numpy, 64)})"

    def same(self, other: Build) -> bool:
        """Known to be the same build: both recorded, every part equal."""
        return self.known and other.known and self == other

    def differences(self, other: Build) -> str:
        """Which parts differ from `other` (`their version and report code differ`), or
        why the two cannot be shown to be the same."""
        if not self.known or not other.known:
            return "the build that made it is not recorded" if not self.known else \
                "this build's code could not be read"
        parts = [name for name, mine, theirs in (
            ("version", self.version, other.version),
            ("report code", self.report_code, other.report_code),
            ("numpy", self.numpy, other.numpy)) if mine != theirs]
        return f"their {' and '.join(parts)} differ{'s' if len(parts) == 1 else ''}"
