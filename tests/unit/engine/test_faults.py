"""Faults end cleanly and resumably: a full disk mid-run stops with a named error (no hang,
no traceback), `--resume` completes the plan; a torn last line is repaired on resume; what a
harness that died left unrecorded is recovered from the run folders; an endpoint that keeps
failing stops the run early."""

from __future__ import annotations

import errno
import os
import threading
from pathlib import Path

import pytest
from engine_helpers import config, fake, make_corpus, scenario

from copeca_action.engine import _scheduler, run_plan
from copeca_action.engine._execute import KILLED, KILLED_UNGRADED
from copeca_action.errors import InfraError
from copeca_action.plan import build_plan
from copeca_action.records import read_records


def _corpus(tmp_path: Path) -> Path:
    return make_corpus(tmp_path, {f"t{i}": {"prompt": fake(answer="It returns 42.",
                                                           cost=0.01)} for i in range(4)})


def _in_time(fn, seconds: float = 240):  # type: ignore[no-untyped-def]
    """Run `fn` in a thread; fail (rather than hang the suite) if it does not return."""
    box: dict[str, object] = {}

    def target() -> None:
        try:
            box["value"] = fn()
        except BaseException as exc:
            box["error"] = exc
    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(seconds)
    assert not thread.is_alive(), f"hung for {seconds} s"
    if "error" in box:
        raise box["error"]  # type: ignore[misc]
    return box.get("value")


def test_a_full_disk_stops_the_run_named_and_resume_completes(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cfg = config(tmp_path, _corpus(tmp_path), scenario(repetitions=2, workers=2))
    plan = build_plan(cfg.scenario, cfg.corpus.tasks)
    real = _scheduler.append_record
    calls = {"n": 0}

    def full_disk(path: Path, record: object) -> None:
        calls["n"] += 1
        if calls["n"] >= 3:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(path))
        real(path, record)  # type: ignore[arg-type]

    monkeypatch.setattr(_scheduler, "append_record", full_disk)
    with pytest.raises(InfraError) as info:
        _in_time(lambda: run_plan(cfg, plan, scenario_text="name: t\n"))
    assert "disk is full" in str(info.value) and "--resume" in str(info.value)
    kept = read_records(cfg.out.results)
    assert len(kept) == 2
    monkeypatch.setattr(_scheduler, "append_record", real)
    _in_time(lambda: run_plan(cfg, plan, resume=True, scenario_text="name: t\n"))
    final = {r.run_id: r for r in read_records(cfg.out.results)}
    assert set(final) == {r.run_id for r in plan.runs}
    assert all(r.outcome == "ok" for r in final.values())


def test_a_torn_last_line_is_repaired_on_resume(tmp_path: Path) -> None:
    cfg = config(tmp_path, _corpus(tmp_path), scenario())
    plan = build_plan(cfg.scenario, cfg.corpus.tasks)
    run_plan(cfg, plan, scenario_text="name: t\n")
    data = cfg.out.results.read_bytes()
    lines = data.splitlines(keepends=True)
    cfg.out.results.write_bytes(b"".join(lines[:-1]) + lines[-1][: len(lines[-1]) // 2])
    run_plan(cfg, plan, resume=True, scenario_text="name: t\n")
    text = cfg.out.results.read_bytes()
    assert text.endswith(b"\n")
    records = read_records(cfg.out.results)  # every line parses: the fragment is gone
    assert {r.run_id for r in records} == {r.run_id for r in plan.runs}
    assert len(records) == len(plan.runs)


def _drop_line(path: Path, run_id: str) -> None:
    lines = path.read_text().splitlines(keepends=True)
    path.write_text("".join(line for line in lines if run_id not in line))


def test_a_finished_run_the_harness_died_before_appending_is_restored_not_paid_again(
        tmp_path: Path) -> None:
    """Killed between writing runs/<id>/record.json and appending its line (or a torn
    line): the run is finished; resume takes its record, it does not pay for it twice."""
    cfg = config(tmp_path, _corpus(tmp_path), scenario())
    plan = build_plan(cfg.scenario, cfg.corpus.tasks)
    run_plan(cfg, plan, scenario_text="name: t\n")
    first = {r.run_id: r for r in read_records(cfg.out.results)}
    lost = plan.runs[-1].run_id
    _drop_line(cfg.out.results, lost)
    stats = run_plan(cfg, plan, resume=True, scenario_text="name: t\n")
    assert stats.records == [] and stats.skipped_finished == len(plan.runs)
    assert any("restored 1 record(s)" in w for w in stats.warnings), stats.warnings
    records = read_records(cfg.out.results)
    assert len(records) == len(plan.runs)
    assert {r.run_id: r for r in records}[lost] == first[lost]


@pytest.mark.parametrize("cut", [False, True], ids=["ungraded", "in-flight"])
def test_the_spend_of_an_agent_the_harness_lost_is_counted_once(tmp_path: Path,
                                                                 cut: bool) -> None:
    """Killed while an agent ran (`cut`: its output stops before the CLI's closing event),
    or after it finished but before it was graded: its output is in its run folder, no
    record anywhere. Resume records that attempt (an infra error with the spend its output
    shows, flagged harness_died; a lower bound only when the output is cut) before running
    it again; a second resume does not count it again."""
    cfg = config(tmp_path, _corpus(tmp_path), scenario())
    plan = build_plan(cfg.scenario, cfg.corpus.tasks)
    run_plan(cfg, plan, scenario_text="name: t\n")
    lost = plan.runs[0].run_id
    _drop_line(cfg.out.results, lost)
    run_dir = cfg.out.run_dir(lost)
    (run_dir / "record.json").unlink()  # as a kill before the record leaves it
    for name in ("grade.json", "patch.diff"):
        (run_dir / name).unlink(missing_ok=True)
    if cut:  # the `result` line not yet printed: the usage of its turns only
        stdout = run_dir / "stdout.jsonl"
        stdout.write_text("".join(line for line in stdout.read_text().splitlines(True)
                                  if '"type": "result"' not in line))
    stats = run_plan(cfg, plan, resume=True, scenario_text="name: t\n")
    said = ("1 run(s) were in flight" if cut else
            "1 run(s) had finished their agent but were not graded")
    assert any(said in w for w in stats.warnings), stats.warnings
    mine = [r for r in read_records(cfg.out.results) if r.run_id == lost]
    assert [r.outcome for r in mine] == ["infra_error", "ok"]
    assert mine[0].error == (KILLED if cut else KILLED_UNGRADED)
    assert ("cost_lower_bound" in mine[0].flags) is cut
    assert "harness_died" in mine[0].flags
    if cut:  # priced from its one turn's tokens: 100 in, 20 out at $1/$2 per million
        assert mine[0].cost_usd == pytest.approx(140e-6)
        return
    assert any("$0.0100" in w and "exact" in w for w in stats.warnings)
    assert mine[0].cost_usd == pytest.approx(0.01)
    assert sum(r.cost_usd or 0 for r in read_records(cfg.out.results)) == pytest.approx(0.05)
    again = run_plan(cfg, plan, resume=True, scenario_text="name: t\n")
    assert again.records == [] and again.warnings == []
    assert len(read_records(cfg.out.results)) == len(plan.runs) + 1


def test_an_endpoint_that_keeps_failing_stops_the_run_early(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    corpus = make_corpus(tmp_path, {f"t{i}": {"prompt": fake(answer="x", exit=1)}
                                    for i in range(12)})
    cfg = config(tmp_path, corpus, scenario(workers=1))
    plan = build_plan(cfg.scenario, cfg.corpus.tasks)
    from copeca_action.engine import _execute

    monkeypatch.setattr(_execute, "endpoint_failure",
                        lambda result, transcript: "HTTP 401: invalid x-api-key")
    with pytest.raises(InfraError) as info:
        _in_time(lambda: run_plan(cfg, plan, scenario_text="name: t\n"))
    assert "the model endpoint failed 5 times in a row" in str(info.value)
    assert "HTTP 401" in str(info.value)
    records = read_records(cfg.out.results)
    assert len(records) < len(plan.runs) * cfg.max_attempts  # stopped early
    assert all(r.outcome == "infra_error" and "HTTP 401" in (r.error or "")
               for r in records if "interrupted" not in (r.error or ""))
