"""The `answer` grader: terms in the final answer, case-insensitive, whitespace-normalised."""

from __future__ import annotations

import re
from collections.abc import Sequence

from copeca_action.grade._result import GradeResult
from copeca_action.scenario import AnswerGrading

_SPACE = re.compile(r"\s+")
_QUOTES = str.maketrans({"`": "", "\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"'})


def normalise(text: str) -> str:
    """Lowercase, backticks dropped, curly quotes straightened, every whitespace run one space:
    `Generate_Unique_ID`, "`generate_unique_id`" and "generate_unique_id" match alike."""
    return _SPACE.sub(" ", text.translate(_QUOTES).lower()).strip()


def _alternatives(term: str | Sequence[str]) -> list[str]:
    return [term] if isinstance(term, str) else list(term)


def _found(haystack: str, term: str | Sequence[str]) -> str | None:
    """The first alternative present in `haystack`, or None."""
    for alt in _alternatives(term):
        needle = normalise(alt)
        if needle and needle in haystack:
            return alt
    return None


def _label(term: str | Sequence[str]) -> str:
    return term if isinstance(term, str) else " | ".join(term)


def grade_answer(answer: str | None, spec: AnswerGrading) -> GradeResult:
    """Correct when every `required` and `all_of` entry is present, no `forbidden` one is, and
    at most `max_distractors` of the `distractors` are named (more is a shotgun answer that
    lists candidates instead of choosing). Completeness is the share of `all_of` entries
    present (1.0 when there are none)."""
    text = normalise(answer or "")
    missing = [_label(t) for t in spec.required if _found(text, t) is None]
    present_all = [t for t in spec.all_of if _found(text, t) is not None]
    missing += [_label(t) for t in spec.all_of if _found(text, t) is None]
    hit_forbidden = [f for f in spec.forbidden if normalise(f) in text]
    named = [_label(t) for t in spec.distractors if _found(text, t) is not None]
    shotgun = len(named) > spec.max_distractors
    completeness = len(present_all) / len(spec.all_of) if spec.all_of else 1.0
    correct = bool(text) and not missing and not hit_forbidden and not shotgun
    detail: dict[str, object] = {"missing": missing, "forbidden_found": hit_forbidden,
                                 "completeness": round(completeness, 4)}
    if spec.distractors:
        detail["distractors_named"] = named
    if not text:
        detail["reason"] = "no final answer"
    elif shotgun:
        detail["reason"] = (f"shotgun answer: names {len(named)} distractors (at most "
                            f"{spec.max_distractors} allowed)")
    return GradeResult(kind="answer", correct=correct, detail=detail)
