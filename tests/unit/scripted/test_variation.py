"""Seeded variation: repeated runs differ, the same seed and run key reproduce a run."""

from __future__ import annotations

from collections import Counter

from copeca_action.scripted import Script, ScriptedServer
from copeca_action.scripted._plan import make_plan
from tests.unit.scripted.wire import anthropic_body, anthropic_continue, post

VARIED = Script.model_validate({
    "id": "varied", "match": {"prompt_contains": "task"},
    "steps": [{"tools": [{"read": "a.py"}], "usage": {"input": 1000, "output": 100}},
              {"answer": "right", "usage": {"input": 2000, "output": 50, "cache_read": 400}}],
    "variation": {"token_jitter": 0.2, "wrong_answer_probability": 0.5, "wrong_answer": "wrong",
                  "extra_step_probability": 0.5,
                  "extra_step": {"tools": [{"bash": "ls"}], "usage": {"input": 5, "output": 5}}},
})


def converse(url: str, cwd: str, run_key: str | None = None) -> str:
    headers = {"x-copeca-run": run_key} if run_key else {}
    body = anthropic_body("the task", stream=False, cwd=cwd)
    while True:
        reply = post(url, "/v1/messages", body, headers).json()
        if reply["stop_reason"] == "end_turn":
            return str(reply["content"][0]["text"])
        body = anthropic_continue(body, reply)


def test_plan_is_a_pure_function_of_seed_script_and_variant() -> None:
    a, b = make_plan(VARIED, 7, 123), make_plan(VARIED, 7, 123)
    assert (a.steps, a.jitter, a.wrong_answer, a.extra_step) == (
        b.steps, b.jitter, b.wrong_answer, b.extra_step)
    plans = [make_plan(VARIED, 7, v) for v in range(200)]
    assert 60 < sum(p.wrong_answer for p in plans) < 140
    assert 60 < sum(p.extra_step for p in plans) < 140
    for p in plans:
        assert len(p.steps) == 3 if p.extra_step else 2
        assert p.steps[-1].answer == ("wrong" if p.wrong_answer else "right")
        for factors in p.jitter:
            assert all(0.8 <= f <= 1.2 for f in factors)


def test_repeated_identical_runs_get_different_variants() -> None:
    with ScriptedServer([VARIED], seed=1) as srv:
        answers = [converse(srv.url, "/same/dir") for _ in range(24)]
        served = srv.served()
    assert len({c.variant for c in served}) == 24
    assert set(Counter(answers)) == {"right", "wrong"}
    assert {c.extra_step for c in served} == {True, False}
    inputs = {c.tokens.input for c in served}
    assert len(inputs) > 12  # jitter makes token counts differ run to run
    for conv in served:
        assert conv.answer == ("wrong" if conv.wrong_answer else "right")
        assert len(conv.steps) == (3 if conv.extra_step else 2)


def test_same_seed_reproduces_the_sequence_of_runs() -> None:
    def variants(seed: int) -> list[int]:
        with ScriptedServer([VARIED], seed=seed) as srv:
            for i in range(4):
                converse(srv.url, f"/runs/{i}")
            return [c.variant for c in srv.served()]

    assert variants(3) == variants(3)
    assert variants(3) != variants(4)


def test_run_key_header_fixes_the_variant_whatever_the_order() -> None:
    def by_key(order: list[str]) -> dict[str, tuple[int, int]]:
        with ScriptedServer([VARIED], seed=9) as srv:
            for key in order:
                converse(srv.url, "/same", run_key=key)
            return {key: (c.variant, c.tokens.input) for key, c in zip(order, srv.served(),
                                                                      strict=True)}

    keys = [f"run-{i}" for i in range(5)]
    assert by_key(keys) == by_key(list(reversed(keys)))
