"""`RunRecord.design` as both results readers give it: the design of the last record that
names one (a resume appends after what came before), the same from the fast columnar reader
and the validating one; a malformed one named by file, line and field."""

from __future__ import annotations

from pathlib import Path

import pytest

from copeca_action.cli import main
from copeca_action.errors import ConfigError
from copeca_action.records import Design, RunRecord, read_columns, read_rows, write_records
from copeca_action.records._design import DEFAULT_THRESHOLDS, DesignKey
from copeca_action.report import table_from_columns, table_from_rows

A = Design(thresholds="0123456789abcdef", adaptive="fedcba9876543210")
B = Design(thresholds=DEFAULT_THRESHOLDS)


def _record(i: int, design: Design | None) -> RunRecord:
    return RunRecord(run_id=f"r{i}", scenario="s", task_id=f"t{i % 3}", task_hash="h",
                     arm="baseline" if i % 2 else "tool", model="m", runner="claude",
                     repetition=i // 6, outcome="ok", correct=True, cost_usd=0.01,
                     cost_source="computed", design=design)


def _tables(path: Path) -> tuple[DesignKey | None, DesignKey | None]:
    read = read_columns(path)
    assert read is not None  # the fast reader took it
    rows, _ = read_rows(path)
    return table_from_columns(read[0]).design, table_from_rows(rows).design


def test_the_last_record_naming_a_design_gives_it_in_both_readers(tmp_path: Path) -> None:
    path = tmp_path / "results.jsonl"
    write_records(path, [*(_record(i, A) for i in range(4)), _record(4, B), _record(5, None)])
    assert _tables(path) == (DesignKey(DEFAULT_THRESHOLDS, None),) * 2
    write_records(path, [_record(i, None) for i in range(6)])  # older records: none
    assert _tables(path) == (None, None)


def test_a_malformed_design_is_named_by_file_line_and_field(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "results.jsonl"
    write_records(path, [_record(i, A) for i in range(3)])
    lines = path.read_text().splitlines()
    lines[1] = lines[1].replace(A.thresholds, "not-a-digest")
    path.write_text("\n".join(lines) + "\n")
    assert read_columns(path) is None  # not sure: the validating reader decides
    with pytest.raises(ConfigError, match=r"results\.jsonl:2.*design\.thresholds"):
        read_rows(path)
    assert main(["analyze", str(path)]) == 2
    err = capsys.readouterr().err
    assert "results.jsonl:2" in err and "design.thresholds" in err and "Traceback" not in err
