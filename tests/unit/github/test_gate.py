from __future__ import annotations

import pytest
from gh_support import fork_payload, payload

from copeca_action.errors import ConfigError
from copeca_action.github import check_gate, parse_event, read_inputs

KEYS = {"INPUT_SCENARIO": "s.yaml", "INPUT_ANTHROPIC_API_KEY": "sk-ant"}


def test_fork_without_secrets_is_skipped_with_the_reason() -> None:
    gate = check_gate(parse_event("pull_request", fork_payload(), {}),
                      read_inputs({"INPUT_SCENARIO": "s.yaml", "INPUT_ANTHROPIC_API_KEY": " "}))
    assert gate.decision == "skip"
    assert "fork (mallory/Hello-World)" in gate.reason and "secrets" in gate.reason


def test_same_repo_without_key_is_skipped_and_says_which_inputs() -> None:
    gate = check_gate(parse_event("pull_request", payload("pull_request.opened"), {}),
                      read_inputs({"INPUT_SCENARIO": "s.yaml"}))
    assert gate.decision == "skip" and "anthropic-api-key" in gate.reason


def test_keys_or_dry_run_run() -> None:
    event = parse_event("pull_request", fork_payload(), {})
    assert check_gate(event, read_inputs(KEYS)).decision == "run"
    dry = read_inputs({"INPUT_SCENARIO": "s.yaml", "INPUT_DRY_RUN": "true"})
    assert check_gate(event, dry).decision == "run"


def test_pull_request_target_is_refused_unless_allowed() -> None:
    event = parse_event("pull_request_target", fork_payload(), {})
    with pytest.raises(ConfigError) as info:
        check_gate(event, read_inputs(KEYS))
    assert info.value.problems[0].field == "allow-pull-request-target"
    assert "secrets" in str(info.value)
    allowed = read_inputs({**KEYS, "INPUT_ALLOW_PULL_REQUEST_TARGET": "True"})
    assert check_gate(event, allowed).decision == "run"
