"""What a grader returns: correct or not, and the detail that explains it."""

from __future__ import annotations

from typing import Any, Literal

from copeca_action._util.model import RecordModel


class GradeResult(RecordModel):
    kind: Literal["answer", "test", "patch"]
    correct: bool
    detail: dict[str, Any] = {}
    """Matched/missing terms and completeness; or exit code, duration and captured output."""

    def as_record(self) -> dict[str, Any]:
        """The `grading` field of a RunRecord."""
        return {"kind": self.kind, **self.detail}
