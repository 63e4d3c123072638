"""Browser tests: one headless Chromium for the module; skipped when it is not installed."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "unit" / "render"))

from cdp import Browser, chromium_binary


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    binary = chromium_binary()
    if binary is None:
        pytest.skip("chromium is not installed (Debian: apt-get install chromium)")
    b = Browser(binary)
    try:
        yield b
    finally:
        b.close()
