from __future__ import annotations

import pytest

from copeca_action.errors import ConfigError
from copeca_action.github import PARSERS, read_inputs

BASE = {"INPUT_SCENARIO": "s.yaml"}


def test_defaults_and_both_spellings() -> None:
    inputs = read_inputs({**BASE, "INPUT_TOOL_DIR": "tool", "INPUT_FAIL-ON": "Never",
                          "INPUT_DRY_RUN": "TRUE", "INPUT_SHARD": " 2 / 4 "})
    assert inputs.tool_dir == "tool"
    assert inputs.fail_on == "never"
    assert inputs.dry_run is True
    assert inputs.shard is not None and (inputs.shard.index, inputs.shard.count) == (2, 4)
    assert inputs.comment == "always" and inputs.comment_id == "copeca"


@pytest.mark.parametrize("text,expected", [("true", True), ("False", False),
                                           ("TRUE", True), ("FALSE", False)])
def test_booleans_are_githubs(text: str, expected: bool) -> None:
    assert read_inputs({**BASE, "INPUT_CHECK_RUN": text}).check_run is expected


@pytest.mark.parametrize("text", ["yes", "No", "1", "off", "y", "tRue"])
def test_other_booleans_are_refused(text: str) -> None:
    with pytest.raises(ConfigError, match="check-run: expected true or false"):
        read_inputs({**BASE, "INPUT_CHECK_RUN": text})


def test_every_bad_input_is_named_with_what_was_expected() -> None:
    env = {**BASE, "INPUT_FAIL_ON": "sometimes", "INPUT_BUDGET_USD": "lots",
           "INPUT_SHARD": "5/4", "INPUT_DRY_RUN": "maybe", "INPUT_COMMENT_ID": "a b",
           "INPUT_ANTHROPIC_API_KEY": "secret"}
    with pytest.raises(ConfigError) as info:
        read_inputs(env)
    fields = {p.field: p.message for p in info.value.problems}
    assert set(fields) == {"fail-on", "budget-usd", "shard", "dry-run", "comment-id"}
    assert "regression, inconclusive, never" in fields["fail-on"]
    assert "'sometimes'" in fields["fail-on"]
    assert "expected a number" in fields["budget-usd"]
    assert "1 ≤ i ≤ n" in fields["shard"]


def test_secrets_are_never_echoed_in_errors() -> None:
    with pytest.raises(ConfigError) as info:
        read_inputs({**BASE, "INPUT_PULL_REQUEST": "sk-live-secret"})
    assert "sk-live-secret" in str(info.value)  # not a secret input: shown
    assert "pull-request" in str(info.value)
    inputs = read_inputs({**BASE, "INPUT_OPENAI_API_KEY": "sk-x"})
    assert "sk-x" not in repr(inputs)


def test_scenario_required_unless_merging_and_cross_checks() -> None:
    with pytest.raises(ConfigError, match="scenario"):
        read_inputs({})
    assert read_inputs({"INPUT_MERGE": "a.copeca\nb.copeca, c.copeca"}).merge == [
        "a.copeca", "b.copeca", "c.copeca"]
    with pytest.raises(ConfigError, match="fail-threshold"):
        read_inputs({**BASE, "INPUT_ALERT_THRESHOLD": "0.2", "INPUT_FAIL_THRESHOLD": "10%"})
    with pytest.raises(ConfigError, match="not both"):
        read_inputs({**BASE, "INPUT_SHARD": "1/2", "INPUT_MERGE": "x.copeca"})


def test_percent_thresholds() -> None:
    assert read_inputs({**BASE, "INPUT_FAIL_THRESHOLD": "12.5%"}).fail_threshold == 0.125


def test_every_design_input_has_a_parser() -> None:
    design = ["scenario", "tool-dir", "compare", "runner-image", "github-token",
              "anthropic-api-key", "openai-api-key", "budget-usd", "alert-threshold",
              "fail-threshold", "fail-on", "comment", "comment-id", "signing-key", "shard",
              "merge", "reuse", "output-dir"]
    assert set(design) <= set(PARSERS)


@pytest.mark.parametrize("name", ["fail-threshold", "alert-threshold"])
@pytest.mark.parametrize("text", ["10", "1", "1.5", "1000"])
def test_a_bare_threshold_of_one_or_more_is_ambiguous_and_refused(name: str, text: str) -> None:
    """`fail-threshold: 10` meant 10% and was read as +1000%: the gate was off, silently."""
    env = {**BASE, f"INPUT_{name.upper().replace('-', '_')}": text}
    with pytest.raises(ConfigError) as info:
        read_inputs(env)
    (problem,) = info.value.problems
    assert problem.field == name
    assert "ambiguous" in problem.message and f"write {float(text):g}%" in problem.message


def test_thresholds_as_percentages_or_fractions_below_one() -> None:
    inputs = read_inputs({**BASE, "INPUT_ALERT_THRESHOLD": "0.05",
                          "INPUT_FAIL_THRESHOLD": "1000%"})
    assert (inputs.alert_threshold, inputs.fail_threshold) == (0.05, 10.0)
    with pytest.raises(ConfigError, match="from 0% to 1000%"):
        read_inputs({**BASE, "INPUT_FAIL_THRESHOLD": "2000%"})


def test_a_budget_is_usd_not_a_percentage() -> None:
    with pytest.raises(ConfigError, match="budget-usd: expected a number"):
        read_inputs({**BASE, "INPUT_BUDGET_USD": "10%"})
