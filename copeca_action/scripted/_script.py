"""The script format: what the scripted model server says, step by step, for one task and arm.

A script is written once per task and arm and must drive either CLI, so tool calls are
*actions* (`read`, `grep`, `bash`, `edit`, ...) that the server translates into the tool the
receiving CLI offers (Claude Code's `Read`/`Grep`/`Bash`/`Edit`, Codex's `exec_command`).
`call` is the escape hatch for one exact tool call.
"""

from __future__ import annotations

import fnmatch
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import Field, NonNegativeInt, model_validator

from copeca_action._util.mcp import starts_with_mcp
from copeca_action._util.model import InputModel
from copeca_action._util.yamlio import load_yaml, parse_model
from copeca_action.errors import ConfigError, Problem

SCRIPT_FORMAT_VERSION = 1

Api = Literal["anthropic", "openai", "chat", "gemini"]
"""The wire a request came on: Anthropic Messages, OpenAI Responses, OpenAI Chat Completions,
Gemini generateContent."""


class Usage(InputModel):
    """Token usage one step reports. Anthropic reports the four fields apart; OpenAI's
    `input_tokens` is `input + cache_read + cache_write` with `cached_tokens = cache_read`."""

    input: NonNegativeInt = 0
    """Uncached input tokens."""
    output: NonNegativeInt = 1
    cache_read: NonNegativeInt = 0
    cache_write: NonNegativeInt = 0


class Grep(InputModel):
    pattern: str
    path: str = "."


class Edit(InputModel):
    path: str
    old: str
    """Exact text to replace (whole lines work with every CLI)."""
    new: str


class Write(InputModel):
    path: str
    content: str


class ReadLines(InputModel):
    """Part of a file: Claude Code's Read truncates a file of more than 2,000 lines, and its
    Edit then refuses to change that file ("has not been read yet") unless the lines were read
    with an explicit offset and limit."""

    path: str
    offset: Annotated[int, Field(ge=1)]
    """First line (1-based)."""
    limit: Annotated[int, Field(ge=1)]
    """Number of lines."""


class Mcp(InputModel):
    server: str
    tool: str
    input: dict[str, Any] = {}


class Call(InputModel):
    """One exact tool call, sent as is (only to the API named, or to both when unset)."""

    name: str
    input: dict[str, Any] = {}
    api: Api | None = None


class Action(InputModel):
    """One tool call, given as exactly one of the keys below."""

    read: str | None = None
    """A file to read (relative to the working directory, or absolute)."""
    read_lines: ReadLines | None = None
    grep: Grep | None = None
    glob: str | None = None
    bash: str | None = None
    edit: Edit | None = None
    write: Write | None = None
    mcp: Mcp | None = None
    call: Call | None = None

    @model_validator(mode="after")
    def _exactly_one(self) -> Action:
        given = [k for k in type(self).model_fields if getattr(self, k) is not None]
        if len(given) != 1:
            keys = ", ".join(type(self).model_fields)
            raise ValueError(f"give exactly one of {keys} (got {len(given)}: {given or 'none'})")
        return self

    @property
    def kind(self) -> str:
        return next(k for k in type(self).model_fields if getattr(self, k) is not None)


class Step(InputModel):
    """One model response: tool calls (with optional narration) or the final answer."""

    text: str | None = None
    """Narration sent before the tool calls."""
    tools: list[Action] = []
    answer: str | None = None
    """The final answer; the step ends the conversation."""
    usage: Usage | None = None
    """Usage this step reports; unset: derived from the request size (input) and reply size."""

    @model_validator(mode="after")
    def _tools_or_answer(self) -> Step:
        if bool(self.tools) == (self.answer is not None):
            raise ValueError("a step has either `tools` (a non-empty list) or `answer`, not both")
        if self.answer is not None and self.text is not None:
            raise ValueError("`text` narrates tool calls; put the final text in `answer`")
        return self


FaultKind = Literal["http", "stall", "malformed", "drop"]


class Fault(InputModel):
    """A failure served instead of (or in the middle of) one step's response."""

    step: NonNegativeInt = 0
    """The step (0-based) whose request fails."""
    kind: FaultKind
    """`http`: an error status with the API's error body; `stall`: headers and the first event,
    then silence for `seconds`; `malformed`: a frame that is not JSON, then the stream ends;
    `drop`: part of the stream, then the connection is closed."""
    status: int | None = None
    """For `http`: 400, 401, 403, 404, 413, 429, 500, 502, 503 or 529."""
    times: NonNegativeInt | None = 1
    """How many attempts of that step fail before it is served normally; null: every attempt."""
    probability: float = Field(1.0, ge=0.0, le=1.0)
    """Chance (seeded per conversation) that this fault applies to a conversation at all."""
    seconds: float = Field(3600.0, gt=0)
    """For `stall`: how long to stay silent (the server's shutdown ends it sooner)."""
    retry_after: NonNegativeInt | None = None
    """For `http` 429/529: a `retry-after` header, in seconds."""
    message: str | None = None

    @model_validator(mode="after")
    def _status(self) -> Fault:
        if self.kind == "http":
            if self.status not in HTTP_FAULTS:
                raise ValueError(f"`http` faults need `status`, one of "
                                 f"{', '.join(map(str, HTTP_FAULTS))}")
        elif self.status is not None:
            raise ValueError(f"`status` is only for kind `http`, not `{self.kind}`")
        return self


HTTP_FAULTS = (400, 401, 403, 404, 413, 429, 500, 502, 503, 529)


class Variation(InputModel):
    """Seeded differences between repeated runs of one script, so repetitions differ."""

    token_jitter: float = Field(0.0, ge=0.0, lt=1.0)
    """Each usage figure is scaled by a factor drawn from [1 - j, 1 + j]."""
    wrong_answer_probability: float = Field(0.0, ge=0.0, le=1.0)
    wrong_answer: str | None = None
    """Served instead of the script's answer with `wrong_answer_probability`."""
    extra_step_probability: float = Field(0.0, ge=0.0, le=1.0)
    extra_step: Step | None = None
    """A wasted tool-call step inserted before the answer; default: `bash: ls`."""

    @model_validator(mode="after")
    def _complete(self) -> Variation:
        if self.wrong_answer_probability > 0 and self.wrong_answer is None:
            raise ValueError("`wrong_answer_probability` needs `wrong_answer`")
        if self.extra_step is not None and self.extra_step.answer is not None:
            raise ValueError("`extra_step` must be a tool-call step, not an answer")
        return self


class Match(InputModel):
    """Which requests a script answers. Every criterion given must hold; a request goes to the
    matching script with the most criteria (ties: the first loaded)."""

    marker: str | None = None
    """A string that appears anywhere in the prompt or the system prompt."""
    prompt_contains: str | None = None
    """A substring of the user's text (case-sensitive)."""
    model: str | None = None
    """The requested model: exact, or a glob such as `claude-*`."""
    tool_prefix: str | None = None
    """A tool whose name starts with this is offered (e.g. `mcp__codesearch__`): the tool arm.
    An MCP prefix in this spelling also matches Gemini CLI's `mcp_codesearch_` and
    OpenCode's `codesearch_`."""
    no_tool_prefix: str | None = None
    """No offered tool's name starts with this: the baseline arm, said explicitly."""
    api: Api | None = None

    @property
    def specificity(self) -> int:
        return sum(getattr(self, k) is not None for k in type(self).model_fields)

    def may_accept(self, *, model: str, prompt: str) -> bool:
        """Whether a run of this model and task prompt can reach this script: the criteria
        known before the run (`model`, `prompt_contains`) hold; the rest (tools offered, a
        marker, the API) are only seen in the request and are taken as possible."""
        if self.model is not None and not fnmatch.fnmatchcase(model, self.model):
            return False
        return self.prompt_contains is None or self.prompt_contains in prompt

    def accepts(self, *, api: str, model: str, prompt: str, everything: str,
                tools: list[str]) -> bool:
        if self.api is not None and self.api != api:
            return False
        if self.model is not None and not fnmatch.fnmatchcase(model, self.model):
            return False
        if self.marker is not None and self.marker not in everything:
            return False
        if self.prompt_contains is not None and self.prompt_contains not in prompt:
            return False
        if self.tool_prefix is not None and not any(starts_with_mcp(t, self.tool_prefix)
                                                     for t in tools):
            return False
        return self.no_tool_prefix is None or not any(starts_with_mcp(t, self.no_tool_prefix)
                                                      for t in tools)


class Script(InputModel):
    """One task and arm: the steps the model plays, in order, ending with an answer."""

    id: str
    """Unique across the scripts folder, e.g. `fastapi/locate-unique-id/codesearch`."""
    match: Match
    steps: list[Step] = Field(min_length=1)
    variation: Variation = Variation()
    faults: list[Fault] = []
    serves_model: str | None = None
    """The model the replies say they come from (`model` in the response); unset: the
    requested one. Plays an endpoint that answers with another model than asked for."""
    tool_search_usage: Usage | None = None
    """Usage of the extra `ToolSearch` turn Claude Code needs before calling a deferred (MCP)
    tool; unset: derived from the request size like any step without `usage`."""

    @model_validator(mode="after")
    def _ends_with_answer(self) -> Script:
        for i, step in enumerate(self.steps[:-1]):
            if step.answer is not None:
                raise ValueError(f"only the last step may be an answer (step {i} is one)")
        if self.steps[-1].answer is None:
            raise ValueError("the last step must be an `answer`")
        return self


class ScriptFile(InputModel):
    """A YAML file of scripts, usually one task's arms."""

    version: Literal[1] = 1
    scripts: list[Script] = Field(min_length=1)


def load_script_file(path: Path) -> list[Script]:
    """Read one script file; errors name the file, line and field."""
    doc = load_yaml(path)
    return parse_model(doc, ScriptFile).scripts


def load_scripts(where: Path | list[Path]) -> list[Script]:
    """Every script in a folder (`*.yaml`/`*.yml`, recursively, sorted) or in the given files.

    Ids must be unique; every file's problems are reported together.
    """
    paths: list[Path] = []
    for p in [where] if isinstance(where, Path) else where:
        if p.is_dir():
            paths.extend(sorted(q for q in p.rglob("*") if q.suffix in (".yaml", ".yml")))
        elif p.exists():
            paths.append(p)
        else:
            raise ConfigError(f"no such scripts file or folder: {p}", p)
    scripts: list[Script] = []
    problems: list[Problem] = []
    seen: dict[str, Path] = {}
    for path in paths:
        try:
            loaded = load_script_file(path)
        except ConfigError as exc:
            problems.extend(exc.problems)
            continue
        for script in loaded:
            if script.id in seen:
                problems.append(Problem(str(path), f"duplicate script id {script.id!r} "
                                        f"(also in {seen[script.id]})", field="scripts.id"))
            seen[script.id] = path
            scripts.append(script)
    if problems:
        raise ConfigError(problems)
    return scripts
