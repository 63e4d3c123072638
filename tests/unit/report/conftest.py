"""Fixtures for the report tests."""

from __future__ import annotations

import pytest
from report_factory import Make, make_simulated


@pytest.fixture
def simulated() -> Make:
    return make_simulated
