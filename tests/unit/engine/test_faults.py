"""Faults end cleanly and resumably: a full disk mid-run stops with a named error (no hang,
no traceback), `--resume` completes the plan; a torn last line is repaired on resume; an
endpoint that keeps failing stops the run early."""

from __future__ import annotations

import errno
import os
import threading
from pathlib import Path

import pytest
from engine_helpers import config, fake, make_corpus, scenario

from copeca_action.engine import _scheduler, run_plan
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
