"""`init` writes the tool's name and the `uses:` reference into YAML verbatim: each must be
wholly of its form (`$` matched before a final newline; `--action` was not checked at all,
so a newline in it added keys to the workflow's step)."""

from __future__ import annotations

from pathlib import Path

import pytest

from copeca_action.errors import ConfigError
from copeca_action.github._scaffold import scaffold


@pytest.mark.parametrize(("name", "action", "flag"), [
    ("my-tool\n", "copeca-action/copeca-action@v1", "--name"),
    ("my-tool", "x@v1\n        run: curl evil", "--action"),
    ("my-tool", "copeca-action/copeca-action@v1\n", "--action"),
    ("my-tool", "", "--action"),
    ("my-tool", "no-ref/at-all", "--action")])
def test_init_refuses_a_name_or_action_that_would_break_the_workflow(
        tmp_path: Path, name: str, action: str, flag: str) -> None:
    with pytest.raises(ConfigError) as info:
        scaffold(tmp_path, "mcp", name, action)
    assert flag in str(info.value)
    assert not (tmp_path / ".github").exists()


@pytest.mark.parametrize("action", ["copeca-action/copeca-action@v0.1.0", "./",
                                    "./actions/copeca", "docker://ghcr.io/o/i:1.0",
                                    "o/r/sub/dir@0123abcd"])
def test_init_takes_every_documented_form_of_uses(tmp_path: Path, action: str) -> None:
    scaffold(tmp_path, "mcp", "my-tool", action)
    assert f"- uses: {action}\n" in (tmp_path / ".github/workflows/copeca.yml").read_text()


def test_init_refuses_baseline_as_the_tools_name(tmp_path: Path) -> None:
    # It replaced the baseline mode with the tool's, and the scenario listed `baseline` twice:
    # `init` said it wrote a benchmark that `validate` then refused.
    with pytest.raises(ConfigError) as info:
        scaffold(tmp_path, "mcp", "baseline")
    assert "--name" in str(info.value) and "baseline" in str(info.value)
    assert not (tmp_path / "benchmark").exists()


@pytest.mark.parametrize("kind", ["mcp", "hook", "wrapper", "env", "setup"])
def test_init_says_which_kinds_dry_run_reads_invalid(
        tmp_path: Path, kind: str, capsys: pytest.CaptureFixture[str]) -> None:
    # `env` writes no stand-in and the `setup` stand-in writes no marker: their first dry run
    # ended `invalid` (0% adoption) after init had promised "a first verdict", unexplained.
    from copeca_action.cli import main

    assert main(["init", str(tmp_path), "--kind", kind, "--name", "acme"]) == 0
    out = capsys.readouterr().out
    assert "a few minutes to a first verdict" in out
    note = "note: nothing here writes .acme-used yet (benchmark/modes/acme.yaml, validity)"
    assert (note in out) == (kind in ("env", "setup")), out
