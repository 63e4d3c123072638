"""The action's `with:` inputs as a workflow gives them, through the action's entry (`main`):
values are taken as written (as the scenario's are), and a bad one stops the job with exit 2
before the engine (the first paid run) starts, naming the input and what to write, never a
secret's value."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from gh_support import TOKEN, payload

from copeca_action.github import ActionContext, Outcome, RetryPolicy, main, read_inputs

SECRET = "sk-ant-api03-hidden-value-4242"


def never_called(ctx: ActionContext) -> Outcome:
    raise AssertionError("the engine ran: a bad input must stop the job before any run")


def refused(env: dict[str, str], capsys: pytest.CaptureFixture[str]) -> str:
    """Run the action; it must exit 2 without starting the engine. Returns what it printed."""
    code = main(env, never_called, policy=RetryPolicy(attempts=1, backoff_s=0.01),
                sleep=lambda _: None)
    printed = capsys.readouterr()
    assert code == 2, printed.err
    assert "Traceback" not in printed.err + printed.out
    shown = printed.err + "\n".join(line for line in printed.out.splitlines()
                                    if not line.startswith("::add-mask::"))
    assert SECRET not in shown and TOKEN not in shown
    return printed.err


def push_env(actions_env: Any, **inputs: str) -> dict[str, str]:
    env: dict[str, str] = actions_env("push", payload("push"))
    env["INPUT_ANTHROPIC_API_KEY"] = SECRET
    env.update(inputs)
    return env


@pytest.mark.parametrize(("var", "text", "expected"), [
    ("INPUT_BUDGET_USD", "1e9", "written out in digits (1000000000 rather than 1e9)"),
    ("INPUT_BUDGET_USD", "0x10", "in plain digits"),
    ("INPUT_BUDGET_USD", "1_000", "in plain digits"),
    ("INPUT_BUDGET_USD", "\uff15", "in plain digits"),  # a fullwidth 5: float() reads it
    ("INPUT_BUDGET_USD", "5%", "not a percentage"),
    ("INPUT_BUDGET_USD", "-0", "without a sign"),
    ("INPUT_BUDGET_USD", "+5", "without a sign"),
    ("INPUT_BUDGET_USD", "nan", "a finite number"),
    ("INPUT_BUDGET_USD", "inf", "a finite number"),
    ("INPUT_BUDGET_USD", "0", "above 0"),  # was a pydantic traceback in the engine
    ("INPUT_FAIL_THRESHOLD", "-0", "without a sign"),
    ("INPUT_FAIL_THRESHOLD", "1e-1", "written out in digits (0.1 rather than 1e-1)"),
    ("INPUT_ALERT_THRESHOLD", "inf", "a finite number"),  # was "a bare inf is ambiguous"
    ("INPUT_ALERT_THRESHOLD", "5 %", "in plain digits"),
    ("INPUT_ALERT_THRESHOLD", "0x10%", "in plain digits"),
    ("INPUT_SHARD", "\uff11/2", "expected i/n"),
    ("INPUT_PULL_REQUEST", "\u0663", "digits, 1 or more"),  # an Arabic-Indic 3
    ("INPUT_PULL_REQUEST", "+3", "digits, 1 or more"),
    ("INPUT_DRY_RUN", "yes", "true, True, TRUE, false, False, FALSE"),
    ("INPUT_DRY_RUN", "1", "true, True, TRUE, false, False, FALSE"),
    ("INPUT_CHECK_RUN", "on", "true, True, TRUE, false, False, FALSE"),
    ("INPUT_ALLOW_PULL_REQUEST_TARGET", "y", "true, True, TRUE, false, False, FALSE"),
    ("INPUT_DRY_RUN", "tRUE", "expected true or false"),
])
def test_a_value_not_as_written_is_refused_naming_the_input(
        actions_env: Any, capsys: pytest.CaptureFixture[str], var: str, text: str,
        expected: str) -> None:
    err = refused(push_env(actions_env, **{var: text}), capsys)
    name = var.removeprefix("INPUT_").lower().replace("_", "-")
    assert f"action input: {name}: " in err
    assert expected in err
    assert f"got {text!r}" in err


@pytest.mark.parametrize(("var", "text", "attr", "value"), [
    ("INPUT_BUDGET_USD", " 5", "budget_usd", 5.0),
    ("INPUT_BUDGET_USD", "5 ", "budget_usd", 5.0),
    ("INPUT_BUDGET_USD", "2.50\n", "budget_usd", 2.5),  # a `|` block ends in a newline
    ("INPUT_BUDGET_USD", ".5", "budget_usd", 0.5),
    ("INPUT_FAIL_THRESHOLD", "12.5%\n", "fail_threshold", 0.125),
    ("INPUT_ALERT_THRESHOLD", "0%", "alert_threshold", 0.0),
    ("INPUT_SHARD", "2/4\n", "shard", (2, 4)),
    ("INPUT_PULL_REQUEST", "12\n", "pull_request", 12),
    ("INPUT_DRY_RUN", "true", "dry_run", True),  # what GitHub passes for `dry-run: true`
    ("INPUT_DRY_RUN", "True", "dry_run", True),
    ("INPUT_DRY_RUN", "TRUE\n", "dry_run", True),
    ("INPUT_CHECK_RUN", "False", "check_run", False),
    ("INPUT_COMPARE", " Base-Ref\n", "compare", "base-ref"),
    ("INPUT_FAIL_ON", "NEVER", "fail_on", "never"),
])
def test_values_as_a_workflow_writes_them(var: str, text: str, attr: str,
                                          value: object) -> None:
    got = getattr(read_inputs({"INPUT_SCENARIO": "s.yaml", var: text}), attr)
    if attr == "shard":
        got = (got.index, got.count)
    assert got == value


def test_merge_lists_skip_blank_lines_and_comments() -> None:
    text = "# the shards of this run\nshards/a.copeca\n\n  # more\nshards/b.copeca, c.copeca\n"
    assert read_inputs({"INPUT_MERGE": text}).merge == [
        "shards/a.copeca", "shards/b.copeca", "c.copeca"]


def test_every_bad_input_is_reported_at_once(actions_env: Any,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    err = refused(push_env(actions_env, INPUT_BUDGET_USD="1e9", INPUT_DRY_RUN="yes",
                           INPUT_SHARD="0/4"), capsys)
    for name in ("budget-usd", "dry-run", "shard"):
        assert f"action input: {name}: " in err


@pytest.mark.parametrize(("written", "hint"), [
    ("fail_on", "did you mean `fail-on`? (inputs are written with hyphens)"),
    ("scenrio", "did you mean `scenario`?"),
    ("budget_usd", "did you mean `budget-usd`?"),
    ("anthropic-key", "did you mean `anthropic-api-key`?"),
    ("colour", "the inputs are `scenario`, `tool-dir`"),
])
def test_an_undeclared_with_key_is_refused_with_a_suggestion(
        actions_env: Any, capsys: pytest.CaptureFixture[str], written: str,
        hint: str) -> None:
    """GitHub gives a composite action no variable for a `with:` key it does not declare
    and only warns; action.yml passes the keys' names (COPECA_GIVEN_INPUTS)."""
    given = "\n".join(["scenario", "github-token", "Anthropic-API-Key", written])
    err = refused(push_env(actions_env, COPECA_GIVEN_INPUTS=given), capsys)
    assert f"action input: {written}: unknown input" in err
    assert hint in err
    assert "Anthropic-API-Key" not in err  # a declared input in another case is known


def test_an_unknown_input_variable_is_refused_without_its_value(
        actions_env: Any, capsys: pytest.CaptureFixture[str]) -> None:
    """A Docker action gets `INPUT_<KEY>` for every `with:` key (and a job's `env:` can set
    one): a secret under a mistyped name is named, never shown."""
    err = refused(push_env(actions_env, INPUT_ANTHROPIC_KEY=SECRET + "-typo"), capsys)
    assert "action input: anthropic_key: unknown input (the variable INPUT_ANTHROPIC_KEY)" in err
    assert "did you mean `anthropic-api-key`?" in err
    assert SECRET not in err


def test_one_input_given_twice_with_different_values_is_refused(
        actions_env: Any, capsys: pytest.CaptureFixture[str]) -> None:
    err = refused(push_env(actions_env, **{"INPUT_FAIL_ON": "never",
                                           "INPUT_FAIL-ON": "regression"}), capsys)
    assert "action input: fail-on: given twice with different values" in err


def _recording(seen: list[ActionContext]) -> Any:
    from sample import sample_comment

    def run(ctx: ActionContext) -> Outcome:
        seen.append(ctx)
        return Outcome(comment=sample_comment(ctx.inputs.comment_id))
    return run


@pytest.mark.parametrize(("var", "text"), [
    ("INPUT_SCENARIO", "../benchmark/pr.yaml"),
    ("INPUT_SCENARIO", "/etc/hostname"),
    ("INPUT_TOOL_DIR", ".."),
    ("INPUT_OUTPUT_DIR", "{outside}"),  # lost with the container; the upload finds nothing
    ("INPUT_OUTPUT_DIR", "out/../../out"),
    ("INPUT_REUSE", "../previous/*.copeca"),
    ("INPUT_MERGE", "shards/*.copeca\n{outside}/*.copeca"),
])
def test_a_path_outside_the_workspace_is_refused(
        actions_env: Any, capsys: pytest.CaptureFixture[str], tmp_path: Path, var: str,
        text: str) -> None:
    text = text.format(outside=tmp_path / "elsewhere")
    env = push_env(actions_env, **{var: text})
    if var == "INPUT_MERGE":
        env.pop("INPUT_SCENARIO")
    err = refused(env, capsys)
    name = var.removeprefix("INPUT_").lower().replace("_", "-")
    assert f"action input: {name}: " in err and "is outside the workspace" in err


@pytest.mark.parametrize("var", ["INPUT_OUTPUT_DIR", "INPUT_TOOL_DIR", "INPUT_SCENARIO"])
def test_a_link_out_of_the_workspace_is_refused(
        actions_env: Any, capsys: pytest.CaptureFixture[str], tmp_path: Path,
        var: str) -> None:
    """A pull request can commit a link: `.copeca -> /somewhere` sent the bundle out of the
    container's sight."""
    env = push_env(actions_env, **{var: "linked"})
    (tmp_path / "elsewhere").mkdir()
    (Path(env["GITHUB_WORKSPACE"]) / "linked").symlink_to(tmp_path / "elsewhere")
    err = refused(env, capsys)
    assert "is outside the workspace" in err and "through a link" in err


def test_paths_inside_the_workspace_are_taken(actions_env: Any, tmp_path: Path) -> None:
    env = push_env(actions_env, INPUT_HISTORY="never")
    ws = Path(env["GITHUB_WORKSPACE"])
    (ws / "tools").mkdir()
    (ws / "tool").symlink_to(ws / "tools")  # a link that stays inside
    env.update(INPUT_SCENARIO=str(ws / "benchmark" / "pr.yaml"), INPUT_TOOL_DIR="tool",
               INPUT_OUTPUT_DIR="a/../out", INPUT_REUSE="previous/**/*.copeca")
    seen: list[ActionContext] = []
    assert main(env, _recording(seen), policy=RetryPolicy(attempts=1, backoff_s=0.01),
                sleep=lambda _: None) == 0
    assert seen and seen[0].output_dir.resolve() == (ws / "out").resolve()


@pytest.mark.parametrize(("inputs", "message"), [
    ({"INPUT_FAIL_THRESHOLD": "3%"}, "fail-threshold: the fail threshold 3% is below the "
     "alert threshold 5% (the scenario's)"),
    ({"INPUT_ALERT_THRESHOLD": "12.5%"}, "alert-threshold: the fail threshold 10% (the "
     "scenario's) is below the alert threshold 12.5%"),
])
def test_thresholds_that_cross_the_scenarios_are_named_as_written(
        actions_env: Any, capsys: pytest.CaptureFixture[str], inputs: dict[str, str],
        message: str) -> None:
    """Was `fail threshold 0.03 is below the alert threshold 0.05` for `3%`, always under
    fail-threshold, also when only alert-threshold was given."""
    from copeca_action.github import run_engine
    from copeca_action.github._scaffold import scaffold

    env = push_env(actions_env, INPUT_DRY_RUN="true", INPUT_HISTORY="never", **inputs)
    scaffold(Path(env["GITHUB_WORKSPACE"]), "mcp", name="my-tool")
    code = main(env, run_engine, policy=RetryPolicy(attempts=1, backoff_s=0.01),
                sleep=lambda _: None)
    err = capsys.readouterr().err
    assert code == 2 and f"action input: {message}" in err
