"""An output folder belongs to one population: `--resume` refuses finished runs measured
under other conditions (another tool, CLI version, endpoint) instead of mixing them into
one report with the runs it is about to make."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from reuse_world import World, make_world

from copeca_action.engine import OutputDir
from copeca_action.errors import ConfigError


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
    assert "the tool under test (--tool-dir" in err and "a new folder (--out" in err
    assert "--start-over moves this folder aside" in err
    assert _lines(world) == before  # nothing ran, nothing was paid


def test_a_new_cli_version_is_refused_and_named(
        world: World, capsys: pytest.CaptureFixture[str]) -> None:
    _drop_one_tool_run(world)
    world.set_version("1.2.4")
    assert world.run("out", "--resume") == 2
    err = capsys.readouterr().err
    assert "3 finished run(s)" in err and "CLI version (now: fake 1.2.4" in err


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


def test_a_new_cli_version_names_both_versions_and_both_ways_out(
        world: World, capsys: pytest.CaptureFixture[str]) -> None:
    """After an agent CLI upgrade the refusal says which CLI moved and exactly what to type:
    a new --out, or --start-over (and where the old folder goes)."""
    world.set_version("1.2.4")
    assert world.run("out", "--resume") == 2
    err = " ".join(capsys.readouterr().err.split())
    assert "CLI version (now: fake 1.2.4; the runs here recorded fake 0.0.0-fake)" in err, err
    assert f"--out {world.root / 'out-2'}" in err
    assert f"--start-over moves this folder aside to {world.root / 'out.old-<UTC time>'}" in err
    assert "nothing is deleted" in err


def test_start_over_moves_the_stale_folder_aside_whole_and_runs_afresh(
        world: World, capsys: pytest.CaptureFixture[str]) -> None:
    out = world.root / "out"
    before = {p.relative_to(out): p.read_bytes() for p in out.rglob("*")
              if p.is_file() and p.name != ".lock"}
    spent = sum(r.cost_usd or 0 for r in world.records("out"))
    world.set_version("1.2.4")
    capsys.readouterr()
    assert world.run("out", "--start-over") == 0
    said = " ".join(capsys.readouterr().out.split())
    (aside,) = world.root.glob("out.old-*")
    assert f"--start-over: moved {out} aside to {aside} (4 record(s), ${spent:.4f} spent" in said
    kept = {p.relative_to(aside): p.read_bytes() for p in aside.rglob("*")
            if p.is_file() and p.name != ".lock"}
    assert kept == before  # every record, run folder, report and bundle, byte for byte
    fresh = world.records("out")
    assert len(fresh) == 4 and all(r.outcome == "ok" and r.attempt == 1 for r in fresh)
    assert {r.fingerprint for r in fresh}.isdisjoint(
        {r.fingerprint for r in world.records(aside.name)})
    assert world.bundle("out").is_file()


def test_start_over_with_resume_is_refused_naming_the_flags(
        world: World, capsys: pytest.CaptureFixture[str]) -> None:
    assert world.run("out", "--start-over", "--resume") == 2
    err = capsys.readouterr().err
    assert "--start-over and --resume: choose one" in err and "Traceback" not in err
    assert not list(world.root.glob("out.old-*"))


def test_start_over_is_refused_while_another_run_holds_the_folder(world: World) -> None:
    other = OutputDir(world.root / "out")
    with other.held(), pytest.raises(ConfigError, match="in use by another copeca-action"):
        OutputDir(world.root / "out").move_aside()
    assert not list(world.root.glob("out.old-*"))
    assert OutputDir(world.root / "empty").move_aside() is None


def test_start_over_names_the_attempts_a_killed_harness_left_unrecorded(
        world: World, capsys: pytest.CaptureFixture[str]) -> None:
    """An agent that ran when the harness died left its output and no line: its spend is
    not in the ledger's sum, and the move says so (the folder keeps the output)."""
    out = world.root / "out"
    lost = world.records("out")[0].run_id
    lines = (out / "results.jsonl").read_text().splitlines(keepends=True)
    (out / "results.jsonl").write_text("".join(x for x in lines if lost not in x))
    (out / "runs" / lost / "record.json").unlink()  # as a kill mid-agent leaves it
    capsys.readouterr()
    assert world.run("out", "--start-over") == 0
    said = " ".join(capsys.readouterr().out.split())
    (aside,) = world.root.glob("out.old-*")
    assert "(3 record(s), $1.5000 spent; nothing deleted)" in said, said
    assert f"1 run folder(s) in {aside} hold an attempt its results.jsonl lacks" in said
    assert (aside / "runs" / lost / "stdout.jsonl").is_file()
