"""An attempt outside the statistics whose record claims a cost no run has (1e308) is an
unknown cost in `analyze`'s spend account, on both readers: never a 309-digit dollar figure
in the report (the sum of such costs is no spend)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from copeca_action import records
from copeca_action.cli import main
from copeca_action.report._simulate import Population, make_rows


def rows_with(retried: bool) -> list[dict[str, Any]]:
    rows = make_rows(Population(cost_ratio=1.2), 8, 2, np.random.default_rng(3))
    if retried:  # a superseded line: the validating reader's account (run ids repeat)
        rows.insert(0, {**rows[0], "outcome": "infra_error", "correct": False,
                        "cost_usd": 1e308})
    else:  # a final infra error that reached the agent: the columnar reader's account
        rows[0] = {**rows[0], "outcome": "infra_error", "correct": False, "cost_usd": 1e308}
    return rows


@pytest.mark.parametrize("retried", [True, False])
@pytest.mark.parametrize("fast", [True, False])
def test_a_cost_no_run_has_is_an_unknown_excluded_cost(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, retried: bool, fast: bool) -> None:
    path = tmp_path / "r.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows_with(retried)))
    with monkeypatch.context() as patch:
        if not fast:
            patch.setattr(records, "read_columns", lambda _path, _meanwhile=None: None)
        for fmt in ("md", "json"):
            out = tmp_path / f"report.{fmt}"
            assert main(["analyze", str(path), "--format", fmt, "--resamples", "200",
                         "--out", str(out)]) == 0
            text = out.read_text()
            assert not re.search(r"[0-9]{40}", text), "a figure of 40 digits"
            if fmt == "json":
                spend = json.loads(text)["spend"]
                assert spend["excluded_usd"] == 0.0 and spend["unknown_attempts"] >= 1
                assert spend["total_usd"] < 1e6
            else:
                assert "1 of them with unknown cost" in text
