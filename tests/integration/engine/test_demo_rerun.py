"""`copeca-action demo` on a machine where the demo already ran and something its runs depend
on changed since (an agent CLI upgrade, new scripts, another copeca-action: the fingerprint):
the demo, simulated and free, moves the old folder aside (kept whole) and runs again, where
`run` refuses and says what to do (a new --out, or --start-over). Real Claude Code against
the scripted model, on a two-run version of the demo."""

from __future__ import annotations

from pathlib import Path

from test_resume_ledger import copeca, pytestmark, scripted_scenario

from copeca_action.records import read_records

__all__ = ["pytestmark"]


def _files(folder: Path) -> dict[Path, bytes]:
    return {p.relative_to(folder): p.read_bytes() for p in folder.rglob("*")
            if p.is_file() and p.name != ".lock"}


def test_the_demo_starts_over_after_a_change_and_run_refuses_with_both_ways_out(
        tmp_path: Path) -> None:
    scenario, scripts = scripted_scenario(tmp_path, "demo")
    out, cache = tmp_path / "out" / "demo", tmp_path / "cache"
    demo = ("demo", "--scenario", str(scenario), "--out", str(out), "--cache", str(cache),
            "--plain")
    first = copeca(*demo)
    assert first.returncode == 0, first.stdout[-2000:] + first.stderr[-2000:]
    before = _files(out)
    old = read_records(out / "results.jsonl")
    (scripts / "zz-upgrade.txt").write_text("a new file among the scripts: another endpoint\n")

    # `run` (paid when real) refuses, naming both ways out, and writes nothing
    refused = copeca("run", str(scenario), "--out", str(out), "--cache", str(cache), "--plain",
                     "--resume")
    said = " ".join(refused.stderr.split())
    assert refused.returncode == 2, refused.stdout[-2000:] + said
    assert "2 finished run(s) here were measured under other conditions" in said
    assert f"--out {out.with_name('demo-2')}" in said
    assert f"--start-over moves this folder aside to {out.with_name('demo.old-<UTC time>')}" \
        in said
    assert "Traceback" not in said and _files(out) == before

    # the demo starts over by itself: the old folder is kept whole beside the new one
    again = copeca(*demo)
    said = " ".join((again.stdout + again.stderr).split())
    assert again.returncode == 0, said[-3000:]
    (aside,) = out.parent.glob("demo.old-*")
    assert "The demo is simulated and free, so it does not refuse as `run` would" in said
    assert f"moved {out} aside to {aside} (2 record(s), $" in said and "simulated" in said
    assert _files(aside) == before
    new = read_records(out / "results.jsonl")
    assert len(new) == 2 and all(r.attempt == 1 for r in new)
    assert {r.fingerprint for r in new}.isdisjoint({r.fingerprint for r in old})
    assert (out / "demo.copeca").is_file() and "verified" in said

    # unchanged since: the demo resumes its folder, runs nothing, moves nothing
    third = copeca(*demo)
    assert third.returncode == 0, third.stdout[-2000:] + third.stderr[-2000:]
    assert len(list(out.parent.glob("demo.old-*"))) == 1
    assert read_records(out / "results.jsonl") == new

    # `run --start-over`: the same move, asked for
    over = copeca("run", str(scenario), "--out", str(out), "--cache", str(cache), "--plain",
                  "--start-over", "--no-bundle")
    assert over.returncode == 0, over.stdout[-2000:] + over.stderr[-2000:]
    assert len(list(out.parent.glob("demo.old-*"))) == 2

    # a new version of the demo (another plan): the older one is kept aside too
    text = scenario.read_text()
    scenario.write_text(text.replace("control-longest-word", "control-prompt-words"))
    newer = copeca(*demo)
    said = " ".join((newer.stdout + newer.stderr).split())
    assert newer.returncode == 0, said[-3000:]
    assert f"{out} holds an older version of the demo: moved {out} aside" in said
    assert len(list(out.parent.glob("demo.old-*"))) == 3
    assert {r.task_id for r in read_records(out / "results.jsonl")} == {
        "fastapi/control-prompt-words"}
