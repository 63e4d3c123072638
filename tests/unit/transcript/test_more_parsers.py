"""The gemini_json, qwen_json and opencode_json parsers on real recorded output (see
tests/fixtures/transcripts/README.md): each figure equals what the scripted server served."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from copeca_action.records import Tokens
from copeca_action.transcript import parse_transcript

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "transcripts"
PARSERS = {"gemini": "gemini_json", "qwen": "qwen_json", "opencode": "opencode_json"}
VERSIONS = {"gemini": "0.61.0", "qwen": "0.24.4", "opencode": "1.18.33"}
CLIS = list(PARSERS)


def load(cli: str, case: str) -> tuple[Any, dict[str, Any] | None, dict[str, Any]]:
    where = FIXTURES / f"{cli}_{case}"
    transcript = parse_transcript(PARSERS[cli], where / "stdout.jsonl", where / "config")
    served = json.loads((where / "served.json").read_text())
    run = json.loads((where / "run.json").read_text())
    return transcript, served, run


def served_calls(served: dict[str, Any]) -> list[tuple[str | None, str, dict[str, Any]]]:
    out = []
    for c in served["tool_calls"]:
        if c["name"] == "tool_call":  # Qwen Code's bridge for deferred (MCP) tools
            out.append((c["id"], c["input"]["name"], c["input"]["arguments"]))
        else:
            out.append((c["id"], c["name"], c["input"]))
    return out


def assert_as_served(t: Any, served: dict[str, Any]) -> None:
    assert t.tokens == Tokens(**served["tokens"])
    assert [u.tokens for u in t.turns] == [Tokens(**s["tokens"]) for s in served["steps"]]
    sent = served_calls(served)
    assert [(c.id, c.name) for c in t.tool_calls] == [(i, n) for i, n, _ in sent]
    for got, (_, _, args) in zip(t.tool_calls, sent, strict=True):
        # the CLI may fill in defaults (Gemini CLI's grep_search adds `context`)
        assert got.input == {**got.input, **args}
    assert t.answer == served["answer"]
    assert not t.is_error and t.error is None


@pytest.mark.parametrize("cli", CLIS)
@pytest.mark.parametrize("case", ["ok", "edit", "mcp"])
def test_a_completed_run_parses_to_what_was_served(cli: str, case: str) -> None:
    t, served, run = load(cli, case)
    assert run["version"] == VERSIONS[cli] and run["exit_code"] == 0
    assert served is not None and served["completed"]
    assert t.problems == []
    assert_as_served(t, served)
    assert t.num_turns == len(served["steps"])
    assert all(c.result for c in t.tool_calls), "every tool call has its result"


@pytest.mark.parametrize("cli", CLIS)
def test_tool_results_are_the_real_outputs(cli: str) -> None:
    t, _, _ = load(cli, "ok")
    grep, read, wc = t.tool_calls
    # Qwen Code's stream-json gives its grep's summary line, not the matches
    found = "Found 1 match" if cli == "qwen" else "def area"
    assert found in (grep.result or "") and "math.pi" in (read.result or "")
    assert "4" in (wc.result or "")
    t, _, _ = load(cli, "mcp")
    assert "shapes.py:3: def area(r):" in (t.tool_calls[0].result or "")


def test_each_cli_names_the_mcp_tool_its_own_way() -> None:
    names = {cli: load(cli, "mcp")[0].tool_calls[0].name for cli in CLIS}
    assert names == {"gemini": "mcp_codesearch_search", "qwen": "mcp__codesearch__search",
                     "opencode": "codesearch_search"}


@pytest.mark.parametrize("cli", CLIS)
def test_http_400(cli: str) -> None:
    t, served, run = load(cli, "http400")
    assert run["exit_code"] not in (0, None)
    assert t.is_error and t.answer is None and t.api_error_status == 400
    assert "scripted bad request" in (t.error or "")
    assert t.tokens == Tokens() and t.turns == []
    assert served is not None and not served["completed"]


@pytest.mark.parametrize("cli", CLIS)
def test_a_retried_500_counts_the_served_reply_once(cli: str) -> None:
    t, served, _ = load(cli, "retry500")
    assert served is not None and served["steps"][0]["attempts"] == 2
    assert_as_served(t, served)
    if cli == "qwen":  # its result line counts the retried reply twice; noted, not used
        assert len(t.problems) == 1 and "differs from the result's" in t.problems[0]
    else:
        assert t.problems == []


@pytest.mark.parametrize("cli", ["gemini", "qwen"])
def test_max_turns(cli: str) -> None:
    t, served, run = load(cli, "maxturns")
    assert run["exit_code"] == 53
    assert t.max_turns_reached and t.is_error and t.answer is None
    assert served is not None and not served["completed"]
    assert t.tokens == Tokens(**served["tokens"]) and t.num_turns == 2


def test_opencode_does_not_stop_at_its_step_limit() -> None:
    t, served, run = load("opencode", "maxturns")
    assert run["exit_code"] == 0 and not t.max_turns_reached
    assert served is not None and served["completed"]
    assert_as_served(t, served)


@pytest.mark.parametrize("cli", CLIS)
def test_a_killed_run(cli: str) -> None:
    t, _, run = load(cli, "stall")
    assert run["timed_out"]
    assert t.is_error and t.answer is None and t.tokens == Tokens()


def test_opencode_cost_is_its_own_and_zero_is_not_believed(tmp_path: Path) -> None:
    t, _, _ = load("opencode", "ok")
    steps = [json.loads(line)["part"]["cost"]
             for line in (FIXTURES / "opencode_ok" / "stdout.jsonl").read_text().splitlines()
             if '"step_finish"' in line]
    assert t.vendor_cost_usd == pytest.approx(sum(steps)) and t.vendor_cost_usd > 0
    zero = (FIXTURES / "opencode_ok" / "stdout.jsonl").read_text().replace(
        '"cost":', '"cost":0, "was":')
    (tmp_path / "stdout.jsonl").write_text(zero)
    t0 = parse_transcript("opencode_json", tmp_path / "stdout.jsonl")
    assert t0.vendor_cost_usd is None and t0.tokens == t.tokens
    assert any("cost 0" in p for p in t0.problems)


def test_gemini_without_its_session_file_falls_back_to_the_totals() -> None:
    where = FIXTURES / "gemini_ok"
    t = parse_transcript("gemini_json", where / "stdout.jsonl", None)
    served = json.loads((where / "served.json").read_text())
    assert t.tokens == Tokens(**served["tokens"])
    assert len(t.turns) == 1 and any("no session file" in p for p in t.problems)
    assert [c.name for c in t.tool_calls] == [c["name"] for c in served["tool_calls"]]


@pytest.mark.parametrize("cli", CLIS)
def test_truncated_output_is_a_problem_not_a_crash(cli: str, tmp_path: Path) -> None:
    text = (FIXTURES / f"{cli}_ok" / "stdout.jsonl").read_text()
    (tmp_path / "stdout.jsonl").write_text(text[: len(text) * 2 // 3])
    t = parse_transcript(PARSERS[cli], tmp_path / "stdout.jsonl", tmp_path)
    assert t.answer is None and t.is_error
    assert t.problems
