"""Secrets never survive scrubbing, whichever shape they take and wherever a chunk ends."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from copeca_action._util.scrub import Scrubber, env_secrets

ANTHROPIC = "sk-ant-api03-" + "Ab3_x-9" * 12
OPENAI = "sk-proj-" + "Zq81kLm0" * 10
OPENAI_LEGACY = "sk-" + "a1B2c3D4e5" * 5
GH_CLASSIC = "ghp_" + "A1b2C3d4E5f6" * 3
GH_FINE = "github_pat_11ABCDEFG0" + "x" * 12 + "_" + "Yz09" * 15
AWS_ID = "AKIAIOSFODNN7EXAMPLE"
PEM = ("-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9u\n"
       "ZQAAAAAAAAABAAAAMwAAAAtzc2gtZWQyNTUxOQ\n-----END OPENSSH PRIVATE KEY-----")
TOKENS = {"anthropic_key": ANTHROPIC, "openai_key": OPENAI, "github_token": GH_CLASSIC,
          "github_pat": GH_FINE, "aws_access_key": AWS_ID, "private_key": PEM}


@pytest.mark.parametrize("rule", sorted(TOKENS))
def test_each_token_pattern_is_redacted_and_counted(rule: str) -> None:
    scrubber = Scrubber()
    out = scrubber.scrub(f"before {TOKENS[rule]} after".encode())
    assert out == f"before [REDACTED:{rule}] after".encode()
    assert scrubber.counts == {rule: 1}


def test_legacy_openai_keys_and_json_escaped_pem_blocks_are_redacted() -> None:
    escaped = json.dumps({"out": PEM})
    scrubber = Scrubber()
    out = scrubber.scrub(f"{OPENAI_LEGACY} {escaped}".encode())
    assert b"sk-a1B2" not in out and b"b3BlbnNzaC1rZXktdjEAAAAABG5v" not in out
    assert json.loads(out.split(b" ", 1)[1])["out"] == "[REDACTED:private_key]"


def test_an_unterminated_private_key_is_redacted_to_the_end() -> None:
    out = Scrubber().scrub(b"log: -----BEGIN RSA PRIVATE KEY-----\nMIIEow...truncated")
    assert out == b"log: [REDACTED:private_key]"


def test_ordinary_text_is_left_alone() -> None:
    text = (b"task-runner disk-usage risk-free sk-learn ghp_short AKIA123 github_pat_x "
            b"-----BEGIN PUBLIC KEY----- ASIA")
    scrubber = Scrubber()
    assert scrubber.scrub(text) == text and not scrubber.counts


def test_env_values_are_redacted_raw_and_json_escaped_but_short_ones_are_not() -> None:
    secrets = env_secrets({"ANTHROPIC_API_KEY": 'quote"and\\slash-value',
                           "OPENAI_API_KEY": "x", "MY_DB_PASSWORD": "hunter2hunter2",
                           "COPECA_SCRUB_VARS": "MY_DB_PASSWORD, OTHER"})
    assert set(secrets) == {"ANTHROPIC_API_KEY", "MY_DB_PASSWORD"}
    scrubber = Scrubber(secrets)
    raw = 'key=quote"and\\slash-value pw=hunter2hunter2 x=x'
    dumped = json.dumps({"env": raw})
    assert scrubber.scrub(raw.encode()) == \
        b"key=[REDACTED:env:ANTHROPIC_API_KEY] pw=[REDACTED:env:MY_DB_PASSWORD] x=x"
    out = scrubber.scrub(dumped.encode())
    assert b"hunter2" not in out and b"slash-value" not in out
    assert json.loads(out)  # still valid JSON
    assert scrubber.counts["env:MY_DB_PASSWORD"] == 2


def test_extra_variables_named_by_the_caller_are_secret() -> None:
    assert env_secrets({"DEPLOY_TOKEN": "abcdefgh12345"}, ["DEPLOY_TOKEN"]) == {
        "DEPLOY_TOKEN": "abcdefgh12345"}


def test_a_multi_line_secret_value_is_redacted_line_by_line_too() -> None:
    secret = "first-line-secret\nsecond-line-secret"
    out = Scrubber({"K": secret}).scrub(b"a second-line-secret b")
    assert out == b"a [REDACTED:env:K] b"


@settings(max_examples=80, deadline=None)
@given(cuts=st.lists(st.integers(min_value=1, max_value=600), min_size=1, max_size=12))
def test_streaming_gives_the_same_result_wherever_chunks_end(cuts: list[int]) -> None:
    text = ("lorem ipsum " * 5 + f"{ANTHROPIC}\n{PEM}\n" + json.dumps({"k": GH_CLASSIC})
            + " env=hunter2hunter2 " + AWS_ID + " tail").encode()
    chunks, at = [], 0
    for cut in sorted(set(cuts)):
        chunks.append(text[at:cut])
        at = max(at, cut)
    chunks.append(text[at:])
    whole = Scrubber({"P": "hunter2hunter2"}).scrub(text)
    streamed = b"".join(Scrubber({"P": "hunter2hunter2"}).scrub_stream(chunks))
    assert streamed == whole
    for secret in (ANTHROPIC, GH_CLASSIC, AWS_ID, "hunter2", "b3BlbnNzaC1rZXktdjEAAAAABG5v"):
        assert secret.encode() not in streamed


def test_cli_error_messages_are_scrubbed(monkeypatch: pytest.MonkeyPatch,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    from copeca_action._cli._output import report_error
    from copeca_action.errors import InfraError

    monkeypatch.setenv("ANTHROPIC_API_KEY", "a-real-looking-secret-123")
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    report_error(InfraError(f"request failed with key a-real-looking-secret-123 and {GH_CLASSIC}"))
    captured = capsys.readouterr()
    for stream in (captured.out, captured.err):
        assert "a-real-looking-secret-123" not in stream and GH_CLASSIC not in stream
        assert "[REDACTED:env:ANTHROPIC_API_KEY]" in stream


def test_config_problems_are_scrubbed(monkeypatch: pytest.MonkeyPatch,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    """A problem may quote the value it refuses (a setting, a line of a file)."""
    from copeca_action._cli._output import report_error
    from copeca_action.errors import ConfigError, Problem

    monkeypatch.setenv("ANTHROPIC_API_KEY", "a-real-looking-secret-123")
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    report_error(ConfigError([Problem("x.yaml", "expected a number; got "
                                      "'a-real-looking-secret-123'", field="budget")]))
    captured = capsys.readouterr()
    for stream in (captured.out, captured.err):
        assert "a-real-looking-secret-123" not in stream
        assert "[REDACTED:env:ANTHROPIC_API_KEY]" in stream
