"""Thresholds as a person writes them in a scenario: a fraction below 1 or a percentage; a
bare number of 1 or more is ambiguous and refused there, never read as +1000%."""

from __future__ import annotations

from pathlib import Path

import pytest

from copeca_action.errors import ConfigError
from copeca_action.scenario import Thresholds, load_scenario

SCENARIO = """\
name: s
tasks:
  include: ["fastapi/*"]
modes: [baseline, codesearch]
models: [claude-sonnet-4-5]
model_runner_map: {{claude-sonnet-4-5: claude}}
thresholds:
  alert: {alert}
  fail: {fail}
"""


def write(tmp_path: Path, alert: str, fail: str) -> Path:
    path = tmp_path / "s.yaml"
    path.write_text(SCENARIO.format(alert=alert, fail=fail))
    return path


@pytest.mark.parametrize("fail", ["10", "1", "2.5"])
def test_a_bare_threshold_of_one_or_more_is_refused_with_file_line_and_field(
        tmp_path: Path, fail: str) -> None:
    path = write(tmp_path, "0.05", fail)
    with pytest.raises(ConfigError) as info:
        load_scenario(path)
    (problem,) = info.value.problems
    assert str(problem).startswith(f"{path}:9: thresholds.fail: a bare {float(fail):g} is "
                                   "ambiguous")
    assert f"write {float(fail):g}%" in str(problem)


def test_percentages_and_fractions_are_read_as_written(tmp_path: Path) -> None:
    t = load_scenario(write(tmp_path, "5%", "1000%")).thresholds
    assert (t.alert, t.fail) == (0.05, 10.0)
    t = load_scenario(write(tmp_path, "0.05", "0.10")).thresholds
    assert (t.alert, t.fail) == (0.05, 0.10)


def test_a_program_may_still_set_plus_1000_percent() -> None:
    """An action input of `1000%` laid over the scenario, or a report read back: no person
    typed a bare 10 there."""
    assert Thresholds(fail=10.0).fail == 10.0
    assert Thresholds.model_validate({"alert": 2.0, "fail": 10.0}).alert == 2.0
