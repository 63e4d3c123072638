"""The key goes only where each family sends it, replacing only this job's placeholder."""

from __future__ import annotations

import pytest

from copeca_action.keyproxy import FAMILIES, FAMILY_OF_PARSER, Refused, swap_headers, swap_query

PH = "copeca-forwarded-0123456789abcdef0123456789abcdef"
KEY = "sk-test-real-key-9f8e7d6c5b4a"


def test_anthropic_key_in_x_api_key_or_bearer() -> None:
    fam = FAMILIES["anthropic"]
    out, swapped = swap_headers(fam, [("X-Api-Key", PH), ("anthropic-version", "2023-06-01")],
                                PH, KEY)
    assert swapped and out == [("X-Api-Key", KEY), ("anthropic-version", "2023-06-01")]
    out, swapped = swap_headers(fam, [("Authorization", f"Bearer {PH}")], PH, KEY)
    assert swapped and out == [("Authorization", f"Bearer {KEY}")]


def test_openai_key_only_as_bearer() -> None:
    fam = FAMILIES["openai"]
    out, swapped = swap_headers(fam, [("authorization", f"bearer  {PH}"),
                                      ("content-type", "application/json")], PH, KEY)
    assert swapped and out[0] == ("authorization", f"Bearer {KEY}")
    with pytest.raises(Refused) as exc:
        swap_headers(fam, [("x-api-key", PH)], PH, KEY)
    assert exc.value.status == 401 and "openai keys do not go in x-api-key" in exc.value.reason


def test_gemini_key_in_header_or_query() -> None:
    fam = FAMILIES["gemini"]
    out, swapped = swap_headers(fam, [("x-goog-api-key", PH)], PH, KEY)
    assert swapped and out == [("x-goog-api-key", KEY)]
    query, swapped = swap_query(fam, f"alt=sse&key={PH}&x=%2F", PH, KEY)
    assert swapped and query == f"alt=sse&key={KEY}&x=%2F"
    assert swap_query(fam, "alt=sse", PH, KEY) == ("alt=sse", False)
    with pytest.raises(Refused):
        swap_headers(fam, [("Authorization", f"Bearer {PH}")], PH, KEY)


@pytest.mark.parametrize("family", sorted(FAMILIES))
@pytest.mark.parametrize("header", [("x-api-key", "sk-ant-someone-elses"),
                                    ("Authorization", "Bearer sk-someone-elses"),
                                    ("Authorization", f"Basic {PH}"),
                                    ("x-goog-api-key", "AIza-someone-elses"),
                                    ("api-key", PH + "x"),
                                    ("Proxy-Authorization", "Basic dXNlcjpwYXNz")])
def test_a_foreign_credential_is_refused(family: str, header: tuple[str, str]) -> None:
    with pytest.raises(Refused) as exc:
        swap_headers(FAMILIES[family], [header], PH, KEY)
    assert exc.value.status == 401
    assert KEY not in exc.value.reason and header[1] not in exc.value.reason


def test_a_foreign_query_key_is_refused() -> None:
    with pytest.raises(Refused):
        swap_query(FAMILIES["gemini"], "key=AIza-someone-elses", PH, KEY)
    with pytest.raises(Refused):  # the placeholder, but anthropic keys never go in a query
        swap_query(FAMILIES["anthropic"], f"key={PH}", PH, KEY)


def test_no_credential_is_passed_without_a_key() -> None:
    out, swapped = swap_headers(FAMILIES["anthropic"], [("accept", "*/*")], PH, KEY)
    assert not swapped and out == [("accept", "*/*")]


def test_every_parser_has_a_family() -> None:
    from copeca_action.agent._invocation import (
        CLAUDE_PARSER,
        CODEX_PARSER,
        GEMINI_PARSER,
        OPENCODE_PARSER,
        QWEN_PARSER,
    )
    parsers = {CLAUDE_PARSER, CODEX_PARSER, GEMINI_PARSER, OPENCODE_PARSER, QWEN_PARSER}
    assert set(FAMILY_OF_PARSER) == parsers
    assert set(FAMILY_OF_PARSER.values()) <= set(FAMILIES)
