"""The command line a newcomer meets: every subcommand has a description and every option a
help text, `demo` offers only what applies to it, and errors never print an empty location."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from copeca_action.cli import build_parser, main
from copeca_action.errors import ConfigError, Problem


def _subparsers(parser: argparse.ArgumentParser) -> list[tuple[str, argparse.ArgumentParser]]:
    found = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                found.append((name, sub))
                found += [(f"{name} {n}", s) for n, s in _subparsers(sub)]
    return found


def test_every_subcommand_and_option_is_described() -> None:
    commands = _subparsers(build_parser(full=True))
    assert len(commands) >= 20
    missing = []
    for name, sub in commands:
        if not sub.description and " " not in name:  # nested verbs: their help suffices
            missing.append(f"{name}: no description")
        for action in sub._actions:
            if isinstance(action, argparse._HelpAction):
                continue
            if not action.help:
                missing.append(f"{name}: {'/'.join(action.option_strings) or action.dest}")
    assert missing == []


def test_demo_offers_only_the_flags_that_apply_and_says_the_model_is_scripted() -> None:
    demo = dict(_subparsers(build_parser(full=True)))["demo"]
    flags = {s for a in demo._actions for s in a.option_strings}
    for absent in ("--compare", "--tool-dir", "--base-tool-dir", "--base-url", "--corpus",
                   "--budget-usd", "--shard", "--reuse"):
        assert absent not in flags
    assert {"--out", "--resume", "--workers", "--key", "--plain"} <= flags
    assert "scripted model" in (demo.description or "")


def test_out_is_a_folder_everywhere_it_is_documented() -> None:
    commands = dict(_subparsers(build_parser(full=True)))
    for name in ("merge", "analyze"):
        [action] = [a for a in commands[name]._actions if "--out" in a.option_strings]
        assert action.option_strings[0] != "--out"  # a file there: --bundle / --report


def test_an_error_without_a_file_prints_no_empty_location(
        capsys: pytest.CaptureFixture[str]) -> None:
    assert str(Problem("", "something is wrong")) == "something is wrong"
    assert str(Problem("", "bad", field="--workers")) == "--workers: bad"
    assert str(ConfigError("plain message")) == "plain message"
    assert main(["run", "x.yaml", "--workers", "0"]) == 2
    err = capsys.readouterr().err
    assert ": :" not in err and "error: --workers 0: expected 1 to 256" in err


def test_plan_checks_references_as_validate_does(tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    bench = tmp_path / "benchmark"
    assert main(["init", str(tmp_path), "--kind", "mcp"]) == 0
    scenario = bench / "scenarios" / "pr.yaml"
    scenario.write_text(scenario.read_text().replace("modes: [baseline, my-tool]",
                                                     "modes: [baseline, my-toool]"))
    assert main(["plan", str(scenario)]) == 2
    err = capsys.readouterr().err
    assert "my-toool" in err and str(scenario) in err


def test_list_inside_a_users_benchmark_lists_its_tasks(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    import json

    assert main(["init", str(tmp_path), "--kind", "hook"]) == 0
    capsys.readouterr()
    monkeypatch.chdir(tmp_path / "benchmark" / "tasks")
    assert main(["list", "--json"]) == 0
    ids = [t["id"] for t in json.loads(capsys.readouterr().out)]
    from copeca_action.github._scaffold import _controls

    controls = _controls()
    assert len(controls) >= 5
    assert len(ids) == 6 + len(controls)
    assert {f"fastapi/{c}" for c in controls} <= set(ids)
