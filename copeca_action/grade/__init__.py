"""Grading: the final answer against terms, or the task's tests on a clean tree plus the
agent's sanitised change."""

import importlib as _importlib
import typing as _typing

if _typing.TYPE_CHECKING:
    from copeca_action.grade._answer import grade_answer, normalise
    from copeca_action.grade._result import GradeResult
    from copeca_action.grade._test import OUTPUT_CAP, cap, expand, grade_test, grade_test_clean

__all__ = [
    "OUTPUT_CAP",
    "GradeResult",
    "cap",
    "expand",
    "grade_answer",
    "grade_test",
    "grade_test_clean",
    "normalise",
]

_LAZY: dict[str, str] = {
    "GradeResult": "copeca_action.grade._result",
    "OUTPUT_CAP": "copeca_action.grade._test",
    "cap": "copeca_action.grade._test",
    "expand": "copeca_action.grade._test",
    "grade_answer": "copeca_action.grade._answer",
    "grade_test": "copeca_action.grade._test",
    "grade_test_clean": "copeca_action.grade._test",
    "normalise": "copeca_action.grade._answer",
}
"""Each public name and its module, imported on first use (PEP 562): importing one
submodule of this package does not load the others."""


def __getattr__(name: str) -> _typing.Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(_importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))
