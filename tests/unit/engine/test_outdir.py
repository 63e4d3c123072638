"""An output folder belongs to one population: `--resume` refuses finished runs measured
under other conditions (another tool, CLI version, endpoint) instead of mixing them into
one report with the runs it is about to make."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from reuse_world import World, make_world


@pytest.fixture
def world(tmp_path: Path) -> World:
    """A finished run whose last tool-arm run was lost (a killed job): resume runs it."""
    w = make_world(tmp_path)
    assert w.run("out") == 0
    return w


def _drop_one_tool_run(world: World) -> str:
    out = world.root / "out"
    records = world.records("out")
    dropped = next(r.run_id for r in records if r.arm == "tool")
    lines = (out / "results.jsonl").read_text().splitlines(keepends=True)
    (out / "results.jsonl").write_text("".join(x for x in lines if dropped not in x))
    shutil.rmtree(out / "runs" / dropped)
    return dropped


def _lines(world: World) -> list[str]:
    return (world.root / "out" / "results.jsonl").read_text().splitlines()


def test_an_unchanged_resume_runs_what_is_missing(world: World) -> None:
    dropped = _drop_one_tool_run(world)
    assert world.run("out", "--resume") == 0
    assert dropped in {r.run_id for r in world.records("out")}


def test_a_changed_tool_is_refused_not_mixed_into_one_report(
        world: World, capsys: pytest.CaptureFixture[str]) -> None:
    _drop_one_tool_run(world)
    before = _lines(world)
    world.edit_tool("print('v2')\n")
    assert world.run("out", "--resume") == 2
    err = capsys.readouterr().err
    assert "results.jsonl" in err and "1 finished run(s)" in err and "tool 1" in err
    assert "the tool under test (--tool-dir" in err and "another --out" in err
    assert _lines(world) == before  # nothing ran, nothing was paid


def test_a_new_cli_version_is_refused_and_named(
        world: World, capsys: pytest.CaptureFixture[str]) -> None:
    _drop_one_tool_run(world)
    world.set_version("1.2.4")
    assert world.run("out", "--resume") == 2
    err = capsys.readouterr().err
    assert "3 finished run(s)" in err and "CLI version (now: fake 1.2.4)" in err


def test_simulated_runs_are_not_resumed_as_a_real_run(
        world: World, capsys: pytest.CaptureFixture[str]) -> None:
    _drop_one_tool_run(world)
    results = world.root / "out" / "results.jsonl"
    rows = [json.loads(x) for x in _lines(world)]
    results.write_text("".join(json.dumps({**r, "endpoint": "dry_run"}) + "\n" for r in rows))
    assert world.run("out", "--resume") == 2
    err = capsys.readouterr().err
    assert "simulated (dry_run" in err and "this run is real" in err
    assert len(_lines(world)) == 3
