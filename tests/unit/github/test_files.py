from __future__ import annotations

import io
from pathlib import Path

from gh_support import parse_outputs

from copeca_action.github import format_output, mask, write_outputs, write_summary
from copeca_action.github._files import MAX_SUMMARY_BYTES


def test_outputs_round_trip_multiline_with_unique_delimiters(tmp_path: Path) -> None:
    out = tmp_path / "out"
    tricky = "line one\nEOF\nghadelimiter_x\nlast"
    write_outputs(out, {"verdict": "improvement", "report": tricky, "empty": ""})
    assert parse_outputs(out) == {"verdict": "improvement", "report": tricky, "empty": ""}
    a, b = format_output("x", "v"), format_output("x", "v")
    assert a.split("\n")[0] != b.split("\n")[0]  # random delimiters


def test_summary_is_appended_and_capped(tmp_path: Path) -> None:
    path = tmp_path / "summary.md"
    write_summary(path, "# one")
    write_summary(path, "x" * (MAX_SUMMARY_BYTES + 10))
    text = path.read_text()
    assert text.startswith("# one\n")
    assert len(text.encode()) <= MAX_SUMMARY_BYTES + 10
    assert text.rstrip().endswith("*(summary truncated: the full report is in the bundle)*")


def test_mask_every_line_of_a_secret() -> None:
    buf = io.StringIO()
    mask(["tok", "-----BEGIN KEY-----\nabc\n"], buf)
    assert buf.getvalue().splitlines() == ["::add-mask::tok", "::add-mask::-----BEGIN KEY-----",
                                           "::add-mask::abc"]
