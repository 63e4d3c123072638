"""results.jsonl: append one record per line and fsync, so nothing is lost on a crash."""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from pathlib import Path

from pydantic import ValidationError

from copeca_action.errors import ConfigError, Problem
from copeca_action.records._record import RunRecord


def append_record(path: Path, record: RunRecord) -> None:
    """Append and fsync one record; a partial last line from a crash is tolerated on read."""
    line = record.model_dump_json() + "\n"
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, line.encode())
        os.fsync(fd)
    finally:
        os.close(fd)


def append_records(path: Path, records: Iterable[RunRecord]) -> None:
    """Append many records with one write and one fsync (a batch copied in at once)."""
    data = "".join(r.model_dump_json() + "\n" for r in records).encode()
    if not data:
        return
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, data)
        os.fsync(fd)
    finally:
        os.close(fd)


def write_records(path: Path, records: Iterable[RunRecord]) -> None:
    with path.open("w") as handle:
        for record in records:
            handle.write(record.model_dump_json() + "\n")


def iter_records(path: Path, strict: bool = True) -> Iterator[RunRecord]:
    """Records in file order. A truncated final line (a crash mid-write) is skipped; any other
    bad line raises with its line number unless `strict` is False."""
    with path.open("rb") as handle:
        lines = handle.read().split(b"\n")
    last = len(lines) - 1
    for number, raw in enumerate(lines, 1):
        if not raw.strip():
            continue
        try:
            yield RunRecord.model_validate_json(raw)
        except ValidationError as exc:
            if number - 1 == last:  # unterminated last line: an interrupted append
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
