"""A bundle member's path parts match the allowed characters wholly: `$` in the pattern
matched before a final newline, so a part ending in one passed."""

from __future__ import annotations

import pytest

from copeca_action.bundle._layout import check_member_path


@pytest.mark.parametrize("path", ["results.jsonl\n", "runs/r1\n/stdout.jsonl"])
def test_a_bundle_member_part_ending_in_a_newline_is_refused(path: str) -> None:
    assert check_member_path(path) is not None
    assert check_member_path(path.replace("\n", "")) is None
