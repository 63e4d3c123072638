"""`copeca-action analyze` on results whose records carry retrieval metrics."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

from copeca_action.cli import main
from copeca_action.report._simulate import Population, make_rows


def results(tmp_path: Path) -> Path:
    """12 tasks: below that the small-sample (studentized) rule leaves an interval of
    identical per-task ratios unbounded (no spread to studentize by)."""
    rows: list[dict[str, Any]] = make_rows(Population(), 12, 2, np.random.default_rng(5))
    for r in rows:
        curve = [0.5, 1.0] if r["arm"] == "codesearch" else [0.25, 0.5]
        r["retrieval"] = {"steps": 2, "trajectory_file": {
            "auc": sum(curve) / 2, "redundancy": 0.0, "coverage_by_step": curve}}
    path = tmp_path / "results.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_html_draws_the_coverage_chart_from_the_records(tmp_path: Path) -> None:
    out = tmp_path / "report.html"
    path = results(tmp_path)
    # the records carry file-level trajectories only: no span curve, so no chart
    assert main(["analyze", str(path), "--format", "html", "--out", str(out),
                 "--resamples", "200"]) == 0
    assert 'data-chart="coverage"' not in out.read_text()
    text = path.read_text().replace('"trajectory_file"', '"trajectory_span"')
    path.write_text(text)
    assert main(["analyze", str(path), "--format", "html", "--out", str(out),
                 "--resamples", "200"]) == 0
    page = out.read_text()
    assert 'data-chart="coverage"' in page and "75%" in page  # codesearch step 1.5 → mean


def test_markdown_and_json_carry_the_section(tmp_path: Path) -> None:
    path = results(tmp_path)
    md, js = tmp_path / "r.md", tmp_path / "r.json"
    assert main(["analyze", str(path), "--out", str(md), "--resamples", "200"]) == 0
    assert "codesearch reached the gold context 2× earlier than baseline" in md.read_text()
    assert main(["analyze", str(path), "--format", "json", "--out", str(js),
                 "--resamples", "200"]) == 0
    section = json.loads(js.read_text())["retrieval"]
    line = section["comparisons"][0]["lines"][0]
    assert line["metric"] == "trajectory.file.auc" and line["ratio"] == 2.0


def test_the_retrieval_section_does_not_import_numpy_ma(tmp_path: Path) -> None:
    """np.unique and np.setdiff1d import numpy.ma on their first call: 35 ms of every
    `verify` (which recomputes this report beside its hashing: 1.26× openssl's time on a
    1 GB bundle, against a target of 1.25×). The section finds its tasks with `distinct`."""
    import subprocess
    import sys

    path = results(tmp_path)
    code = ("import sys, contextlib, io, copeca_action.cli as c\n"
            "with contextlib.redirect_stdout(io.StringIO()):\n"
            f"    code = c.main(['analyze', {str(path)!r}, '--format', 'json', "
            "'--resamples', '200'])\n"
            "print(code, 'copeca_action.report._retrieval' in sys.modules, "
            "'numpy.ma' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.splitlines()[-1]
    assert out == "0 True False", out
