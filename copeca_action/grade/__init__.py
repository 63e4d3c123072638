"""Grading: the final answer against terms, or the task's tests on a clean tree plus the
agent's sanitised change."""

from copeca_action.grade._answer import grade_answer, normalise
from copeca_action.grade._result import GradeResult
from copeca_action.grade._test import OUTPUT_CAP, cap, expand, grade_test, grade_test_clean

__all__ = ["OUTPUT_CAP", "GradeResult", "cap", "expand", "grade_answer", "grade_test",
           "grade_test_clean", "normalise"]
