"""Grading: the final answer against terms, or a test command in the agent's worktree."""

from copeca_action.grade._answer import grade_answer, normalise
from copeca_action.grade._result import GradeResult
from copeca_action.grade._test import OUTPUT_CAP, cap, expand, grade_test

__all__ = ["OUTPUT_CAP", "GradeResult", "cap", "expand", "grade_answer", "grade_test",
           "normalise"]
