"""Fixtures of the utilities' tests."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from copeca_action._util.scrub import SECRETS


@pytest.fixture
def clean_registry() -> Iterator[None]:
    """No secret registered by another test is seen, and none is left behind."""
    SECRETS.clear()
    yield
    SECRETS.clear()
