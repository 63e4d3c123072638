"""The Task contract: one YAML file per task, under corpus/tasks/<repo>/."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Annotated, Literal

from pydantic import Field, Strict, StrictBool, ValidationInfo, field_validator, model_validator

from copeca_action._util.hashing import sha256_json
from copeca_action._util.model import InputModel

COMMIT_RE = r"^[0-9a-f]{40}$"
TASK_ID_RE = r"^[a-z0-9][a-z0-9._-]*(/[a-z0-9][a-z0-9._-]*)*$"

TaskType = Literal["comprehension", "edit"]
Category = Literal["locate", "trace", "fix", "debug", "reason"]
Difficulty = Literal["easy", "medium", "hard"]

ALLOWED_CATEGORIES: dict[str, tuple[str, ...]] = {
    "comprehension": ("locate", "trace", "reason", "debug"),
    "edit": ("fix", "debug"),
}
"""Which categories fit which task type: an edit task cannot be a pure 'locate' question."""

NonEmpty = Annotated[str, Field(min_length=1)]
Term = NonEmpty | Annotated[list[NonEmpty], Field(min_length=1)]
"""A string that must appear, or a list of alternatives of which one must appear."""


class AnswerGrading(InputModel):
    """Check the final answer text: case-insensitive, whitespace normalised."""

    required: list[Term] = []
    """Every entry must appear (an entry that is a list: any one of its alternatives)."""
    all_of: list[Term] = []
    """Every entry must appear too; also reported as completeness (the share present)."""
    forbidden: list[NonEmpty] = []
    """None of these may appear (catches plausible wrong answers)."""
    distractors: list[Term] = []
    """Plausible wrong candidates an answer may still mention (to rule them out); naming
    more than `max_distractors` of them is a "shotgun" answer and wrong, so listing every
    identifier cannot pass a substring check."""
    max_distractors: Annotated[int, Field(ge=0)] = 1
    """How many `distractors` an answer may name and still be correct."""

    @model_validator(mode="after")
    def _something_to_check(self) -> AnswerGrading:
        if not self.required and not self.all_of:
            raise ValueError("an answer check needs at least one `required` or `all_of` entry")
        if self.distractors and self.max_distractors >= len(self.distractors):
            raise ValueError(f"max_distractors ({self.max_distractors}) must be below the "
                             f"number of distractors ({len(self.distractors)}), or it never "
                             "applies")
        return self


class Mutation(InputModel):
    """A change committed before the agent starts, so `git diff` does not reveal it."""

    file: NonEmpty
    """Repository-relative path of the file to change."""
    search: NonEmpty
    """Exact text that must occur exactly once in the file."""
    replace: str
    """Text that replaces it."""

    @field_validator("file")
    @classmethod
    def _relative(cls, value: str) -> str:
        return relative_path(value, "the repository")


class TestGrading(InputModel):
    """Correct when `command`'s tests pass on a clean tree plus the agent's sanitised change."""

    mutations: list[Mutation] = []
    """Bugs planted (and committed) before the agent starts."""
    command: Annotated[list[NonEmpty], Field(min_length=1)]
    """argv run on a clean checkout of the start commit (mutations included) plus the agent's
    change without test files and protected files; correct when it exits 0, its output shows
    at least one test passed and none failed, and every test in `tests` passed."""
    timeout_s: Annotated[float, Field(gt=0, le=7200)] = 300
    """Seconds before the command is killed (counts as incorrect)."""
    tests: list[NonEmpty] = []
    """Tests that must be reported passed: pytest node ids or names (with `-rA` or `-v`), go
    test names (with `-v`), cargo test paths, TAP or spec-reporter titles."""
    protected: list[NonEmpty] = []
    """Globs of files (beyond test files and the default runner configs: pytest.ini,
    pyproject.toml, setup.cfg, tox.ini, package.json, jest/mocha/vitest configs, go.mod,
    Cargo.toml, .cargo/, sitecustomize.py...) whose changes are never applied; `!glob`
    lifts a default. A run that changed any gets the flag `tests_modified`."""


class PatchGrading(InputModel):
    """Correct when hidden tests pass on a clean snapshot plus the agent's sanitised patch."""

    tests_patch: NonEmpty
    """Path (relative to the task file, inside its folder) of a unified diff adding the
    hidden tests."""
    reference_patch: NonEmpty | None = None
    """Path (relative to the task file) of a known-good fix, used by check-task."""
    command: Annotated[list[NonEmpty], Field(min_length=1)]
    """argv that runs the hidden tests; correct when it exits 0 and its output shows at
    least one test passed and none failed (and every test in `tests` passed)."""
    timeout_s: Annotated[float, Field(gt=0, le=7200)] = 600
    """Seconds before the command is killed."""
    tests: list[NonEmpty] = []
    """Tests that must be reported passed (as `grading.test.tests`)."""
    protected: list[NonEmpty] = []
    """Globs of files whose changes are never applied (as `grading.test.protected`)."""

    @field_validator("tests_patch", "reference_patch")
    @classmethod
    def _beside_the_task(cls, value: str | None) -> str | None:
        return None if value is None else relative_path(value, "the task's folder")


class Grading(InputModel):
    """Exactly one of `answer`, `test`, `patch`."""

    answer: AnswerGrading | None = None
    test: TestGrading | None = None
    patch: PatchGrading | None = None

    @model_validator(mode="after")
    def _exactly_one(self) -> Grading:
        chosen = [k for k in ("answer", "test", "patch") if getattr(self, k) is not None]
        if len(chosen) != 1:
            raise ValueError("grading needs exactly one of `answer`, `test` or `patch`"
                             + (f"; got {', '.join(chosen)}" if chosen else ""))
        return self

    @property
    def kind(self) -> Literal["answer", "test", "patch"]:
        if self.answer is not None:
            return "answer"
        return "test" if self.test is not None else "patch"


class Span(InputModel):
    """A line range of one file: 1-based, both ends inclusive."""

    file: NonEmpty
    """Repository-relative path."""
    # a YAML list, so the pair is read laxly (as a tuple); its numbers are strict
    lines: Annotated[tuple[Annotated[int, Field(ge=1), Strict()],
                           Annotated[int, Field(ge=1), Strict()]], Field(strict=False)]
    """[start, end], 1-based, inclusive."""

    @field_validator("file")
    @classmethod
    def _relative(cls, value: str) -> str:
        return relative_path(value, "the repository")

    @field_validator("lines")
    @classmethod
    def _ordered(cls, value: tuple[int, int]) -> tuple[int, int]:
        if value[1] < value[0]:
            raise ValueError(f"end line {value[1]} is before start line {value[0]}")
        return value


class TaskSource(InputModel):
    """Provenance: who wrote the task and from what. Contaminated benchmarks are refused."""

    origin: NonEmpty
    """`original` for tasks written for this corpus, else where the task came from."""
    reference: str | None = None
    """A URL, issue number or file the task was derived from."""
    note: str | None = None
    """How the task was written."""


class Task(InputModel):
    """One question or change request about one repository at one commit."""

    id: Annotated[str, Field(pattern=TASK_ID_RE, max_length=120)]
    """Unique id, lowercase, e.g. `fastapi/locate-router-include`."""
    repo: NonEmpty
    """A key of corpus/repos.yaml."""
    commit: Annotated[str, Field(pattern=COMMIT_RE)] | None = None
    """Overrides the repository's pinned commit (git origins only)."""
    type: TaskType
    """`comprehension` (an answer is graded) or `edit` (a change is tested)."""
    category: Category
    """The capability measured: locate, trace, fix, debug, reason."""
    language: NonEmpty
    """Main language of the code involved, e.g. python, go, rust, javascript."""
    difficulty: Difficulty = "medium"
    prompt: Annotated[str, Field(min_length=10, max_length=8000)]
    """What the agent is asked. Names the information needed, never a tool or method."""
    control: StrictBool = False
    """A control task: no code tool should help (plain language or task-text questions)."""
    source: TaskSource
    grading: Grading
    gold_context: list[Span] = []
    """Where the information lives; feeds retrieval metrics."""
    gold_edit_lines: list[Span] = []
    """Lines a correct edit changes (old-file numbering); feeds EditLoc metrics."""
    lint_allow: list[NonEmpty] = []
    """Terms the tool-agnostic lint should accept in this prompt (say why in `source.note`)."""
    tags: list[NonEmpty] = []

    @field_validator("category")
    @classmethod
    def _category_fits_type(cls, value: str, info: ValidationInfo) -> str:
        kind = info.data.get("type")
        if kind in ALLOWED_CATEGORIES and value not in ALLOWED_CATEGORIES[kind]:
            raise ValueError(f"category {value!r} does not fit a {kind} task; allowed: "
                             + ", ".join(ALLOWED_CATEGORIES[kind]))
        return value

    @field_validator("control")
    @classmethod
    def _control_is_comprehension(cls, value: bool, info: ValidationInfo) -> bool:
        if value and (info.data.get("type") == "edit" or info.data.get("category") == "fix"):
            raise ValueError("a control task must be a comprehension task (not edit or fix): "
                             "controls measure questions where no code tool can help")
        return value

    @field_validator("grading")
    @classmethod
    def _grading_fits_type(cls, value: Grading, info: ValidationInfo) -> Grading:
        kind = info.data.get("type")
        if kind == "comprehension" and value.kind != "answer":
            raise ValueError("a comprehension task is graded by `answer`")
        if kind == "edit" and value.kind == "answer":
            raise ValueError("an edit task is graded by `test` or `patch`")
        return value

    def content_hash(self) -> str:
        """Digest of everything that defines the task; a changed task gets new run ids."""
        return sha256_json(self.model_dump(mode="json"))[:16]


def relative_path(value: str, inside: str) -> str:
    """The one rule for a path an input names inside a folder (a task's repository files and
    hidden tests, a repository's Dockerfile): relative, so it names no file elsewhere on the
    machine (`/x`, `\\x`, `C:x`, `~/x`), and without `..`. Raises ValueError naming
    `inside`. Where a symbolic link leads is checked by `leaves_folder` once the file's
    place is known."""
    if value.startswith(("/", "\\", "~/")) or value == "~" or re.match(r"^[A-Za-z]:", value):
        raise ValueError(f"{value!r}: must be a path relative to {inside}, not absolute")
    if ".." in value.replace("\\", "/").split("/"):
        raise ValueError(f"{value!r}: must be a path inside {inside} (relative, without '..'), "
                         "not any file on the machine")
    return value


def leaves_folder(rel: str, base: Path, folders: dict[str, Path]) -> str | None:
    """Why `rel` (relative to `base`, or absolute) is in none of `folders` (what each is →
    where) once resolved: an absolute path, `..` or a symbolic link leading out; None when
    it is in one."""
    target = (base / rel).resolve()
    if any(target.is_relative_to(folder.resolve()) for folder in folders.values()):
        return None
    where = " or ".join(f"{name} ({folder})" for name, folder in folders.items())
    return f"{rel} leads out of {where} to {target}: the benchmark's files stay inside it"


def leaves_task_folder(task_file: Path, rel: str) -> str | None:
    """Why `rel`, a file the task names beside itself (`tests_patch`, `reference_patch`),
    is not in its folder once resolved (a symbolic link leading out: the model already
    refuses absolute paths and `..`); None when it is."""
    return leaves_folder(rel, task_file.parent, {"the task's folder": task_file.parent})

