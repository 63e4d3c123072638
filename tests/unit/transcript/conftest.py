from __future__ import annotations

from pathlib import Path

import pytest

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "transcripts"


@pytest.fixture
def fixtures() -> Path:
    return FIXTURES
