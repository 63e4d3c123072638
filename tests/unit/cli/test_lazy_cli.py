"""The CLI imports only the verb it runs; its top-level table names every verb truly."""

from __future__ import annotations

import argparse
import pkgutil
import subprocess
import sys
from pathlib import Path

from copeca_action import _cli
from copeca_action.cli import COMMANDS, build_parser, command_in, module_of


def _registered_help(name: str) -> str | None:
    import importlib

    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers()
    importlib.import_module(module_of(name)).register(sub)
    action = sub._choices_actions[0]
    assert action.dest == name
    return action.help


def test_the_table_lists_every_verb_module_with_its_own_help() -> None:
    modules = sorted(m.name for m in pkgutil.iter_modules(_cli.__path__)
                     if not m.name.startswith("_"))
    assert sorted(module_of(n).rsplit(".", 1)[1] for n in COMMANDS) == modules
    for name, help_text in COMMANDS.items():
        assert _registered_help(name) == help_text, name


def test_command_in_finds_the_verb() -> None:
    assert command_in(["analyze", "x.jsonl"]) == "analyze"
    assert command_in(["--help"]) is None
    assert command_in(["nonsense"]) is None
    assert command_in(["check-task", "--repo-dir", "d"]) == "check-task"


def test_full_parser_has_every_verb_with_its_options() -> None:
    parser = build_parser(full=True)
    args = parser.parse_args(["plan", "s.yaml", "--json"])
    assert args.command == "plan" and args.json is True


def test_help_and_version_import_no_verb_module() -> None:
    code = ("import sys, copeca_action.cli as c\n"
            "try:\n    c.main(['--help'])\nexcept SystemExit:\n    pass\n"
            "print(sorted(m for m in sys.modules if m.startswith('copeca_action.')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.splitlines()[-1]
    loaded = eval(out)  # a printed list of module names
    assert [m for m in loaded if m.startswith(("copeca_action._cli.", "copeca_action.bundle",
                                               "copeca_action.github", "copeca_action.engine",
                                               "copeca_action.report"))] == []
    assert "numpy" not in out


def test_a_verb_imports_its_module_only() -> None:
    code = ("import sys, copeca_action.cli as c\n"
            "try:\n    c.main(['keygen', '--help'])\nexcept SystemExit:\n    pass\n"
            "print(sorted(m for m in sys.modules if m.startswith('copeca_action._cli.')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.splitlines()[-1]
    assert eval(out) == ["copeca_action._cli.keygen"]


def test_analyze_of_a_results_file_loads_no_bundle_conclude_or_html_code(tmp_path: Path) -> None:
    results = tmp_path / "results.jsonl"
    results.write_text('{"run_id": "r1", "scenario": "s", "task_id": "t", "task_hash": "h", '
                       '"arm": "baseline", "model": "m", "runner": "claude", "repetition": 0, '
                       '"outcome": "ok", "correct": true, "cost_usd": 0.1}\n')
    code = ("import sys, contextlib, io, copeca_action.cli as c\n"
            "with contextlib.redirect_stdout(io.StringIO()):\n"
            f"    code = c.main(['analyze', {str(results)!r}, '--format', 'md'])\n"
            "print(code, sorted(m for m in sys.modules if m.startswith('copeca_action.')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.splitlines()[-1]
    status, _, listed = out.partition(" ")
    loaded = eval(listed)  # a printed list of module names
    assert status == "0"
    assert "copeca_action.render._markdown" in loaded  # it did render
    assert [m for m in loaded if m.startswith(("copeca_action.bundle", "copeca_action.conclude",
                                               "copeca_action.github", "copeca_action.engine",
                                               "copeca_action.render._html"))] == []
