"""Integration tests of the engine reuse the unit helpers (throwaway corpus, fake agent)."""

from __future__ import annotations

import sys
from pathlib import Path

UNIT = Path(__file__).resolve().parents[2] / "unit"
for sub in ("workspace", "engine"):
    if str(UNIT / sub) not in sys.path:
        sys.path.insert(0, str(UNIT / sub))
