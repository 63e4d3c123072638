"""Fixtures for the scripted-server tests: the example scripts and a fixture work dir."""

from __future__ import annotations

from pathlib import Path

import pytest

SCRIPTS = Path(__file__).with_name("scripts")


@pytest.fixture
def scripts_dir() -> Path:
    return SCRIPTS


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    work = tmp_path / "work"
    work.mkdir()
    (work / "greeting.txt").write_text("hello from the fixture\n")
    (work / "version.py").write_text("VERSION = 1\n")
    return work
