"""`copeca-action analyze --format html`: the page, its optional inputs, their errors."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from copeca_action.cli import main
from copeca_action.report._simulate import Population, make_rows


def write(path: Path, rows: list[dict[str, object]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_html_output_with_verification_and_coverage(tmp_path: Path) -> None:
    rows = make_rows(Population(), 8, 2, np.random.default_rng(3))
    results = write(tmp_path / "results.jsonl", rows)
    cov = tmp_path / "coverage.json"
    cov.write_text(json.dumps([{"arm": "baseline", "coverage_by_step": [0.2, 0.5], "runs": 4},
                               {"arm": "codesearch", "coverage_by_step": [0.6], "runs": 4}]))
    out = tmp_path / "report.html"
    assert main(["analyze", str(results), "--format", "html", "--out", str(out),
                 "--resamples", "200", "--coverage", str(cov), "--bundle-sha256", "ab" * 32,
                 "--signed-by", "k1"]) == 0
    text = out.read_text()
    assert text.startswith("<!DOCTYPE html>") and 'data-chart="coverage"' in text
    assert "signed by keyid <code>k1</code>" in text and 'data-chart="spend"' in text
    assert "copeca-action 0." in text


def test_a_bad_coverage_file_names_the_flag_and_field(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    results = write(tmp_path / "results.jsonl",
                    make_rows(Population(), 6, 2, np.random.default_rng(3)))
    cov = tmp_path / "coverage.json"
    cov.write_text(json.dumps([{"arm": "baseline", "coverage_by_step": "x", "runs": 1}]))
    assert main(["analyze", str(results), "--format", "html", "--coverage", str(cov)]) == 2
    err = capsys.readouterr().err
    assert "--coverage" in err and "0.coverage_by_step" in err
