"""The fastapi 0.115.6 sdist (its tests included) and a Python that can run them.

Both come from PyPI, the one network the project may use, and are cached between runs in
$COPECA_TEST_CACHE (default ~/.cache/copeca-action-tests). Without them the tests skip.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path
from typing import Any

import pytest

SDIST = "fastapi-0.115.6.tar.gz"
SHA256 = "9ec46f7addc14ea472958a96aae5b5de65f39721a46aaf5705c480d9a8b76654"
TEST_DEPS = ["starlette>=0.40.0,<0.42.0", "pydantic>=2,<3", "httpx>=0.27,<0.29",
             "pytest>=7.1.3,<9", "anyio>=3.2.1,<4"]
"""What fastapi 0.115.6 and the tests used here import (from its pyproject and requirements)."""

DATA = Path(__file__).resolve().parents[2] / "data" / "patcheval"


def cache_dir() -> Path:
    root = Path(os.environ.get("COPECA_TEST_CACHE", Path.home() / ".cache/copeca-action-tests"))
    root.mkdir(parents=True, exist_ok=True)
    return root


@pytest.fixture(scope="session")
def fastapi_checkout(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The unpacked sdist, sha256-checked."""
    cache = cache_dir()
    tarball = cache / SDIST
    if not tarball.exists():
        proc = subprocess.run([sys.executable, "-m", "pip", "download", "-q", "fastapi==0.115.6",
                               "--no-deps", "--no-binary", ":all:", "-d", str(cache)],
                              capture_output=True, text=True, timeout=300)
        if proc.returncode != 0 or not tarball.exists():
            pytest.skip(f"fastapi sdist not cached and not downloadable: {proc.stderr[-300:]}")
    if hashlib.sha256(tarball.read_bytes()).hexdigest() != SHA256:
        pytest.fail(f"{tarball}: sha256 mismatch (expected {SHA256})")
    dest = tmp_path_factory.mktemp("sdist")
    with tarfile.open(tarball) as tar:
        tar.extractall(dest, filter="data")
    return dest / "fastapi-0.115.6"


@pytest.fixture(scope="session")
def fastapi_python() -> Path:
    """bin/ of a venv with fastapi's runtime and test dependencies (not fastapi itself: the
    tests import the checkout's)."""
    venv = cache_dir() / "fastapi-0.115.6-venv"
    stamp = venv / ".copeca-ready"
    if not stamp.exists():
        subprocess.run([sys.executable, "-m", "venv", "--clear", str(venv)], check=True)
        proc = subprocess.run([str(venv / "bin/python"), "-m", "pip", "install", "-q",
                               *TEST_DEPS], capture_output=True, text=True, timeout=600)
        if proc.returncode != 0:
            pytest.skip(f"cannot install fastapi's test dependencies: {proc.stderr[-300:]}")
        stamp.write_text("ok\n")
    return venv / "bin"


@pytest.fixture(scope="session")
def python_rootfs_tar() -> Path:
    """A Debian bookworm minbase root file system with python3, as a tar (cached): built by
    debootstrap from the Debian mirror, since no image can be pulled."""
    import local_image  # image/, put on sys.path by tests/integration/conftest.py

    try:
        return local_image.base_rootfs_tar(cache_dir())
    except RuntimeError as exc:
        pytest.skip(str(exc))


@pytest.fixture(scope="session")
def fastapi_image(docker_client: Any, python_rootfs_tar: Path, fastapi_python: Path,
                  tmp_path_factory: pytest.TempPathFactory) -> str:
    """Debian's python3 plus the test venv's packages (same Python minor version), built
    locally: the docker sandbox can then run fastapi's tests."""
    from copeca_action.evaluate import build_image

    ctx = tmp_path_factory.mktemp("fastapi-image")
    os.link(python_rootfs_tar, ctx / "rootfs.tar")
    site = next((fastapi_python.parent / "lib").glob("python3*/site-packages"))
    if site.parent.name != "python3.11":
        pytest.skip(f"the test venv is {site.parent.name}; Debian bookworm has python3.11")
    shutil.copytree(site, ctx / "site-packages",
                    ignore=shutil.ignore_patterns("pip", "pip-*", "setuptools*", "_distutils*"))
    (ctx / "Dockerfile").write_text(
        "FROM scratch\nADD rootfs.tar /\n"
        "COPY site-packages/ /usr/local/lib/python3.11/dist-packages/\nCMD [\"python3\"]\n")
    return str(build_image(docker_client, ctx / "Dockerfile",
                           tag="localhost/copeca-test-fastapi:1"))
