"""Action inputs: read from the environment, normalised, validated one by one.

`action.yml` maps each hyphenated input (`tool-dir`) to an underscore variable
(`INPUT_TOOL_DIR`) in `runs.env`; a Docker action would set `INPUT_TOOL-DIR` instead, so
both spellings are read. Values are taken as written, as the scenario's are: booleans are
GitHub's (`true`, `True`, `TRUE`, `false`, `False`, `FALSE`, what `core.getBooleanInput`
takes), numbers plain ASCII decimals (no sign, exponent, `_`, hex or other digits), choices
in any case. Every problem names the input, the value given (never a secret's) and what was
expected, and all are reported at once; so is an input action.yml does not declare.
"""

from __future__ import annotations

import difflib
import os
import re
from collections.abc import Callable, Mapping
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Any, Literal

from pydantic import Field

from copeca_action._util.model import RecordModel
from copeca_action._util.percent import threshold_fraction, threshold_text
from copeca_action.errors import ConfigError, Problem

Compare = Literal["baseline", "base-ref", "both"]
FailOn = Literal["regression", "inconclusive", "never"]
CommentPolicy = Literal["always", "on-change", "never"]

SOURCE = "action input"
"""What Problem.file says for an input: inputs come from the workflow, not a file."""

_TRUE = {"true", "True", "TRUE"}
_FALSE = {"false", "False", "FALSE"}
"""YAML 1.2's booleans, which GitHub's workflow parser and `core.getBooleanInput` read: a
workflow's `dry-run: true` arrives as the text `true`."""
_YAML11_BOOLS = {"yes", "no", "y", "n", "on", "off", "1", "0"}
_SHARD = re.compile(r"([0-9]+) */ *([0-9]+)", re.ASCII)
_DECIMAL = re.compile(r"[0-9]+(?:\.[0-9]+)?|\.[0-9]+", re.ASCII)
_DIGITS = re.compile(r"[0-9]+", re.ASCII)
_COMMENT_ID = re.compile(r"^[A-Za-z0-9._-]{1,64}\Z")


class Shard(RecordModel):
    """Slice `index` (1-based) of `count` equal slices of the plan."""

    index: int
    count: int


class ActionInputs(RecordModel):
    """Every input of action.yml, typed; defaults equal those in action.yml."""

    scenario: str = ""
    """Scenario YAML (workspace-relative); `demo` is the bundled demo scenario."""
    tool_dir: str = "."
    compare: Compare = "baseline"
    runner_image: str = ""
    github_token: str = Field(default="", repr=False)
    anthropic_api_key: str = Field(default="", repr=False)
    openai_api_key: str = Field(default="", repr=False)
    budget_usd: float | None = None
    alert_threshold: float | None = None
    fail_threshold: float | None = None
    fail_on: FailOn = "regression"
    comment: CommentPolicy = "always"
    comment_id: str = "copeca"
    signing_key: str = Field(default="", repr=False)
    shard: Shard | None = None
    merge: list[str] = []
    reuse: str = ""
    output_dir: str = ".copeca"
    dry_run: bool = False
    allow_pull_request_target: bool = False
    check_run: bool = False
    pull_request: int | None = None
    history: Literal["auto", "never"] = "auto"
    """auto: runs on the default branch, releases and schedules join the history on the data
    branch (github/_history.py); a PR's comment compares with it."""

    @property
    def has_model_secrets(self) -> bool:
        """A model key reached the step (forks get empty strings instead of secrets)."""
        return bool(self.anthropic_api_key.strip() or self.openai_api_key.strip())

    @property
    def secrets(self) -> list[str]:
        """Values to mask in logs and scrub from text."""
        values = [self.github_token, self.anthropic_api_key, self.openai_api_key,
                  self.signing_key]
        return [v for v in values if v.strip()]


def env_names(name: str) -> tuple[str, str]:
    """The two variables an input may arrive in: `INPUT_TOOL_DIR`, `INPUT_TOOL-DIR`."""
    upper = name.upper()
    return f"INPUT_{upper.replace('-', '_')}", f"INPUT_{upper}"


def raw_input(env: Mapping[str, str], name: str) -> str:
    """The input's text, whitespace-trimmed; empty when unset (GitHub's own convention)."""
    for var in env_names(name):
        if var in env:
            return env[var].strip()
    return ""


GIVEN_INPUTS = "COPECA_GIVEN_INPUTS"
"""The names of the step's inputs, one a line, as the workflow wrote them: action.yml's run
step reads them from `toJSON(inputs)`, which holds every `with:` key, also one action.yml
does not declare. A composite action gets no `INPUT_*` variable for those (GitHub only
warns, "Unexpected input(s)"), so without this a typo such as `budget_usd: 5` or `scenrio:`
would be dropped without a word and the run would go on under the default."""


def _did_you_mean(written: str) -> str:
    name = written.lower().replace("_", "-")
    if name in PARSERS:
        return f"; did you mean `{name}`? (inputs are written with hyphens)"
    close = difflib.get_close_matches(name, list(PARSERS), n=1, cutoff=0.6)
    if close:
        return f"; did you mean `{close[0]}`?"
    return "; the inputs are " + ", ".join(f"`{n}`" for n in PARSERS) + " (docs/action.md)"


def unknown_inputs(env: Mapping[str, str]) -> list[Problem]:
    """An input action.yml does not declare: a `with:` key (GIVEN_INPUTS), or an `INPUT_*`
    variable that names no input (a Docker action gets one for every `with:` key; a job's
    `env:` may set one). Named as written; its value is never shown (it may be a secret
    given under a mistyped name)."""
    problems: list[Problem] = []
    reported: set[str] = set()
    for line in env.get(GIVEN_INPUTS, "").splitlines():
        written = line.strip()
        if written and written.lower() not in PARSERS and written.lower() not in reported:
            reported.add(written.lower())
            reported.update(env_names(written))
            problems.append(Problem(SOURCE, "unknown input: copeca-action has no such input, "
                                    "so its value would be ignored" + _did_you_mean(written),
                                    field=written))
    known = {var for name in PARSERS for var in env_names(name)}
    for var in sorted(env):
        if var.startswith("INPUT_") and var not in known and var.upper() not in reported:
            written = var.removeprefix("INPUT_").lower()
            problems.append(Problem(SOURCE, f"unknown input (the variable {var}): "
                                    "copeca-action has no such input, so its value would be "
                                    "ignored" + _did_you_mean(written), field=written))
    return problems


def parse_bool(text: str) -> bool:
    if text in _TRUE:
        return True
    if text in _FALSE:
        return False
    if text.lower() in _YAML11_BOOLS:
        raise ValueError("expected true or false (GitHub's booleans: true, True, TRUE, false, "
                         "False, FALSE; yes/no/on/off/1/0 are text to GitHub)")
    raise ValueError("expected true or false")


def parse_choice(choices: tuple[str, ...]) -> Callable[[str], str]:
    def parse(text: str) -> str:
        low = text.lower()
        if low not in choices:
            raise ValueError("expected one of " + ", ".join(choices))
        return low
    return parse


def decimal(text: str, what: str, example: str) -> float:
    """`text` as a plain decimal (`25`, `2.50`, `.5`), else ValueError saying what to write:
    Python's float() also reads `1e9`, `1_000`, `-0`, `inf`, `nan` and other scripts' digits,
    which a person reading the workflow would not take for that number."""
    if _DECIMAL.fullmatch(text):
        return float(text)
    try:
        written = Decimal(text.replace("_", "x"))  # `1_000` stays refused
    except InvalidOperation:
        written = None
    if written is not None and not written.is_finite():
        raise ValueError(f"expected {what}, a finite number ({example})")
    if text[:1] in "+-":
        raise ValueError(f"expected {what} without a sign ({example})")
    if written is not None and text.isascii() and "e" in text.lower():
        digits = f"{written:f}"
        shown = f"{digits} rather than {text}" if len(digits) <= 24 else example
        raise ValueError(f"expected {what} written out in digits ({shown})")
    raise ValueError(f"expected {what} in plain digits with at most one '.' ({example}; no "
                     "exponent, '_', hex, or other scripts' digits)")


def parse_number(lo: float, hi: float | None = None, threshold: bool = False,
                 above: bool = False) -> Callable[[str], float]:
    """A number in [lo, hi] (`above`: more than lo). `threshold`: a delta threshold, written
    `10%` or `0.10` (`threshold_fraction`: a bare number of 1 or more is refused as
    ambiguous); else a plain number (a budget in USD: `10%` of nothing is no amount)."""
    def parse(text: str) -> float:
        if threshold:
            decimal(text[:-1] if text.endswith("%") else text, "a threshold",
                    "a percentage such as 10% or a fraction such as 0.10")
            value = threshold_fraction(text)
        else:
            if text.endswith("%"):
                raise ValueError("expected a number of USD, not a percentage")
            value = decimal(text, "a number of USD", "such as 25 or 2.50")
        if value < lo or (above and value == lo) or (hi is not None and value > hi):
            if threshold:
                raise ValueError(f"expected a threshold from {threshold_text(lo)} to "
                                 f"{threshold_text(hi or 0.0)}")
            raise ValueError(f"expected a number of USD {'above' if above else 'from'} {lo:g}"
                             + (f" to {hi:g}" if hi else ""))
        return value
    return parse


def parse_shard(text: str) -> Shard:
    match = _SHARD.fullmatch(text)
    if not match:
        raise ValueError("expected i/n, e.g. 2/4")
    index, count = int(match.group(1)), int(match.group(2))
    if not 1 <= index <= count:
        raise ValueError("expected 1 ≤ i ≤ n")
    return Shard(index=index, count=count)


def parse_comment_id(text: str) -> str:
    if not _COMMENT_ID.match(text):
        raise ValueError("expected 1-64 letters, digits, '.', '_' or '-' (it goes into a "
                         "hidden HTML marker)")
    return text


def parse_list(text: str) -> list[str]:
    """Newline- or comma-separated paths/globs; blank lines and lines starting with `#` (a
    comment, as in `actions/upload-artifact`'s `path`) are left out."""
    lines = [line.strip() for line in text.splitlines()]
    kept = "\n".join(line for line in lines if not line.startswith("#"))
    return [p.strip() for p in re.split(r"[\n,]", kept) if p.strip()]


def parse_pr_number(text: str) -> int:
    if not _DIGITS.fullmatch(text) or int(text) < 1:
        raise ValueError("expected a pull request number (digits, 1 or more)")
    return int(text)


def _text(text: str) -> str:
    return text


PARSERS: dict[str, Callable[[str], Any]] = {
    "scenario": _text,
    "tool-dir": _text,
    "compare": parse_choice(("baseline", "base-ref", "both")),
    "runner-image": _text,
    "github-token": _text,
    "anthropic-api-key": _text,
    "openai-api-key": _text,
    "budget-usd": parse_number(0.0, above=True),
    "alert-threshold": parse_number(0.0, 10.0, threshold=True),
    "fail-threshold": parse_number(0.0, 10.0, threshold=True),
    "fail-on": parse_choice(("regression", "inconclusive", "never")),
    "comment": parse_choice(("always", "on-change", "never")),
    "comment-id": parse_comment_id,
    "signing-key": _text,
    "shard": parse_shard,
    "merge": parse_list,
    "reuse": _text,
    "output-dir": _text,
    "dry-run": parse_bool,
    "allow-pull-request-target": parse_bool,
    "check-run": parse_bool,
    "pull-request": parse_pr_number,
    "history": parse_choice(("auto", "never")),
}
"""Input name → parser of its text. An empty input keeps the model's default."""

SECRET_INPUTS = frozenset({"github-token", "anthropic-api-key", "openai-api-key",
                           "signing-key"})


def read_inputs(env: Mapping[str, str]) -> ActionInputs:
    """All inputs from the environment; every bad one is reported, each by its name."""
    values: dict[str, Any] = {}
    problems: list[Problem] = unknown_inputs(env)
    for name, parse in PARSERS.items():
        given = {var: env[var].strip() for var in env_names(name) if var in env}
        if len(set(given.values())) > 1:
            problems.append(Problem(SOURCE, "given twice with different values, as "
                                    + " and ".join(given) + "; give it once", field=name))
            continue
        text = raw_input(env, name)
        if not text:
            continue
        try:
            values[name.replace("-", "_")] = parse(text)
        except ValueError as exc:
            shown = "(hidden)" if name in SECRET_INPUTS else repr(text[:80])
            problems.append(Problem(SOURCE, f"{exc}; got {shown}", field=name))
    inputs = ActionInputs.model_validate(values) if not problems else None
    if inputs and inputs.alert_threshold is not None and inputs.fail_threshold is not None \
            and inputs.fail_threshold < inputs.alert_threshold:
        problems.append(Problem(SOURCE, f"must be at least alert-threshold "
                                f"({threshold_text(inputs.alert_threshold)}); got "
                                f"{threshold_text(inputs.fail_threshold)}",
                                field="fail-threshold"))
    if inputs and inputs.shard and inputs.merge:
        problems.append(Problem(SOURCE, "a job either runs a shard or merges shard bundles, "
                                "not both; remove `shard` or `merge`", field="merge"))
    if inputs and not inputs.scenario and not inputs.merge:
        problems.append(Problem(SOURCE, "required: the scenario YAML to run (for example "
                                "benchmark/scenarios/pr.yaml, or `demo`)", field="scenario"))
    if problems or inputs is None:
        raise ConfigError(problems)
    return inputs


_GLOB = re.compile(r"[*?[]")


def _fixed_part(pattern: str) -> str:
    """A glob's folders before its first wildcard (`shards/*.copeca` → `shards`)."""
    parts = pattern.split("/")
    for i, part in enumerate(parts):
        if _GLOB.search(part):
            return "/".join(parts[:i]) or "."
    return pattern


def path_problems(inputs: ActionInputs, workspace: Path) -> list[Problem]:
    """Every path input must stay inside the workspace, also through `..` and symbolic links:
    the action's container sees only the workspace (at /github/workspace), so a scenario or
    tool elsewhere is not the one the workflow means, and an `output-dir` elsewhere is lost
    with the container while the upload step, which skips a missing folder, uploads nothing."""
    root = workspace.resolve()
    given: list[tuple[str, str]] = [("tool-dir", inputs.tool_dir),
                                    ("output-dir", inputs.output_dir)]
    if inputs.scenario and inputs.scenario != "demo":
        given.insert(0, ("scenario", inputs.scenario))
    if inputs.reuse:
        given.append(("reuse", inputs.reuse))
    given += [("merge", pattern) for pattern in inputs.merge]
    problems: list[Problem] = []
    for name, text in given:
        fixed = _fixed_part(text) if name in ("reuse", "merge") else text
        path = Path(os.path.normpath(workspace / fixed))  # an absolute `fixed` stays itself
        real = path.resolve()
        if real == root or real.is_relative_to(root):
            continue
        lexical = Path(os.path.normpath(workspace))
        via = f" (through a link, to {real})" if path.is_relative_to(lexical) else ""
        problems.append(Problem(SOURCE, f"{text!r} is outside the workspace {workspace}"
                                f"{via}: the action's container sees only the workspace; "
                                "expected a path inside it, relative to the workspace",
                                field=name))
    return problems
