"""Shared fixtures: paths of the checkout's corpus and test data."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="session")
def root() -> Path:
    return ROOT


@pytest.fixture(scope="session")
def corpus_root() -> Path:
    return ROOT / "corpus"
