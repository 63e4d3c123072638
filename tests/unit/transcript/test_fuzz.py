"""Hypothesis: no input makes a parser raise; damage only ever becomes `problems`."""

from __future__ import annotations

import json
import random
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from copeca_action.transcript import PARSERS, Transcript, parse_codex_json, parse_stream_json

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "transcripts"
CLAUDE = [(FIXTURES / f"claude_{n}.jsonl").read_text().splitlines()
          for n in ("ok", "edit", "deny", "http400", "maxturns")]
CODEX = [(FIXTURES / f"codex_{n}" / "stdout.jsonl").read_text().splitlines()
         for n in ("ok", "edit", "http429")]
ROLLOUT = next((FIXTURES / "codex_ok" / "codex_home").rglob("rollout-*.jsonl"))

SETTINGS = settings(max_examples=40, deadline=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture])

json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-10**6, 10**13) | st.floats(allow_nan=False)
    | st.text(max_size=20),
    lambda children: st.lists(children, max_size=4)
    | st.dictionaries(st.sampled_from(["type", "message", "usage", "id", "content", "event",
                                       "item", "result", "input_tokens", "output_tokens",
                                       "payload", "text", "name", "input"]),
                      children, max_size=5),
    max_leaves=20)


def _run(parser: str, lines: list[str], rollout: list[str] | None = None) -> Transcript:
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "stdout.jsonl"
        # surrogatepass: lone surrogates become bytes that are not UTF-8, also worth parsing.
        out.write_bytes("\n".join(lines).encode("utf-8", "surrogatepass"))
        home = None
        if rollout is not None:
            home = Path(tmp) / "home"
            (home / "sessions").mkdir(parents=True)
            (home / "sessions" / ROLLOUT.name).write_bytes(
                "\n".join(rollout).encode("utf-8", "surrogatepass"))
        return PARSERS[parser](out, home)


def _check(t: Transcript) -> None:
    assert t.tokens.input >= 0 and t.tokens.output >= 0
    assert t.num_turns == len(t.turns)


@SETTINGS
@given(st.data())
def test_claude_truncated_anywhere(data: st.DataObject) -> None:
    lines = data.draw(st.sampled_from(CLAUDE))
    text = "\n".join(lines)
    cut = data.draw(st.integers(0, len(text)))
    _check(_run("stream_json", text[:cut].splitlines()))


@SETTINGS
@given(st.data())
def test_codex_truncated_anywhere(data: st.DataObject) -> None:
    lines = data.draw(st.sampled_from(CODEX))
    rollout = ROLLOUT.read_text()
    cut = data.draw(st.integers(0, len(rollout)))
    _check(_run("codex_json", lines, rollout[:cut].splitlines()))


@SETTINGS
@given(st.sampled_from(["stream_json", "codex_json"]), st.data())
def test_garbage_lines_mixed_in(parser: str, data: st.DataObject) -> None:
    base = list(data.draw(st.sampled_from(CLAUDE if parser == "stream_json" else CODEX)))
    junk = data.draw(st.lists(
        st.one_of(st.text(max_size=40), json_values.map(json.dumps),
                  st.binary(max_size=30).map(lambda b: b.decode("latin-1"))), max_size=6))
    for item in junk:
        base.insert(data.draw(st.integers(0, len(base))), item.replace("\n", " "))
    t = _run(parser, base, ROLLOUT.read_text().splitlines() if parser == "codex_json" else None)
    _check(t)


@SETTINGS
@given(st.sampled_from(["stream_json", "codex_json"]), st.randoms(use_true_random=False))
def test_reordered_events(parser: str, rnd: random.Random) -> None:
    lines = list(CLAUDE[0] if parser == "stream_json" else CODEX[0])
    rnd.shuffle(lines)
    rollout = ROLLOUT.read_text().splitlines()
    rnd.shuffle(rollout)
    t = _run(parser, lines, rollout if parser == "codex_json" else None)
    _check(t)
    if parser == "stream_json":
        # Order does not matter for totals: they come from the result line.
        assert t.tokens.total == 1440 + 350 + 3200 + 77


@SETTINGS
@given(st.lists(json_values, max_size=12))
def test_arbitrary_json_objects(values: list[object]) -> None:
    lines = [json.dumps(v) for v in values]
    _check(_run("stream_json", lines))
    _check(_run("codex_json", lines, lines))


@SETTINGS
@given(st.lists(st.sampled_from(["assistant", "user", "result", "stream_event", "system",
                                 "item.completed", "turn.completed", "turn.failed",
                                 "thread.started", "error"]), max_size=10), json_values)
def test_known_types_with_wrong_shapes(types: list[str], body: object) -> None:
    lines = [json.dumps({"type": t, "message": body, "event": body, "item": body,
                         "usage": body, "result": body, "error": body, "payload": body})
             for t in types]
    _check(_run("stream_json", lines))
    _check(_run("codex_json", lines, [json.dumps({"type": "token_usage_record",
                                                  "payload": {"usage": body}})]))


def test_missing_file_is_a_problem(tmp_path: Path) -> None:
    for parse in (parse_stream_json, parse_codex_json):
        t = parse(tmp_path / "absent.jsonl")
        assert t.is_error and any("cannot read" in p for p in t.problems)


@SETTINGS
@given(st.sampled_from(["stream_json", "codex_json"]),
       st.text(st.characters(blacklist_characters="}"), max_size=30), st.data())
def test_a_broken_line_is_reported_with_its_number(parser: str, tail: str,
                                                   data: st.DataObject) -> None:
    base = list(CLAUDE[0] if parser == "stream_json" else CODEX[0])
    at = data.draw(st.integers(0, len(base)))
    base.insert(at, '{"type": "assistant", ' + tail.replace("\n", " "))
    t = _run(parser, base)
    assert f"line {at + 1}: not JSON" in " ".join(t.problems)


@pytest.mark.parametrize("count", [10**12 + 1, 1e300, float("inf"), float("nan")])
@pytest.mark.parametrize("parser", ["stream_json", "codex_json"])
def test_a_count_no_run_reaches_leaves_the_usage_unknown(parser: str, count: float) -> None:
    """A usage count past any real run (or infinite, or NaN) is no count: the transcript
    parses, its usage is unknown (so its computed cost is), and a problem names the value;
    it was a validation error (hypothesis found 1000000000001.0)."""
    usage = {"input_tokens": count, "output_tokens": 5}
    if parser == "stream_json":
        t = _run(parser, [json.dumps({"type": "assistant", "message": {
            "id": "m1", "role": "assistant", "content": [], "usage": usage}})])
    else:
        t = _run(parser, [], [json.dumps({"type": "token_usage_record",
                                          "payload": {"usage": usage}})])
    _check(t)
    assert not t.usage_complete
    assert any("usage counts no run reaches" in p for p in t.problems)
    many = _run("stream_json", [json.dumps({"type": "assistant", "message": {
        "id": f"m{i}", "role": "assistant", "content": [],
        "usage": {"input_tokens": 10**11}}}) for i in range(12)])
    assert not many.usage_complete and many.tokens.input <= 10**12  # the sum passed the cap
