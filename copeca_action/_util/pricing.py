"""When the bundled runners' prices were last checked, read cheaply from their files."""

from __future__ import annotations

import contextlib
import datetime as dt
import re
from collections.abc import Iterable

from copeca_action._util.paths import runners_dir

_PRICING_UPDATED = re.compile(r"^pricing_updated:\s*['\"]?(\d{4}-\d{2}-\d{2})", re.MULTILINE)


def pricing_dates(names: Iterable[str]) -> dict[str, dt.date]:
    """When the bundled runners of these names last had their prices checked, for records
    that do not carry the date themselves (older records, copeca's). Read from the runner
    files' `pricing_updated` line: loading the runners would cost more than the analysis of
    a small file."""
    out: dict[str, dt.date] = {}
    for name in names:
        path = runners_dir() / f"{name}.yaml"
        if not name or "/" in name or not path.is_file():
            continue
        found = _PRICING_UPDATED.search(path.read_text(encoding="utf-8", errors="replace"))
        if found:
            with contextlib.suppress(ValueError):
                out[name] = dt.date.fromisoformat(found.group(1))
    return out
