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
