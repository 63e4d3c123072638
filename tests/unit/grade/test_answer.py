from __future__ import annotations

from copeca_action.grade import grade_answer, normalise
from copeca_action.scenario import AnswerGrading


def spec(**kw: object) -> AnswerGrading:
    return AnswerGrading.model_validate(kw)


def test_normalise_case_whitespace_backticks() -> None:
    text = "  The `Generate_Unique_ID`\n\n  function "
    assert normalise(text) == "the generate_unique_id function"


def test_required_terms_case_and_whitespace_insensitive() -> None:
    s = spec(required=["generate_unique_id", "fastapi/utils.py"])
    assert grade_answer("It is `generate_unique_id` in FASTAPI/utils.py.", s).correct
    result = grade_answer("It is generate_unique_id somewhere.", s)
    assert not result.correct and result.detail["missing"] == ["fastapi/utils.py"]


def test_alternatives_any_one_suffices() -> None:
    s = spec(required=[["seven", "7"], "routers"])
    assert grade_answer("7 words; the longest is Routers", s).correct
    assert grade_answer("Seven words, routers", s).correct
    assert not grade_answer("eight words, routers", s).correct


def test_multiword_terms_match_across_line_breaks() -> None:
    s = spec(required=["client error"])
    assert grade_answer("404 is a Client\n   Error", s).correct


def test_forbidden_term_makes_it_wrong() -> None:
    s = spec(required=[["seven", "7"]], forbidden=["eight"])
    result = grade_answer("seven, or maybe eight", s)
    assert not result.correct and result.detail["forbidden_found"] == ["eight"]


def test_all_of_completeness_is_the_share_present() -> None:
    s = spec(required=["x"], all_of=["alpha", ["beta", "b2"], "gamma", "delta"])
    result = grade_answer("x alpha b2", s)
    assert not result.correct
    assert result.detail["completeness"] == 0.5
    assert grade_answer("x alpha beta gamma delta", s).detail["completeness"] == 1.0


def test_empty_answer_is_never_correct() -> None:
    result = grade_answer(None, spec(required=["a"]))
    assert not result.correct and result.detail["reason"] == "no final answer"


def test_a_shotgun_answer_naming_too_many_distractors_is_wrong() -> None:
    s = spec(required=["generate_unique_id", "fastapi/utils.py"],
             distractors=["generate_operation_id_for_path", "generate_operation_id",
                          "get_openapi_path", ["create_model_field", "create model field"]],
             max_distractors=1)
    right = "It is `generate_unique_id` in fastapi/utils.py (not generate_operation_id)."
    result = grade_answer(right, s)
    assert result.correct and result.detail["distractors_named"] == ["generate_operation_id"]
    shotgun = ("Candidates in fastapi/utils.py: generate_unique_id, "
               "generate_operation_id_for_path, get_openapi_path, create_model_field.")
    result = grade_answer(shotgun, s)
    assert not result.correct
    # substring matching: generate_operation_id is inside generate_operation_id_for_path
    assert result.detail["reason"] == "shotgun answer: names 4 distractors (at most 1 allowed)"
    assert not result.detail["missing"]  # substring grading alone would have passed it


def test_corpus_tasks_with_distractors_refuse_a_listing_of_every_name() -> None:
    from pathlib import Path

    from copeca_action.scenario import load_corpus

    corpus = load_corpus(Path(__file__).resolve().parents[3] / "corpus")
    guarded = {i: t for i, t in corpus.tasks.items()
               if t.grading.answer is not None and t.grading.answer.distractors}
    assert {"fastapi/locate-unique-id", "fastapi/locate-solve-dependencies",
            "express/locate-etag-default"} <= set(guarded)
    for task in guarded.values():
        answer = task.grading.answer
        assert answer is not None
        terms = [t if isinstance(t, str) else t[0]
                 for t in [*answer.required, *answer.all_of, *answer.distractors]]
        assert not grade_answer(", ".join(terms), answer).correct, task.id
