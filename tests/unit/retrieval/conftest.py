"""Fixtures: small repositories on disk, and the pinned fastapi sdist (cached, verified)."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import tarfile
from collections.abc import Callable
from pathlib import Path

import pytest

FASTAPI_VERSION = "0.115.6"
FASTAPI_SHA256 = "9ec46f7addc14ea472958a96aae5b5de65f39721a46aaf5705c480d9a8b76654"
ROOT = Path(__file__).resolve().parents[3]

MakeRepo = Callable[[dict[str, str]], Path]


@pytest.fixture
def make_repo(tmp_path: Path) -> MakeRepo:
    """Write `{relative path: text}` under a fresh directory and return it."""

    def make(files: dict[str, str]) -> Path:
        root = tmp_path / "repo"
        for rel, text in files.items():
            target = root / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(text.encode())
        root.mkdir(exist_ok=True)
        return root

    return make


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture(scope="session")
def fastapi_src() -> Path:
    """fastapi 0.115.6 sdist, unpacked: downloaded once into the test cache (PyPI), verified by
    sha256; the tests using it skip when it cannot be had (offline without a cache)."""
    cache = Path(os.environ.get("COPECA_TEST_CACHE", ROOT / ".cache" / "test-data"))
    archive = cache / f"fastapi-{FASTAPI_VERSION}.tar.gz"
    unpacked = cache / f"fastapi-{FASTAPI_VERSION}"
    if not archive.is_file():
        cache.mkdir(parents=True, exist_ok=True)
        try:
            subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps",
                            "--no-binary", ":all:", "-d", str(cache),
                            f"fastapi=={FASTAPI_VERSION}"],
                           check=True, capture_output=True, timeout=120)
        except (subprocess.SubprocessError, OSError) as exc:
            pytest.skip(f"fastapi {FASTAPI_VERSION} sdist not available: {exc}")
    if _sha256(archive) != FASTAPI_SHA256:
        pytest.skip(f"{archive} does not have the pinned sha256")
    if not (unpacked / "fastapi" / "utils.py").is_file():
        with tarfile.open(archive) as tar:
            tar.extractall(cache, filter="data")
    return unpacked
