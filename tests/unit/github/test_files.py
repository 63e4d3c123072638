from __future__ import annotations

import io
import re
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


def test_a_cut_summary_closes_what_it_cut_and_says_so_outside_it(tmp_path: Path) -> None:
    """The cut was at a byte: it left the full report's `<details>` open (the note folded
    away inside it), a code fence open (the note rendered as code, and whatever the runner
    appended after it too), and half a table row."""
    from markdown_it import MarkdownIt

    note = "(summary truncated: the full report is in the bundle)"
    table = ("<details><summary>The full report</summary>\n\n| task | cost |\n|---|---|\n"
             + "".join(f"| task {i} | é {i} |\n" for i in range(60_000)) + "\n</details>\n")
    fence = ("<details>\n\n````text\n" + "log ```ü\n" * 120_000 + "````\n\n</details>\n")
    for i, markdown in enumerate((table, fence)):
        path = tmp_path / f"summary{i}.md"
        write_summary(path, markdown)
        text = path.read_text()
        assert len(text.encode()) <= MAX_SUMMARY_BYTES
        assert text.count("<details>") == text.count("</details>") == 1
        body, _, after = text.rpartition("</details>")
        assert after.strip() == f"*{note}*"  # the note after the folded block, not in it
        lines = body.rstrip().splitlines()
        assert re.fullmatch("````" if i else r"\| task \d+ \| é \d+ \|", lines[-1])  # whole rows
        html = MarkdownIt("commonmark").enable("table").render(text)
        assert f"<p><em>{note}</em></p>" in html


def test_a_summary_within_the_limit_is_written_as_it_is(tmp_path: Path) -> None:
    path = tmp_path / "summary.md"
    text = "<details>\n\n```\n" + "x\n" * 1000 + "```\n\n</details>\n"
    write_summary(path, text)
    assert path.read_text() == text


def test_a_link_or_a_fifo_in_place_of_a_runner_file_is_refused(tmp_path: Path) -> None:
    """Never written through a link (it could lead anywhere) nor to a FIFO (the open blocked
    for good without a reader): a GitHubError naming the file, at once."""
    import os

    import pytest

    from copeca_action.errors import GitHubError

    target = tmp_path / "elsewhere"
    target.write_text("kept\n")
    (tmp_path / "link").symlink_to(target)
    os.mkfifo(tmp_path / "fifo")
    for name in ("link", "fifo"):
        with pytest.raises(GitHubError, match=f"{name}: not a regular file"):
            write_outputs(tmp_path / name, {"verdict": "improvement"})
        with pytest.raises(GitHubError, match=f"{name}: not a regular file"):
            write_summary(tmp_path / name, "# hi")
    assert target.read_text() == "kept\n"
