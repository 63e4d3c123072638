"""One line of a results file longer than MAX_LINE_BYTES (a damaged or hostile file) is
refused naming the file and the line, by every reader, without reading it whole: a 1 GiB
line took 7 GiB of memory and 40 s before it was named a wrong record."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from copeca_action.errors import ConfigError
from copeca_action.records import read_columns, read_records, read_rows
from copeca_action.records._lines import MAX_LINE_BYTES

GOOD = {"run_id": "r0", "scenario": "s", "task_id": "t", "task_hash": "h", "arm": "a",
        "model": "m", "runner": "claude", "repetition": 0, "outcome": "ok", "correct": True,
        "cost_usd": 0.25}
ROOT = Path(__file__).resolve().parents[3]


def results(path: Path, long_line: int, newline: bool = True) -> Path:
    """A good record, then line 2: `long_line` bytes with its newline (one JSON object), then
    a good record; without `newline`, line 2 is the last, unterminated, one byte shorter."""
    with path.open("wb") as handle:
        handle.write(json.dumps(GOOD).encode() + b"\n")
        handle.write(b'{"run_id": "' + b"a" * (long_line - 15) + b'"}')
        if newline:
            handle.write(b"\n" + json.dumps({**GOOD, "run_id": "r2"}).encode() + b"\n")
    return path


@pytest.mark.parametrize("newline", [True, False], ids=["inside", "last-unterminated"])
def test_every_reader_names_the_line_beyond_the_bound(tmp_path: Path, newline: bool) -> None:
    path = results(tmp_path / "results.jsonl", MAX_LINE_BYTES + 2, newline)
    for read in (read_records, read_rows):
        with pytest.raises(ConfigError) as caught:
            read(path)
        assert str(caught.value).startswith(f"{path}:2: a line longer than 64 MiB")
    assert read_columns(path) is None  # the fast reader stops and leaves it to read_rows


def test_a_line_at_the_bound_is_read(tmp_path: Path) -> None:
    """Exactly MAX_LINE_BYTES with its newline: no refusal (the record is then judged as a
    record: here its missing fields)."""
    path = results(tmp_path / "results.jsonl", MAX_LINE_BYTES)
    with pytest.raises(ConfigError) as caught:
        read_rows(path)
    assert f"{path}:2" in str(caught.value) and "longer than" not in str(caught.value)


def test_analyze_refuses_a_huge_line_in_bounded_memory(tmp_path: Path) -> None:
    """Through the real CLI: 300 MiB on one line, refused with the line named, the process
    never holding the line (it peaked at 7× a line's size before)."""
    path = results(tmp_path / "results.jsonl", 300 << 20)
    probe = ("import resource, subprocess, sys\n"
             "p = subprocess.run(sys.argv[1:], capture_output=True, text=True)\n"
             "print(p.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n"
             "print(p.stderr + p.stdout)\n")
    done = subprocess.run([sys.executable, "-c", probe, sys.executable, "-m",
                           "copeca_action.cli", "analyze", str(path), "--format", "json"],
                          capture_output=True, text=True, timeout=120, cwd=ROOT, check=True)
    first, _, output = done.stdout.partition("\n")
    code, peak_kib = map(int, first.split())
    assert code == 2 and "Traceback" not in output
    assert f"{path}:2: a line longer than 64 MiB" in output
    assert peak_kib < 400 * 1024, f"peak {peak_kib >> 10} MiB"
