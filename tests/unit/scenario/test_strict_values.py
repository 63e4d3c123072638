"""Values are taken as written: no number from text, no whole number from 2.0, no YAML 1.1
reading (`0x10`, `010`, `yes`, `1:30`) of what a person typed. The files of
tests/data/invalid/ cover each refused value of each kind of file; these tests cover what
a fixture file cannot (what is still accepted, the free-form settings, several errors)."""

from __future__ import annotations

from pathlib import Path

import pytest

from copeca_action._util.yamlio import parse_model, parse_yaml
from copeca_action.errors import ConfigError
from copeca_action.scenario import Mode, Scenario

SCENARIO = """\
name: s
tasks:
  include: ["fastapi/*"]
modes: [baseline, codesearch]
models: [claude-sonnet-4-5]
model_runner_map: {claude-sonnet-4-5: claude}
"""


def scenario(extra: str) -> Scenario:
    return parse_model(parse_yaml(SCENARIO + extra, Path("s.yaml")), Scenario)


def refused(text: str, model: type[Scenario] | type[Mode] = Scenario) -> list[str]:
    with pytest.raises(ConfigError) as err:
        parse_model(parse_yaml(text, Path("s.yaml")), model)
    return [str(p) for p in err.value.problems]


@pytest.mark.parametrize(("extra", "expected"), [
    ("repetitions: '2'", "s.yaml:7: repetitions: expected a whole number, got the text '2'"),
    ("repetitions: 2.0", "s.yaml:7: repetitions: expected a whole number, got 2.0 (write 2)"),
    ("seed: 0b11", "s.yaml:7: seed: 0b11 is read as the number 3 (binary): write 3"),
    ("seed: 0x10", "s.yaml:7: seed: 0x10 is read as the number 16 (hexadecimal): write 16"),
    ("seed: 017", "s.yaml:7: seed: 017 is read as the number 15 (octal: a leading 0)"),
    ("budget_usd: 2.5e+3", None),
    ("budget_usd: 2.5e3", "budget_usd: expected a number, got the text '2.5e3': YAML reads a "
                          "number with an exponent as text unless it has a dot and a signed "
                          "exponent; write 2500"),
    ("run_budget_usd: 1e-3", "write 0.001"),
    ("budget_usd: 1e300", "write 1.0e+300"),
    ("timeout_s: 1:30:00", "timeout_s: 1:30:00 is read as the number 5400 (base 60)"),
    ("adaptive: {enabled: off}", "adaptive.enabled: off is read as false by YAML 1.1"),
    ("adaptive: {alpha: 10}", "adaptive.alpha: 10 is more than 1: this is a fraction, not a "
                              "percentage (0.05 is 5%); write 0.1 for 10%"),
    ("thresholds: {control_tolerance: 20}", "write 0.2 for 20%"),
    ("thresholds: {alert: '0.05'}", "thresholds.alert: expected a number, got the text "
                                    "'0.05' (remove the quotes)"),
])
def test_a_value_not_plainly_of_its_type_is_refused(extra: str, expected: str | None) -> None:
    if expected is None:
        assert scenario(extra).budget_usd == 2500.0
        return
    shown = refused(SCENARIO + extra)
    assert any(expected in s for s in shown), shown
    assert len(shown) == 1, shown  # the form, not also the type error it causes


@pytest.mark.parametrize("extra", [
    "seed: 0", "seed: +7", "seed: -0", "budget_usd: 5", "budget_usd: 0.5",
    "adaptive: {enabled: True, alpha: 0.05}", "thresholds: {alert: '5%', fail: 10%}",
    "thresholds: {min_adoption: 1}",
    "description: 'yes 0x10 1:30'",  # text in quotes stays text
])
def test_plain_values_are_still_read(extra: str) -> None:
    scenario(extra)


def test_a_yaml_11_form_inside_free_form_settings_is_refused() -> None:
    """A mode's agent_config is JSON for the CLI: `on` would be written there as true."""
    mode = "name: tool\nagent_config:\n  telemetry: on\n  port: 0x1F90\n  name: 'on'\n"
    shown = refused(mode, Mode)
    assert shown == [
        "s.yaml:3: agent_config.telemetry: on is read as true by YAML 1.1 but as text by "
        "YAML 1.2: write true, or quote it ('on') if you mean the text",
        "s.yaml:4: agent_config.port: 0x1F90 is read as the number 8080 (hexadecimal): "
        "write 8080, or quote it ('0x1F90') if you mean the text"]


def test_the_form_and_the_other_errors_are_all_named() -> None:
    shown = refused(SCENARIO + "seed: 0x10\nrepetitions: '2'\n")
    assert [s.split(": ")[0] for s in shown] == ["s.yaml:7", "s.yaml:8"]


def test_a_program_built_scenario_may_still_change_fields() -> None:
    """`run --workers` and the action's inputs pass Python numbers: accepted as such."""
    base = scenario("")
    changed = Scenario.model_validate({**base.model_dump(), "workers": 4, "budget_usd": 3})
    assert changed.workers == 4 and changed.budget_usd == 3.0
