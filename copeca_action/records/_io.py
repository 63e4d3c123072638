"""results.jsonl: append one record per line and fsync, so nothing is lost on a crash."""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from pathlib import Path

from pydantic import ValidationError

from copeca_action._util.scrub import scrub_bytes
from copeca_action.errors import ConfigError, Problem
from copeca_action.records._kinds import STORED
from copeca_action.records._lines import bounded_lines
from copeca_action.records._record import RunRecord


def append_record(path: Path, record: RunRecord) -> None:
    """Append and fsync one record; a partial last line from a crash is tolerated on read."""
    line = scrub_bytes(record.model_dump_json().encode()) + b"\n"
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        _write_all(fd, line)
        os.fsync(fd)
    finally:
        os.close(fd)


def append_records(path: Path, records: Iterable[RunRecord]) -> None:
    """Append many records with one write and one fsync (a batch copied in at once)."""
    data = b"".join(scrub_bytes(r.model_dump_json().encode()) + b"\n" for r in records)
    if not data:
        return
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        _write_all(fd, data)
        os.fsync(fd)
    finally:
        os.close(fd)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def write_records(path: Path, records: Iterable[RunRecord]) -> None:
    with path.open("wb") as handle:
        for record in records:
            handle.write(scrub_bytes(record.model_dump_json().encode()) + b"\n")


def repair_torn_tail(path: Path) -> int:
    """Cut an unterminated last line (an append a crash or a full disk interrupted) off the
    file, so the next append starts on a line of its own; the bytes removed (0: intact)."""
    try:
        fd = os.open(path, os.O_RDWR)
    except FileNotFoundError:
        return 0
    try:
        size = os.fstat(fd).st_size
        if size == 0:
            return 0
        os.lseek(fd, max(0, size - 1), os.SEEK_SET)
        if os.read(fd, 1) == b"\n":
            return 0
        keep, step = size, 1 << 16
        while keep > 0:  # find the last newline, reading backwards
            start = max(0, keep - step)
            os.lseek(fd, start, os.SEEK_SET)
            block = os.read(fd, keep - start)
            at = block.rfind(b"\n")
            if at >= 0:
                keep = start + at + 1
                break
            keep = start
        os.ftruncate(fd, keep)
        os.fsync(fd)
        return size - keep
    finally:
        os.close(fd)


def iter_records(path: Path, strict: bool = True) -> Iterator[RunRecord]:
    """Records in file order. A truncated final line (a crash mid-write) is skipped; any other
    bad line raises with its line number unless `strict` is False."""
    with path.open("rb") as handle:
        for number, raw in bounded_lines(handle, path):
            if not raw.strip():
                continue
            try:
                yield RunRecord.model_validate_json(raw, context=STORED)
            except ValidationError as exc:
                if not raw.endswith(b"\n"):  # unterminated last line: an interrupted append
                    continue
                if strict:
                    first = exc.errors()[0]
                    field = ".".join(str(p) for p in first["loc"]) or None
                    raise ConfigError(Problem(str(path), first["msg"], number, field)) from exc


def read_records(path: Path, strict: bool = True) -> list[RunRecord]:
    return list(iter_records(path, strict))


def latest_by_run_id(records: Iterable[RunRecord]) -> dict[str, RunRecord]:
    """The last record of each run id: a retried infra error is superseded by its retry."""
    out: dict[str, RunRecord] = {}
    for record in records:
        out[record.run_id] = record
    return out
