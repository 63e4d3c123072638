from __future__ import annotations

from pathlib import Path

import pytest

from copeca_action._util.yamlio import format_loc, load_yaml, parse_model
from copeca_action.errors import ConfigError
from copeca_action.scenario import Task


def test_lines_are_recorded_for_nested_values(tmp_path: Path) -> None:
    path = tmp_path / "t.yaml"
    path.write_text("a:\n  b:\n    - x\n    - y: 1\n")
    doc = load_yaml(path)
    assert doc.line_of(("a", "b", 1, "y")) == 4
    assert doc.line_of(("a", "b", 0)) == 3
    assert doc.line_of(("a", "missing")) == 1


def test_every_error_is_reported_not_just_the_first(tmp_path: Path) -> None:
    path = tmp_path / "t.yaml"
    path.write_text("id: a/b\nrepo: fastapi\ntype: edit\ncategory: nope\nextra: 1\n")
    with pytest.raises(ConfigError) as info:
        parse_model(load_yaml(path), Task)
    fields = {p.field for p in info.value.problems}
    assert {"category", "extra", "language", "prompt", "source", "grading"} <= fields
    assert all(p.line is not None for p in info.value.problems)


def test_format_loc() -> None:
    assert format_loc(("grading", "answer", "required", 0)) == "grading.answer.required[0]"
    assert format_loc(()) == ""
