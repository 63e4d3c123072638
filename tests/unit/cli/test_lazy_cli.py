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
            "print(code, sorted(m for m in sys.modules if m.startswith(('copeca_action.', "
            "'numpy.ma', 'unidiff'))))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.splitlines()[-1]
    status, _, listed = out.partition(" ")
    loaded = eval(listed)  # a printed list of module names
    assert status == "0"
    assert "copeca_action.render._markdown" in loaded  # it did render
    assert [m for m in loaded if m.startswith(("copeca_action.bundle", "copeca_action.conclude",
                                               "copeca_action.github", "copeca_action.engine",
                                               "copeca_action.render._html"))] == []
    # nor the repository-reading retrieval code behind the report's retrieval models, nor
    # numpy.ma (np.unique imports it: 10 ms of a one-record analyze)
    assert [m for m in loaded if m.startswith(("copeca_action.retrieval._viewed",
                                               "copeca_action.retrieval._editloc",
                                               "copeca_action.retrieval._repo", "unidiff",
                                               "numpy.ma."))] == []
    assert "numpy.ma" not in loaded


def _console(*args: str, before: str = "") -> subprocess.CompletedProcess[str]:
    """The installed command's entry point (`copeca-action`), as a child process (`before`:
    code run first in it)."""
    code = f"import sys\n{before}\nfrom copeca_action.cli import console\nconsole()"
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True,
                          timeout=60)


def test_a_reading_verb_leaves_early_with_its_whole_output_and_exit_code(tmp_path: Path) -> None:
    results = tmp_path / "results.jsonl"
    line = ('{{"run_id": "r{i}", "scenario": "s", "task_id": "t{i}", "task_hash": "h", '
            '"arm": "baseline", "model": "m", "runner": "claude", "repetition": 0, '
            '"outcome": "ok", "correct": true, "cost_usd": 0.1}}\n')
    results.write_text("".join(line.format(i=i) for i in range(300)))
    fast = _console("analyze", str(results), "--format", "json")
    assert fast.returncode == 0, fast.stderr
    slow = subprocess.run([sys.executable, "-c", "import sys; from copeca_action.cli import main; "
                           f"sys.exit(main(['analyze', {str(results)!r}, '--format', 'json']))"],
                          capture_output=True, text=True, timeout=60)
    assert fast.stdout == slow.stdout and fast.stdout.rstrip().endswith("}")  # flushed in full
    results.write_text('{"run_id": 5}\n')
    bad = _console("analyze", str(results))
    assert bad.returncode == 2 and "results.jsonl:1: run_id" in bad.stderr
    assert _console("validate", str(tmp_path / "absent")).returncode != 0


def test_the_early_exit_runs_atexit_handlers_and_waits_for_threads(tmp_path: Path) -> None:
    results = tmp_path / "results.jsonl"
    results.write_text('{"run_id": "r1", "scenario": "s", "task_id": "t", "task_hash": "h", '
                       '"arm": "baseline", "model": "m", "runner": "claude", "repetition": 0, '
                       '"outcome": "ok", "correct": true, "cost_usd": 0.1}\n')
    handler = "import atexit; atexit.register(lambda: print('handler ran', file=sys.stderr))"
    done = _console("analyze", str(results), before=handler)
    assert done.returncode == 0 and "handler ran" in done.stderr
    thread = ("import threading, time\n"
              "threading.Thread(target=lambda: (time.sleep(0.5), "
              "print('thread finished', file=sys.stderr))).start()")
    waited = _console("analyze", str(results), before=thread)
    assert waited.returncode == 0 and "thread finished" in waited.stderr


def test_the_command_loads_no_pydantic_plugin(tmp_path: Path) -> None:
    """An installed package's `pydantic` entry point is imported by pydantic when it builds
    its first validator; the command's process (`console`) imports none. A program using
    copeca_action as a library keeps its plugins (the check below that the plugin is found
    at all)."""
    marker = tmp_path / "plugin-imported"
    (tmp_path / "spy_plugin.py").write_text(
        "import pathlib, types\n"
        f"pathlib.Path({str(marker)!r}).write_text('imported')\n"
        "plugin = types.SimpleNamespace(new_schema_validator=lambda *a, **k: (None, None, None))\n")
    info = tmp_path / "spy_plugin-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: spy-plugin\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[pydantic]\nspy = spy_plugin:plugin\n")
    results = tmp_path / "results.jsonl"
    results.write_text('{"run_id": "r1", "scenario": "s", "task_id": "t", "task_hash": "h", '
                       '"arm": "baseline", "model": "m", "runner": "claude", "repetition": 0, '
                       '"outcome": "ok", "correct": true, "cost_usd": 0.1}\n')
    on_path = f"sys.path.insert(0, {str(tmp_path)!r})"
    done = _console("analyze", str(results), "--format", "json", before=on_path)
    assert done.returncode == 0, done.stderr
    assert not marker.exists()
    library = subprocess.run(
        [sys.executable, "-c", f"import sys\n{on_path}\nfrom copeca_action.cli import main\n"
                               f"sys.exit(main(['analyze', {str(results)!r}]))"],
        capture_output=True, text=True, timeout=60)
    assert library.returncode == 0, library.stderr
    assert marker.read_text() == "imported"
