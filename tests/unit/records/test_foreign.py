"""Reading results files: our format fast, and the `copeca` CLI's records mapped onto ours."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from copeca_action.errors import ConfigError
from copeca_action.records import RunRecord, detect_format, from_copeca, read_rows


def copeca_record(**over: Any) -> dict[str, Any]:
    """Shaped like a line of copeca 0.1.0's results/<scenario>.jsonl."""
    row: dict[str, Any] = {
        "task": "flask_locate_route", "repo": "flask", "category": "locate",
        "language": "python", "difficulty": "easy", "mode": "indexed",
        "model": "claude-haiku-4-5", "runner": "claude", "repetition": 2,
        "timestamp": "2026-06-01T10:00:00+00:00", "correct": True,
        "correctness_detail": {"required_strings_passed": True, "all_of_passed": True,
                               "forbidden_strings_passed": True, "test_command_passed": None},
        "num_turns": 6, "num_tool_calls": 5, "tool_adopted": True, "total_cost_usd": 0.042,
        "cost_source": "vendor", "duration_ms": 15300, "context_tokens": 1200,
        "output_tokens": 300, "input_tokens": 1000, "cache_creation_tokens": 200,
        "cache_read_tokens": 9000, "result_text": "…", "tool_sequence": ["Read"],
        "error": None, "exit_code": 0,
        "adversarial_flags": {"timeout": False, "budget_exhausted": False, "error": False,
                              "token_snowball": True, "talkative_failure": False,
                              "tool_storm": False},
        "test_command_output": None,
        "metadata": {"copeca_version": "0.1.0", "task_version": 1}}
    row.update(over)
    return row


def test_copeca_records_map_field_by_field() -> None:
    row = from_copeca(copeca_record(), "scn")
    rec = RunRecord.model_validate({"task_hash": "", **row})
    assert (rec.task_id, rec.arm, rec.model, rec.repetition) == (
        "flask_locate_route", "indexed", "claude-haiku-4-5", 2)
    assert rec.outcome == "ok" and rec.correct and rec.cost_usd == 0.042
    assert rec.cost_source == "vendor" and rec.duration_s == pytest.approx(15.3)
    assert (rec.tokens.input, rec.tokens.output, rec.tokens.cache_write,
            rec.tokens.cache_read) == (1000, 300, 200, 9000)
    assert (rec.turns, rec.tool_calls, rec.tool_adopted) == (6, 5, True)
    assert rec.flags == ["token_snowball"] and not rec.control


def test_copeca_outcomes() -> None:
    harness_failure = {"task": "t", "repo": "r", "mode": "baseline", "model": "m",
                       "runner": "unknown", "repetition": 0, "timestamp": "x",
                       "correct": False, "error": "tool availability preflight failed"}
    assert from_copeca(harness_failure)["outcome"] == "infra_error"
    timed_out = copeca_record(adversarial_flags={"timeout": True}, correct=False)
    assert from_copeca(timed_out)["outcome"] == "timeout"
    failed = copeca_record(error="boom", exit_code=1, correct=False)
    assert from_copeca(failed)["outcome"] == "agent_error"
    modeled = copeca_record(cost_source="modeled",
                            metadata={"vendor_cost_divergence_warning": "differs"})
    mapped = from_copeca(modeled)
    assert mapped["cost_source"] == "computed" and "cost_divergence" in mapped["flags"]


@pytest.mark.parametrize("how", ["absent", "null"])
def test_copeca_turns_tool_calls_and_duration_not_reported_are_left_out_not_zero(
        how: str) -> None:
    """A copeca record without `num_turns` (or with null) read as 0 turns, and the report
    said "0.0 turns per run": not reported is left out (n/a in the report); a 0 stays 0."""
    fields = ("num_turns", "num_tool_calls", "duration_ms")
    row = copeca_record()
    for name in fields:
        if how == "absent":
            del row[name]
        else:
            row[name] = None
    mapped = from_copeca(row)
    assert not {"turns", "tool_calls", "duration_s"} & set(mapped)
    zero = from_copeca(copeca_record(num_turns=0, num_tool_calls=0, duration_ms=0))
    assert (zero["turns"], zero["tool_calls"], zero["duration_s"]) == (0, 0, 0.0)


def test_detect_format() -> None:
    assert detect_format(copeca_record()) == "copeca"
    assert detect_format({"schema_version": 1, "run_id": "x"}) == "copeca-action"


def test_read_rows_reads_copeca_files(tmp_path: Path) -> None:
    path = tmp_path / "scn.jsonl"
    path.write_text("\n".join(json.dumps(copeca_record(repetition=i)) for i in range(3)) + "\n")
    rows, fmt = read_rows(path)
    assert fmt == "copeca" and len(rows) == 3 and rows[0]["scenario"] == "scn"


def test_a_bad_line_is_located(tmp_path: Path) -> None:
    good = {"run_id": "a", "scenario": "s", "task_id": "t", "task_hash": "h", "arm": "b",
            "model": "m", "runner": "r", "repetition": 0, "outcome": "ok"}
    bad = {**good, "run_id": "b", "outcome": "exploded"}
    path = tmp_path / "r.jsonl"
    path.write_text(json.dumps(good) + "\n" + json.dumps(bad) + "\n")
    with pytest.raises(ConfigError) as err:
        read_rows(path)
    problem = err.value.problems[0]
    assert problem.line == 2 and problem.field == "outcome"


def test_a_truncated_last_line_is_skipped(tmp_path: Path) -> None:
    good = {"run_id": "a", "scenario": "s", "task_id": "t", "task_hash": "h", "arm": "b",
            "model": "m", "runner": "r", "repetition": 0, "outcome": "ok",
            "correct": True}
    path = tmp_path / "r.jsonl"
    path.write_text(json.dumps(good) + "\n" + json.dumps(good)[:20])
    rows, _ = read_rows(path)
    assert len(rows) == 1


def test_a_broken_line_in_the_middle_is_an_error(tmp_path: Path) -> None:
    good = {"run_id": "a", "scenario": "s", "task_id": "t", "task_hash": "h", "arm": "b",
            "model": "m", "runner": "r", "repetition": 0, "outcome": "ok",
            "correct": True}
    path = tmp_path / "r.jsonl"
    path.write_text(json.dumps(good) + "\n{broken\n" + json.dumps(good) + "\n")
    with pytest.raises(ConfigError) as err:
        read_rows(path)
    assert err.value.problems[0].line == 2 and "not JSON" in err.value.problems[0].message


def test_errors_are_located_past_the_first_slice(tmp_path: Path) -> None:
    good = {"run_id": "a", "scenario": "s", "task_id": "t", "task_hash": "h", "arm": "b",
            "model": "m", "runner": "r", "repetition": 0, "outcome": "ok", "cost_usd": 1.0,
            "correct": True}
    lines = [json.dumps({**good, "run_id": str(i)}) for i in range(9000)]
    lines[8500] = json.dumps({**good, "cost_usd": -1})
    path = tmp_path / "r.jsonl"
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(ConfigError) as err:
        read_rows(path)
    assert err.value.problems[0].line == 8501 and err.value.problems[0].field == "cost_usd"


def copeca_2026_record(**over: Any) -> dict[str, Any]:
    """Shaped like a line of copeca at fc9c5b9 (June 2026 on): `control`, `cli_version`,
    `tool_version`, `tool_path`, `tool_under_test`, `mode_append_system_prompt`."""
    row = copeca_record(control=False, cli_version="2.1.197 (Claude Code)",
                        tool_version=None, tool_path=None, tool_under_test=None,
                        mode_append_system_prompt=None, repetition=0)
    row.update(over)
    return row


def _write(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_copeca_control_and_cli_version_are_kept(tmp_path: Path) -> None:
    path = _write(tmp_path / "r.jsonl", [
        copeca_2026_record(task="a", control=True),
        copeca_2026_record(task="b", control=False)])
    notes: list[str] = []
    rows, fmt = read_rows(path, notes)
    assert fmt == "copeca"
    assert [r["control"] for r in rows] == [True, False]
    assert {r["cli_version"] for r in rows} == {"2.1.197 (Claude Code)"}
    assert notes == []  # nothing was missing or renumbered


def test_old_copeca_records_say_what_they_lack(tmp_path: Path) -> None:
    notes: list[str] = []
    rows, _ = read_rows(_write(tmp_path / "r.jsonl", [copeca_record()]), notes)
    assert "control" not in rows[0] and "cli_version" not in rows[0]
    assert any("no control flag" in n for n in notes)
    assert any("no CLI version" in n for n in notes)


def test_repeated_single_task_runs_become_repetitions_in_file_order(tmp_path: Path) -> None:
    """copeca's single-task mode writes repetition 0 for every run: 12 runs of two cells are
    12 runs, not 2 (each was paid for)."""
    lines = []
    for i in range(6):
        for mode in ("baseline", "indexed"):
            lines.append(copeca_2026_record(mode=mode, total_cost_usd=0.01 * (i + 1)))
    notes: list[str] = []
    rows, _ = read_rows(_write(tmp_path / "r.jsonl", lines), notes)
    assert len(rows) == 12
    assert len({r["run_id"] for r in rows}) == 12
    for mode in ("baseline", "indexed"):
        mine = [r for r in rows if r["arm"] == mode]
        assert [r["repetition"] for r in mine] == [0, 1, 2, 3, 4, 5]
        assert [round(r["cost_usd"], 2) for r in mine] == [0.01, 0.02, 0.03, 0.04, 0.05, 0.06]
    assert any("10 copeca records repeated a cell" in n for n in notes)


def test_a_repeat_never_takes_a_repetition_the_file_uses_later(tmp_path: Path) -> None:
    rows, _ = read_rows(_write(tmp_path / "r.jsonl", [
        copeca_2026_record(repetition=0), copeca_2026_record(repetition=0),
        copeca_2026_record(repetition=1)]))
    assert [r["repetition"] for r in rows] == [0, 2, 1]


def test_analyze_counts_every_repeated_copeca_run(tmp_path: Path) -> None:
    from copeca_action.cli import main

    lines = [copeca_2026_record(task=t, mode=m, correct=True, total_cost_usd=c)
             for t in ("t1", "t2", "t3") for m, c in (("baseline", 0.02), ("indexed", 0.01))
             for _ in range(3)]
    out = tmp_path / "report.json"
    assert main(["analyze", str(_write(tmp_path / "r.jsonl", lines)), "--format", "json",
                 "--out", str(out)]) == 0
    report = json.loads(out.read_text())
    assert report["records"] == 18
    assert {a["arm"]: a["runs"] for a in report["arms"]} == {"baseline": 9, "indexed": 9}
