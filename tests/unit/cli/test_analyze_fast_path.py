"""`analyze` reads results with the typed columnar reader (`read_coded`: `read_columns`'s
records as the table's coded parts) and falls back to the validating one (`read_rows`)
whenever the fast path is not sure. Both must give the same report, byte for byte, in
markdown and JSON, on our format and on copeca's; a bad line is reported as before (file,
line, field). A large file is read by two processes."""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from copeca_action import records
from copeca_action.cli import main
from copeca_action.records import _columns, read_coded, read_columns
from copeca_action.report import table_from_coded, table_from_columns
from copeca_action.report._simulate import Population, make_rows


def write(path: Path, rows: list[dict[str, Any]], tail: str = "") -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows) + tail)
    return path


def ours() -> list[dict[str, Any]]:
    """Simulated records with every field the report reads varied: failures, unknown and
    excluded spend, controls, served models, endpoints, versions, flags, missing fields."""
    rows = make_rows(Population(cost_ratio=1.2), 14, 4, np.random.default_rng(7))
    for i, row in enumerate(rows):
        row["scenario"] = "sim"
        row["control"] = row["task_id"] in ("t0", "t1", "t2", "t3", "t4", "t5")
        row["cli_version"] = "1.0" if i % 3 else "1.1"
        row["endpoint"] = ("real", "scripted", None)[i % 3]
        row["cost_source"] = ("vendor", "computed")[i % 2]
        if i % 11 == 0:
            row["served_model"] = "other-model"
        if i % 13 == 0:
            row["flags"] = ["tool_storm", "timeout"]
        if i % 17 == 0:
            row["tool_adopted"] = None
        row["pricing_updated"] = f"2026-0{1 + i % 3}-01"  # the oldest is stale at the run
        row["started_at"] = f"2026-11-{1 + i % 20:02d}T10:00:00+00:00"
    rows[5].update(outcome="infra_error", cost_usd=0.04)  # excluded spend
    rows[6].update(outcome="budget_stop", cost_usd=None)  # excluded, unknown
    rows[9].update(cost_usd=None, cost_unknown_reason="no price for other-model")
    rows[12].update(outcome="agent_error", correct=True)
    rows.append({"run_id": "minimal", "task_id": "t9", "arm": "baseline", "model": "m",
                 "outcome": "ok", "correct": True, "cost_usd": 0.5})  # every optional
    # field left out (a run that reached the agent has a cost and a grade: see below)
    return rows


def copeca(rows: list[dict[str, Any]], layout_2026: bool) -> list[dict[str, Any]]:
    """The same runs as copeca result lines (answer text and fields the reader skips)."""
    out = []
    for i, r in enumerate(rows):
        t = r.get("tokens") or {}
        line: dict[str, Any] = {
            "task": r["task_id"], "repo": "r", "mode": r["arm"], "model": r["model"],
            "runner": r.get("runner"), "repetition": r.get("repetition", 0),
            "category": r.get("category"), "language": r.get("language"),
            "correct": r.get("correct", False), "num_turns": r.get("turns"),
            "num_tool_calls": r.get("tool_calls"), "tool_adopted": r.get("tool_adopted"),
            "total_cost_usd": r.get("cost_usd", 0.0), "cost_source": ("vendor", "modeled")[i % 2],
            "duration_ms": int(1000 * r.get("duration_s", 0.0)) + i % 7,
            "input_tokens": t.get("input"), "output_tokens": t.get("output"),
            "cache_creation_tokens": t.get("cache_write"), "cache_read_tokens": t.get("cache_read"),
            "result_text": "the answer \"quoted\" \u00e9 " * 20, "error": None, "exit_code": 0,
            "adversarial_flags": {"timeout": i % 19 == 0, "tool_storm": i % 5 == 0,
                                  "token_snowball": False},
            "metadata": {"copeca_version": "0.1.0",
                         "vendor_cost_divergence_warning": i % 23 == 0},
        }
        if i % 29 == 0:
            line["error"] = "boom"
        if i % 31 == 0:
            line["exit_code"] = 3
        if layout_2026:
            line["control"] = r.get("control", False) if i % 2 else None
            line["cli_version"] = r.get("cli_version") or ""
        out.append(line)
    return out


def reports(path: Path, monkeypatch: pytest.MonkeyPatch, fast: bool) -> tuple[str, str]:
    with monkeypatch.context() as patch:
        if not fast:
            patch.setattr(records, "read_columns", lambda _path, _meanwhile=None: None)
            patch.setattr(records, "read_coded", lambda _path, _meanwhile=None: None)
        texts = []
        for fmt in ("md", "json"):
            out = path.with_suffix(f".{fast}.{fmt}")
            assert main(["analyze", str(path), "--format", fmt, "--resamples", "300",
                         "--out", str(out)]) == 0
            texts.append(out.read_text())
    return texts[0], texts[1]


def same_reports(path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[str, str]:
    fast = reports(path, monkeypatch, fast=True)
    assert fast == reports(path, monkeypatch, fast=False)
    return fast


def test_our_format_gives_the_same_report_on_both_paths(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = write(tmp_path / "results.jsonl", ours())
    assert read_columns(path) is not None  # the fast path really reads this file
    md, js = same_reports(path, monkeypatch)
    report = json.loads(js)
    assert report["records"] == len(ours()) - 1  # the unknown-cost run is left out
    assert report["exclusions"]["unknown_cost_runs"] == [ours()[9]["run_id"]]
    assert "codesearch vs baseline" in md
    # the records' own price dates, judged at the day the last run started
    assert "prices last checked 2026-01-01, more than 60 days before the run (2026-11-20)" in md


def test_a_record_without_a_cost_is_an_unknown_cost_on_both_paths(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A record (written by hand or another tool) of a run that reached the agent with no
    `cost_usd` has an unknown cost, never the $0 a default would make of it (one arm all
    free read as a -100% improvement); a run that never reached the agent still costs 0."""
    rows = [{"run_id": f"{arm}-{t}-{r}", "task_id": f"t{t}", "arm": arm, "model": "m",
             "repetition": r, "outcome": "ok", "correct": (t + r) % 3 > 0,
             **({"cost_usd": 0.5} if arm == "baseline" else {})}
            for t in range(8) for arm in ("codesearch", "baseline") for r in range(2)]
    rows.append({"run_id": "lost", "task_id": "t0", "arm": "codesearch", "model": "m",
                 "repetition": 9, "outcome": "infra_error"})
    path = write(tmp_path / "results.jsonl", rows)
    assert read_columns(path) is None  # the fast path leaves the decision to read_rows
    md, js = same_reports(path, monkeypatch)
    report = json.loads(js)
    assert report["verdict"] == "invalid"
    assert "the record has no cost_usd" in report["verdict_reasons"][0]
    assert len(report["exclusions"]["unknown_cost_runs"]) == 16
    assert report["spend"]["unknown_attempts"] == 16
    assert report["exclusions"]["infra_error_runs"] == ["lost"]
    assert "-100.0%" not in md and "improvement" not in md.split("\n")[2]


def test_a_run_that_ended_ok_without_a_grade_is_refused_on_both_paths(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Left out, `correct` would count as a wrong answer: the file, line and field are
    named instead. Runs that failed or never reached the agent need no grade."""
    rows = [{"run_id": "a", "task_id": "t", "arm": "baseline", "model": "m", "outcome": "ok",
             "correct": True, "cost_usd": 1.0},
            {"run_id": "b", "task_id": "t", "arm": "baseline", "model": "m",
             "outcome": "infra_error"},
            {"run_id": "c", "task_id": "t", "arm": "baseline", "model": "m",
             "outcome": "agent_error", "cost_usd": 0.2},
            {"run_id": "d", "task_id": "t", "arm": "codesearch", "model": "m", "outcome": "ok",
             "cost_usd": 1.0}]
    path = write(tmp_path / "results.jsonl", rows)
    assert read_columns(path) is None
    assert main(["analyze", str(path)]) == 2
    err = capsys.readouterr().err
    assert f"{path}:4" in err and "correct" in err and "Traceback" not in err
    assert "must say whether its answer was right" in err
    write(path, rows[:3])
    assert main(["analyze", str(path), "--format", "json"]) == 0
    capsys.readouterr()
    # copeca's too (it writes null where it could not grade): refused when the run ended
    # ok, a wrong answer when it failed anyway
    lines = copeca(ours()[:6], True)
    lines[2] = {**lines[2], "correct": None, "error": None, "exit_code": 0,
                "adversarial_flags": {}}
    path = write(tmp_path / "scn.jsonl", lines)
    assert read_columns(path) is None
    assert main(["analyze", str(path)]) == 2
    assert f"{path}:3: correct:" in capsys.readouterr().err
    lines[2]["error"] = "boom"
    write(path, lines)
    assert main(["analyze", str(path), "--format", "json"]) == 0


@pytest.mark.parametrize(("fmt", "bad", "field"), [
    ("ours", {"repetition": 10**20}, "repetition"),
    ("ours", {"tokens": {"input": 10**13}}, "tokens.input"),
    ("ours", {"turns": 10**19}, "turns"),
    ("copeca", {"input_tokens": -5}, "input_tokens"),
    ("copeca", {"cache_read_tokens": 10**20}, "cache_read_tokens"),
    ("copeca", {"num_turns": -3}, "num_turns"),
    ("copeca", {"num_tool_calls": 10**13}, "num_tool_calls"),
    ("copeca", {"duration_ms": -100}, "duration_ms"),
    ("copeca", {"repetition": 10**19}, "repetition"),
    ("ours", {"duration_s": float("inf")}, "duration_s"),
    ("copeca", {"duration_ms": float("inf")}, "duration_ms")])
def test_counts_out_of_range_are_named_not_a_traceback(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], fmt: str, bad: dict[str, Any],
        field: str) -> None:
    """A negative count, or one past 10^12 (no measurement; 64-bit sums overflow), or an
    infinite duration, on either path: the file, line and copeca's or our field, and exit 2
    (it was a traceback from numpy, a negative token count or an infinite duration in the
    report)."""
    rows = ours()[:6]
    lines = copeca(rows, True) if fmt == "copeca" else rows
    lines[3] = {**lines[3], **bad}
    path = tmp_path / "r.jsonl"  # an infinity as JSON has it: a number too large
    path.write_text("".join(json.dumps(r).replace("Infinity", "1e999") + "\n" for r in lines))
    assert read_columns(path) is None
    assert main(["analyze", str(path)]) == 2
    err = capsys.readouterr().err
    assert f"{path}:4: {field}:" in err and "Traceback" not in err


@pytest.mark.parametrize("layout_2026", [True, False])
def test_copeca_format_gives_the_same_report_on_both_paths(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, layout_2026: bool) -> None:
    lines = copeca(ours()[:-1], layout_2026)
    if not layout_2026:  # copeca's single-task mode: repeated cells, repetition 0
        lines += [dict(lines[0], repetition=0), dict(lines[0], repetition=0)]
    path = write(tmp_path / "scn.jsonl", lines)
    assert read_columns(path) is not None
    md, js = same_reports(path, monkeypatch)
    assert json.loads(js)["source_format"] == "copeca"
    assert ("copeca records repeated a cell" in md) is not layout_2026
    assert ("carry no control flag" in md) is not layout_2026


def test_a_copeca_zero_that_is_no_price_is_an_unknown_cost_on_both_paths(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """copeca writes the CLI's own cost as `vendor` when it has no price for the model, and
    codex and gemini report none: $0 for a run that used tokens is no price (unknown cost,
    the verdict invalid), where a `modeled` $0 (a price of 0 given) and a run with no token
    stay $0."""
    lines = copeca(ours()[:-1], True)
    unpriced = [i for i, line in enumerate(lines) if line["mode"] == "codesearch"][:3]
    for i in unpriced:
        lines[i].update(total_cost_usd=0.0, cost_source="vendor", input_tokens=900)
    free = next(i for i, line in enumerate(lines) if line["mode"] == "baseline")
    lines[free].update(total_cost_usd=0.0, cost_source="modeled", input_tokens=900)
    idle = next(i for i, line in enumerate(lines)
                if line["mode"] == "baseline" and i != free)
    lines[idle].update(total_cost_usd=0.0, cost_source="vendor", input_tokens=0,
                       output_tokens=0, cache_creation_tokens=0, cache_read_tokens=0)
    path = write(tmp_path / "scn.jsonl", lines)
    assert read_columns(path) is not None  # the fast path reads it
    _, js = same_reports(path, monkeypatch)
    report = json.loads(js)
    ids = sorted(f"copeca:{lines[i]['task']}:codesearch:{lines[i]['model']}:"
                 f"{lines[i]['repetition']}" for i in unpriced)
    assert report["exclusions"]["unknown_cost_runs"] == ids
    assert report["verdict"] == "invalid"
    assert "copeca recorded $0 for a run that used tokens" in report["verdict_reasons"][0]
    # and the fixture's two lines with no total_cost_usd (excluded as infra errors)
    assert report["spend"]["unknown_attempts"] == 3 + 2


def test_an_arm_with_no_known_cost_at_all_is_invalid_not_missing(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every run of the tool arm unpriced: the arm has no row to compare, and the verdict
    says why (invalid: unknown cost), not "no tool arm with a baseline"."""
    lines = [dict(line, total_cost_usd=0.0, cost_source="vendor", input_tokens=900)
             if line["mode"] == "codesearch" else line
             for line in copeca(ours()[:-1], True)]
    path = write(tmp_path / "scn.jsonl", lines)
    md, js = same_reports(path, monkeypatch)
    report = json.loads(js)
    assert report["verdict"] == "invalid" and not report["comparisons"]
    assert "have no known cost" in report["verdict_reasons"][0]
    assert "no tool arm" not in md


@pytest.mark.parametrize("case", ["retry", "retrieval", "torn_tail", "lax_type",
                                  "copeca_string_cost", "copeca_string_flag"])
def test_files_the_fast_path_declines_give_the_same_report(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, case: str) -> None:
    rows = ours()
    tail = ""
    if case == "retry":  # an infra error superseded by its retry
        rows.insert(3, dict(rows[3], outcome="infra_error", cost_usd=0.01))
    elif case == "retrieval":
        rows[0]["retrieval"] = {"steps": 2, "dropped_paths": 0}
    elif case == "torn_tail":
        tail = '{"run_id": "cut'
    elif case == "lax_type":
        rows[4]["repetition"] = str(rows[4]["repetition"])  # pydantic accepts "2"
    elif case == "copeca_string_cost":
        rows = copeca(rows[:-1], True)
        rows[2]["total_cost_usd"] = str(rows[2]["total_cost_usd"])  # float("0.03")
    else:  # a flag that is not a boolean: read_rows takes any truthy value
        rows = copeca(rows[:-1], True)
        rows[2]["adversarial_flags"] = {"timeout": "yes", "tool_storm": False}
    path = write(tmp_path / "results.jsonl", rows, tail)
    assert read_columns(path) is None
    same_reports(path, monkeypatch)


@pytest.mark.parametrize(("field", "value", "message"),
                         [("outcome", "great", "outcome"), ("cost_usd", -1.0, "cost_usd"),
                          ("repetition", -2, "repetition")])
def test_a_bad_line_is_still_located_by_file_line_and_field(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], field: str, value: object,
        message: str) -> None:
    rows = ours()
    rows[2][field] = value
    path = write(tmp_path / "results.jsonl", rows)
    assert read_columns(path) is None
    assert main(["analyze", str(path)]) == 2
    err = capsys.readouterr().err
    assert f"{path}:3" in err and message in err


@pytest.mark.parametrize("garbage", ["not json", "{\"run_id\": ", "[1, 2]", "\u00ff\u0000"])
def test_a_line_that_is_not_json_is_located_too(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], garbage: str) -> None:
    """msgspec raises DecodeError (not its ValidationError) for malformed JSON: the fast path
    declines, and the validating reader names the line."""
    path = tmp_path / "results.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in ours()[:3]) + garbage + "\n{}\n")
    assert read_columns(path) is None
    assert main(["analyze", str(path)]) == 2
    err = capsys.readouterr().err
    assert f"{path}:4" in err and "Traceback" not in err


@pytest.mark.parametrize(("fmt", "where"), [
    ("ours", b'"task_id": "'), ("ours", b'"task_id'), ("ours", b'"harness_version": "'),
    ("copeca", b'"task": "'), ("copeca", b'"task'), ("copeca", b'"result_text": "')])
def test_bytes_that_are_not_utf8_are_located(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                             fmt: str, where: bytes) -> None:
    """Bytes that are not UTF-8 in a value the reader decodes (msgspec raises
    UnicodeDecodeError, neither of its own errors), in a key, or in a value it skips (which
    msgspec does not check): the fast path declines, and the line is named, no traceback."""
    rows = ours()[:4] if fmt == "ours" else copeca(ours()[:4], True)
    rows[2]["harness_version"] = "0.1"
    lines = [json.dumps(r).encode() for r in rows]
    assert where in lines[2]
    lines[2] = lines[2].replace(where, where + b"\xff\xfe", 1)
    path = tmp_path / "results.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n")
    assert read_columns(path) is None
    assert main(["analyze", str(path)]) == 2
    err = capsys.readouterr().err
    assert f"{path}:3" in err and "not JSON" in err and "Traceback" not in err


def test_blocks_smaller_than_a_line_read_the_same_records(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from copeca_action.records import _columns

    path = write(tmp_path / "scn.jsonl", copeca(ours()[:-1], True))
    whole = read_columns(path)
    monkeypatch.setattr(_columns, "_BLOCK", 97)  # every line spans several reads
    pieces = read_columns(path)
    assert whole is not None and pieces is not None
    assert pieces[0] == whole[0] and len(pieces[0]) == len(ours()) - 1
    same_reports(path, monkeypatch)


@pytest.mark.parametrize(("costs", "sound"), [
    ([1.0, None, 0.0, -0.0], True), ([], True), ([None], True), ([-1.0, None], False),
    ([1.0, float("nan")], False), ([float("nan"), 1.0], False), ([float("inf")], False),
    ([float("-inf"), float("inf")], False), ([1e308, 1e308], False)])
def test_costs_the_fast_path_leaves_to_the_validating_reader(costs: list[float | None],
                                                             sound: bool) -> None:
    """Negative or non-finite costs (and sums too large to add up: read_rows decides)."""
    from copeca_action.records._columns import Columns, _sound

    assert _sound(Columns(cost_usd=costs, repetition=[0] * len(costs))) is sound
    # the same costs read by two processes, the helper's part coded (`read_coded`)
    import random

    from copeca_action.records._columns import _sound_parts, code

    for cut in range(len(costs) + 1):
        head, rest = (random_columns(random.Random(cut), n) for n in (cut, len(costs) - cut))
        head.cost_usd, rest.cost_usd = costs[:cut], costs[cut:]
        assert _sound_parts([code(head), code(rest)]) is sound


# ---------------------------------------------------------------- two processes
# A large file is read by two processes: a forked helper decodes the second part and sends
# its columns back. The columns must be exactly those one process gives; a refused line, a
# torn tail or a dead helper anywhere makes the reader answer None (the validating reader
# then decides), and the helper is always reaped.


@pytest.fixture
def forks(monkeypatch: pytest.MonkeyPatch, fork_pids: list[int]) -> list[int]:
    """Every file is read by two processes; the helpers' pids as they are forked."""
    monkeypatch.setattr(_columns, "PARALLEL_BYTES", 1)
    monkeypatch.setattr(_columns, "_BLOCK", 512)  # each process reads several blocks
    # numpy's BLAS threads run in this process; the helper touches neither them nor their
    # locks (`test_analyze_forks_before_any_thread_starts` runs the real check)
    monkeypatch.setattr(_columns, "can_fork", lambda: threading.active_count() == 1)
    return fork_pids


def alone(path: Path) -> tuple[Any, ...] | None:
    """What one process reads."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(_columns, "PARALLEL_BYTES", 1 << 62)
        return read_columns(path)


def lines(kind: str) -> list[dict[str, Any]]:
    if kind == "ours":  # three times over, under new run ids
        return [dict(r, run_id=f"{r['run_id']}-{i}") for i, r in enumerate(ours() * 3)]
    rows = copeca(ours()[:-1], kind == "copeca_2026")
    if kind == "copeca_repeats":  # copeca's single-task mode: cells repeated in both parts
        rows += [dict(rows[0], repetition=0), dict(rows[1], repetition=0)] * 4
    return rows


@pytest.mark.parametrize("kind", ["ours", "copeca_2026", "copeca_2025", "copeca_repeats"])
def test_two_processes_read_the_columns_one_reads(tmp_path: Path, forks: list[int],
                                                  kind: str) -> None:
    rows = lines(kind)
    path = write(tmp_path / "results.jsonl", rows)
    calls: list[int] = []
    both = read_columns(path, meanwhile=lambda: calls.append(len(forks)))
    assert forks and calls == [1]  # a helper was forked, and meanwhile ran after it
    one = alone(path)
    assert both is not None and one is not None
    assert both[0] == one[0] and both[1:] == one[1:]
    assert len(both[0]) == len(rows)
    assert both[0].run_id[-1] == one[0].run_id[-1]  # the helper's part is appended in order
    if kind == "copeca_repeats":
        assert "8 copeca records repeated a cell" in both[2][0]
    # the helper's part coded for the table (the repeats: read again here, one part)
    coded = read_coded(path)
    assert coded is not None and len(forks) == 2
    assert len(coded[0]) == (1 if kind == "copeca_repeats" else 2)
    assert coded[1:] == one[1:]
    same_table(table_from_coded(coded[0], "s", coded[2]), table_from_columns(one[0], "s", one[2]))


def same_table(a: Any, b: Any) -> None:
    """Two RecordTables hold the same values, of the same types and shapes."""
    import dataclasses

    from copeca_action.report._table import Labels

    for f in dataclasses.fields(a):
        x, y = getattr(a, f.name), getattr(b, f.name)
        if isinstance(x, Labels):
            assert x.names == y.names, f.name
            x, y = x.codes, y.codes
        if isinstance(x, np.ndarray):
            assert isinstance(y, np.ndarray) and (x.dtype, x.shape) == (y.dtype, y.shape), f.name
            assert np.array_equal(x, y, equal_nan=x.dtype.kind == "f"), f.name
        else:
            assert x == y, f.name


def random_columns(rng: Any, n: int) -> Any:
    """Columns of `n` records with every value the table and the spend account read varied
    (unknown and excluded costs, None and '' cost sources, served models, unreported
    counts, flags, endpoints, dates), as the typed reader gives them."""
    import datetime as dt

    from copeca_action.records import Columns
    from copeca_action.records._columns import _Design

    def pick(*values: Any) -> Any:
        return values[rng.randrange(len(values))]

    designs = (_Design("0" * 16), _Design("1" * 16, "2" * 16))

    rows = []
    for i in range(n):
        outcome = pick("ok", "ok", "ok", "agent_error", "timeout", "infra_error", "budget_stop")
        rows.append(dict(
            run_id=f"r{i}", task_id=pick("b", "a", "c", f"t{rng.randrange(9)}"),
            arm=pick("baseline", "tool"), model=pick("m", "m", "n"),
            served_model=pick(None, None, None, "s", "m"), runner=pick("claude", "codex", ""),
            cli_version=pick(None, "", "1.0", "2.0"), category=pick("", "x", "y"),
            language=pick("python", "go"), outcome=outcome, correct=pick(True, False),
            cost_usd=pick(None, 0.0, 0.25, 1.5, 3e-7), cost_source=pick(None, "", "vendor",
                                                                       "computed", "none"),
            cost_unknown_reason=pick(None, "no price"), control=pick(False, False, True),
            tool_adopted=pick(None, False, True), repetition=rng.randrange(4),
            tokens=(rng.randrange(9), rng.randrange(9), 0, rng.randrange(99)),
            turns=pick(None, 1, 7), tool_calls=pick(None, 0, 3), duration_s=pick(None, 1.5, 9.0),
            flags=pick((), (), ("tool_storm",), ("harness_died", "cost_lower_bound"),
                       ("cost_lower_bound",)),
            endpoint=pick(None, "real", "scripted"), scenario=pick("s1", "s2"),
            pricing_updated=pick(None, None, dt.date(2026, 1, 1 + i % 28)),
            started_at=pick(None, f"2026-11-0{1 + i % 9}T10:00:00+00:00",
                            dt.datetime(2026, 10, 1 + i % 30, tzinfo=dt.UTC)),
            design=pick(None, None, *designs)))
    return Columns(**{k: [r[k] for r in rows] for k in rows[0]} if rows else {})


def test_the_coded_parts_give_the_table_of_the_whole_columns() -> None:
    """`read_coded`'s parts (`code` of each block a process reads, joined in the process,
    `_joined`; the table's arrays and labels merged in `table_from_coded`) give the very
    table `table_from_columns` builds from the whole file's columns, wherever the file is
    split: labels a part lacks, a cost source None in one part only, unknown costs, records
    that never reached the agent."""
    import dataclasses
    import itertools
    import random

    from copeca_action.records._columns import _joined, code

    rng = random.Random(5)
    for trial in range(60):
        n = rng.randrange(0, 40)
        whole = random_columns(rng, n)
        if trial % 3 == 0:  # the usual file: every source known, no served model
            whole.cost_source = [c or "vendor" for c in whole.cost_source]
            whole.served_model = [None] * n
            whole.cost_usd = [0.5 if c is None else c for c in whole.cost_usd]
        cuts = sorted(rng.sample(range(n + 1), min(n + 1, rng.randrange(1, 4))))
        bounds = [0, *cuts, n]
        parts = [code(type(whole)(**{f.name: getattr(whole, f.name)[a:b]
                                     for f in dataclasses.fields(whole)}))
                 for a, b in itertools.pairwise(bounds)]
        same_table(table_from_coded(parts, "", ["note"]),
                   table_from_columns(whole, "", ["note"]))
        # a process's blocks coded one by one and joined (`_joined`), then merged
        at = rng.randrange(len(parts) + 1)
        joined = [_joined(parts[:at]), _joined(parts[at:])]
        same_table(table_from_coded(joined, "", ["note"]),
                   table_from_columns(whole, "", ["note"]))


def test_the_report_is_the_same_when_two_processes_read(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, forks: list[int]) -> None:
    path = write(tmp_path / "scn.jsonl", copeca(ours()[:-1], True))
    same_reports(path, monkeypatch)
    assert len(forks) == 2  # md and json, each read by two processes


@pytest.mark.parametrize(("case", "where"), [
    *((case, where) for case in ("not_json", "wrong_type", "retrieval")
      for where in ("first", "last")),
    ("torn_tail", "last")])  # a torn line can only end the file: the first part ends at "\n"
def test_a_line_either_process_refuses_declines_the_file(
        tmp_path: Path, forks: list[int], where: str, case: str) -> None:
    rows = [dict(r, run_id=f"{r['run_id']}-{i}") for i, r in enumerate(ours() * 2)]
    at = 1 if where == "first" else len(rows) - 2
    text = [json.dumps(r) + "\n" for r in rows]
    if case == "not_json":
        text[at] = '{"run_id": \n'
    elif case == "wrong_type":
        text[at] = json.dumps(dict(rows[at], repetition="2")) + "\n"
    elif case == "retrieval":
        text[at] = json.dumps(dict(rows[at], retrieval={"steps": 1})) + "\n"
    else:
        text.append('{"run_id": "cut')
    path = tmp_path / "results.jsonl"
    path.write_text("".join(text))
    assert alone(path) is None
    assert read_columns(path) is None
    assert read_coded(path) is None
    assert forks


def test_a_helper_that_dies_declines_the_file(tmp_path: Path, forks: list[int],
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    path = write(tmp_path / "scn.jsonl", copeca(ours()[:-1], True))
    monkeypatch.setattr(_columns, "_help", lambda *_: os._exit(3))
    assert read_columns(path) is None
    assert read_coded(path) is None
    assert forks


def test_a_failure_while_the_helper_reads_stops_and_reaps_it(
        tmp_path: Path, forks: list[int]) -> None:
    path = write(tmp_path / "scn.jsonl", copeca(ours()[:-1], True))

    def fail() -> None:
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        read_columns(path, meanwhile=fail)
    assert forks  # and the fixture checks it was reaped


def test_no_fork_while_another_thread_runs(tmp_path: Path, forks: list[int]) -> None:
    """A forked child would inherit the locks other threads hold."""
    path = write(tmp_path / "scn.jsonl", copeca(ours()[:-1], True))
    stop = threading.Event()
    other = threading.Thread(target=stop.wait)
    other.start()
    try:
        read = read_columns(path)
    finally:
        stop.set()
        other.join()
    assert not forks
    assert read is not None and read[0] == alone(path)[0]  # type: ignore[index]


def test_the_split_falls_just_after_a_newline(tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_columns, "PARALLEL_BYTES", 1)
    path = write(tmp_path / "scn.jsonl", copeca(ours()[:-1], True))
    data = path.read_bytes()
    with path.open("rb") as handle:
        at = _columns._split(handle, len(data))
    assert at is not None and 0 < at < len(data)
    assert data[at - 1:at] == b"\n" and b"\n" not in data[int(len(data) * _columns._SHARE):at - 1]
    monkeypatch.setattr(_columns, "PARALLEL_BYTES", len(data) + 1)
    with path.open("rb") as handle:
        assert _columns._split(handle, len(data)) is None  # small: one process


def test_analyze_forks_before_any_thread_starts(tmp_path: Path) -> None:
    """In a fresh `analyze` process the read starts before numpy (whose BLAS starts threads)
    is imported, so a large file really is read by two processes, and the report is the
    one a single process gives."""
    path = write(tmp_path / "scn.jsonl", copeca(ours()[:-1], True))
    runs = [_analyze_counting_forks("read", limit, path, "md") for limit in (1, 1 << 62)]
    assert [forks for _, forks in runs] == [1, 0]
    assert runs[0][0] == runs[1][0] and "codesearch vs baseline" in runs[0][0]


@pytest.mark.parametrize("fails", ["pipe", "fork"])
def test_no_process_to_fork_reads_the_file_alone(tmp_path: Path, forks: list[int],
                                                 monkeypatch: pytest.MonkeyPatch,
                                                 fails: str) -> None:
    """Out of processes or file descriptors: the read goes on in this process."""
    path = write(tmp_path / "scn.jsonl", copeca(ours()[:-1], True))

    def refuse() -> Any:
        raise OSError(11, "Resource temporarily unavailable")

    monkeypatch.setattr(os, fails, refuse)
    read = read_columns(path)
    assert read is not None and read[0] == alone(path)[0]  # type: ignore[index]
    assert not forks


def test_a_helper_reaped_by_someone_else_still_counts(tmp_path: Path, forks: list[int],
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """A program with its own SIGCHLD handler may reap the helper first: its answer, whole
    in the pipe, is still read."""
    path = write(tmp_path / "scn.jsonl", copeca(ours()[:-1], True))
    real = os.waitpid

    def reaped_elsewhere(pid: int, flags: int) -> tuple[int, int]:
        real(pid, flags)
        raise ChildProcessError(10, "No child processes")

    monkeypatch.setattr(os, "waitpid", reaped_elsewhere)
    read = read_columns(path)
    monkeypatch.setattr(os, "waitpid", real)
    assert forks and read is not None and read[0] == alone(path)[0]  # type: ignore[index]


def test_a_byte_order_mark_is_named(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Windows tools save UTF-8 with a BOM; the error says so rather than 'not JSON'."""
    path = tmp_path / "results.jsonl"
    path.write_bytes(b"\xef\xbb\xbf" + "".join(json.dumps(r) + "\n" for r in ours()).encode())
    assert main(["analyze", str(path)]) == 2
    err = capsys.readouterr().err
    assert f"{path}:1" in err and "byte-order mark" in err and "Traceback" not in err


# ---------------------------------------------------------------- the report beside
# Above FORK_POWER_DRAWS the power simulations and the breakdown lines run in a forked
# child while this process computes the rest; the report must be the one computed here.

_COUNTING_FORKS = """
import os, sys
mode, limit, path, fmt = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
from copeca_action._cli import analyze
from copeca_action.records import _columns
if mode == "read":  # files from `limit` bytes are read by two processes
    _columns.PARALLEL_BYTES = limit
else:  # the report's child from `limit` simulated runs (or, "lines", records × resamples)
    load = analyze._load
    def patched(fmt):  # numpy is imported only now, as in a plain `analyze`
        load(fmt)
        from copeca_action.report import _build
        if mode == "lines":
            _build.FORK_LINE_DRAWS = limit
        else:  # the lines by capability, language and model beside it too
            _build.FORK_POWER_DRAWS = _build.BESIDE_BREAKDOWN_DRAWS = limit
    analyze._load = patched
forked = []
real = os.fork
def fork():
    pid = real()
    if pid:
        forked.append(pid)
    return pid
os.fork = fork
from copeca_action.cli import main
code = main(["analyze", path, "--format", fmt, "--resamples", "300"])
print("forks", len(forked), file=sys.stderr)
sys.exit(code)
"""


def _analyze_counting_forks(mode: str, limit: int, path: Path, fmt: str,
                            env: dict[str, str] | None = None) -> tuple[str, int]:
    """A real `analyze` in a fresh process: its output and how many children it forked.
    The BLAS thread counts of this environment are left out (the user's choice: `env`)."""
    import subprocess
    import sys

    run = subprocess.run([sys.executable, "-c", _COUNTING_FORKS, mode, str(limit), str(path),
                          fmt], capture_output=True, text=True, check=True, timeout=120,
                         env={k: v for k, v in os.environ.items()
                              if k not in ("OPENBLAS_NUM_THREADS", "GOTO_NUM_THREADS",
                                           "OMP_NUM_THREADS")} | (env or {}))
    return run.stdout, int(run.stderr.split()[-1])


def test_analyze_computes_power_beside_the_report_and_the_report_is_the_same(
        tmp_path: Path) -> None:
    """A real `analyze`: one BLAS thread (so a child can be forked once numpy is loaded),
    one fork for the power child, and the very report a single process computes."""
    path = write(tmp_path / "results.jsonl", ours())
    beside, forks = _analyze_counting_forks("beside", 1, path, "json")
    alone_, none = _analyze_counting_forks("beside", 1 << 62, path, "json")
    assert (forks, none) == (1, 0)
    assert beside == alone_
    report = json.loads(beside)
    assert all(c["power"] is not None and c["capabilities"] for c in report["comparisons"])


@pytest.mark.parametrize("fmt", ["md", "json"])
def test_the_task_lines_take_the_child_when_the_power_does_not(tmp_path: Path,
                                                               fmt: str) -> None:
    """md simulates no power, and json's is small here (below FORK_POWER_DRAWS): the
    per-task lines are computed in the child instead (one fork), and the report is the one a
    single process computes. With the power in the child (above), the lines stay here."""
    path = write(tmp_path / "results.jsonl", ours())
    beside, forks = _analyze_counting_forks("lines", 1, path, fmt)
    alone_, none = _analyze_counting_forks("lines", 1 << 62, path, fmt)
    assert (forks, none) == (1, 0)
    assert beside == alone_
    if fmt == "json":
        assert all(c["tasks"] for c in json.loads(beside)["comparisons"])
    else:
        assert "| task |" in beside


def test_a_blas_thread_count_the_user_chose_is_kept(tmp_path: Path) -> None:
    """OPENBLAS_NUM_THREADS (or OMP_NUM_THREADS) set by the user: analyze leaves it, so
    BLAS's threads run and nothing is forked after numpy loads; the report is still whole."""
    path = write(tmp_path / "results.jsonl", ours())
    for env in ({"OPENBLAS_NUM_THREADS": "2"}, {"OMP_NUM_THREADS": "2"}):
        out, forks = _analyze_counting_forks("beside", 1, path, "json", env)
        assert forks == 0
        assert all(c["power"] is not None for c in json.loads(out)["comparisons"])


def _rss_kib() -> int:
    status = Path("/proc/self/status").read_text()
    return next(int(line.split()[1]) for line in status.splitlines()
                if line.startswith("VmRSS:"))


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="needs Linux's /proc")
def test_freed_heap_memory_is_given_back_before_the_report() -> None:
    """Freed blocks in the middle of the C heap stay resident until trimmed: 64 MB of 2 KB
    blocks with one kept in every 64 (so the heap cannot just shrink from its top)."""
    from copeca_action._cli.analyze import _give_back_freed_memory

    blocks = [bytes(2048) for _ in range(32_768)]
    kept = blocks[::64]
    del blocks
    before = _rss_kib()
    _give_back_freed_memory()
    assert before - _rss_kib() > 32_000, "less than half of the freed 64 MB given back"
    assert len(kept) == 512


@pytest.mark.parametrize("fmt", ["ours", "copeca"])
def test_turns_tool_calls_and_duration_not_reported_are_na_on_both_paths(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fmt: str) -> None:
    """Records without `turns` (copeca's without `num_turns`, older or hand-written ones)
    read as 0 and the report said "0.0 turns per run"; now not reported is n/a, on both
    readers alike, and an arm whose runs all report them keeps its numbers."""
    rows = [{"run_id": f"{arm}-{t}-{r}", "task_id": f"t{t}", "arm": arm, "model": "m",
             "repetition": r, "outcome": "ok", "correct": (t + r) % 3 > 0,
             "cost_usd": 0.5 + 0.01 * t,
             **({"turns": 4 + r, "tool_calls": 2, "duration_s": 3.0} if arm == "baseline"
                else {})} for t in range(8) for arm in ("codesearch", "baseline")
            for r in range(2)]
    rows[0].update(turns=0, tool_calls=0, duration_s=0.0)  # a tool run that reported 0
    if fmt == "copeca":
        rows = [{"task": r["task_id"], "mode": r["arm"], "model": r["model"],
                 "repetition": r["repetition"], "correct": r["correct"],
                 "total_cost_usd": r["cost_usd"], "cost_source": "modeled",
                 "num_turns": r.get("turns"), "num_tool_calls": r.get("tool_calls"),
                 **({"duration_ms": 1000 * r["duration_s"]} if "duration_s" in r else {})}
                for r in rows]
    path = write(tmp_path / "results.jsonl", rows)
    cols = read_columns(path)
    assert cols is not None  # the fast path reads it
    assert cols[0].turns[:2] == [0, None] and cols[0].duration_s[:2] == [0.0, None]
    md, js = same_reports(path, monkeypatch)
    report = json.loads(js)
    arms = {a["arm"]: a for a in report["arms"]}
    assert arms["codesearch"]["mean_turns"] is None
    assert arms["codesearch"]["mean_tool_calls"] is None
    assert arms["codesearch"]["duration_s"] is None
    assert arms["baseline"]["mean_turns"] == 4.5 and arms["baseline"]["duration_s"] == 48.0
    overall = report["comparisons"][0]["overall"]
    assert overall["mean_turns_tool"] is None and overall["mean_turns_base"] == 4.5
    assert "| codesearch |" in md and "0.0 |" not in md.split("#### Headline population")[1]
