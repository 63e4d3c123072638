"""Gathering a finished output folder into BundleContents: the one call after a run.

Only regular files are taken, never through a symbolic link: a run folder is written by the
harness, but a link planted in it (to ~/.ssh, say) must not smuggle a file into a bundle.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from copeca_action.bundle._model import (
    ATTEMPTS_DIR,
    RECORD,
    RESULTS,
    RUNS_DIR,
    check_member_path,
)
from copeca_action.bundle._write import (
    BundleContents,
    KeptAttempt,
    RenderedReport,
    Source,
    collect_environment,
)
from copeca_action.errors import BundleError
from copeca_action.plan import RunPlan
from copeca_action.records import STORED, RunRecord, latest_by_run_id, read_records

AGENT_STATE_DIRS = frozenset({"config", "home", "tmp", "grade-home"})
"""Top-level folders of a run dir that hold the agent CLI's own state (its fresh config dir,
HOME and TMPDIR) or the grader's HOME (build caches): sessions, caches, settings. They are
not evidence and may hold what no bundle should carry, so they stay out; the transcript,
patch, grade and eval go in."""


def collect_run_files(output_dir: Path, records: list[RunRecord]) -> dict[str, dict[str, Source]]:
    """Run id → relative name → file, for every regular file under each final record's
    `run_dir` (default `runs/<run id>`) but the agent's state folders; the record itself is
    written from the record."""
    root = output_dir.resolve()
    files: dict[str, dict[str, Source]] = {}
    for run_id, record in latest_by_run_id(records).items():
        run_dir = (root / (record.run_dir or f"{RUNS_DIR}/{run_id}")).resolve()
        if not run_dir.is_relative_to(root):
            raise BundleError(f"run {run_id}: run_dir {record.run_dir!r} is outside {root}")
        if not run_dir.is_dir():
            continue
        found = _folder_files(run_dir, f"{RUNS_DIR}/{run_id}")
        if found:
            files[run_id] = found
    return files


def _folder_files(folder_path: Path, member: str) -> dict[str, Source]:
    """Relative name → file, for every regular file under `folder_path` but its record.json
    and the agent's state folders; `member`: the folder's path in the bundle."""
    files: dict[str, Source] = {}
    for folder, dirs, names in os.walk(folder_path, followlinks=False):
        if Path(folder) == folder_path:
            dirs[:] = [d for d in dirs if d not in AGENT_STATE_DIRS]
        dirs.sort()
        for name in sorted(names):
            path = Path(folder) / name
            relative = path.relative_to(folder_path).as_posix()
            if relative == RECORD or not stat.S_ISREG(os.lstat(path).st_mode):
                continue
            why = check_member_path(f"{member}/{relative}")
            if why:
                raise BundleError(f"{path}: cannot enter a bundle: {why}")
            files[relative] = path
    return files


def collect_attempts(output_dir: Path, records: list[RunRecord]) -> dict[str, KeptAttempt]:
    """`<run id>/<name>` → each earlier attempt kept in OUT/attempts/<run id>/<name>/ (see
    engine/_outdir) whose record.json is a superseded line of `records`: that line and the
    folder's files. A folder whose record results.jsonl lacks (an attempt a killed harness
    left unrecorded: `run --resume` records it) or that has none is not taken; its spend is
    not published either. A `.<name>.partial` folder (a put-aside a kill cut short) goes in
    as `<name>.partial`."""
    root = (output_dir / ATTEMPTS_DIR).resolve()
    if not root.is_dir() or root.is_symlink():
        return {}
    final = {id(r) for r in latest_by_run_id(records).values()}
    earlier: dict[tuple[str, int, object], RunRecord] = {
        (r.run_id, r.attempt, r.started_at): r for r in records if id(r) not in final}
    kept: dict[str, KeptAttempt] = {}
    taken: set[int] = set()
    for run_dir in sorted(root.iterdir()):
        if run_dir.is_symlink() or not run_dir.is_dir():
            continue  # a finished folder before a partial one of the same attempt:
        for folder in sorted(run_dir.iterdir(), key=lambda f: (f.name.startswith("."), f.name)):
            if folder.is_symlink() or not folder.is_dir():
                continue
            record = _record_in(folder / RECORD)
            logged = None if record is None else earlier.get(
                (record.run_id, record.attempt, record.started_at))
            if logged is None or logged.run_id != run_dir.name or id(logged) in taken:
                continue
            taken.add(id(logged))
            key = f"{run_dir.name}/{folder.name.lstrip('.')}"
            kept[key] = KeptAttempt(record=logged, files=_folder_files(
                folder, f"{ATTEMPTS_DIR}/{key}"))
    return kept


def _record_in(path: Path) -> RunRecord | None:
    if path.is_symlink() or not path.is_file():
        return None
    try:
        return RunRecord.model_validate_json(path.read_bytes(), context=STORED)
    except (ValueError, OSError):
        return None


def contents_from_output(output_dir: Path, scenario_path: Path, plan: RunPlan,
                         thresholds: Mapping[str, Any], report: RenderedReport | None = None,
                         image_digest: str | None = None) -> BundleContents:
    """BundleContents from `<output_dir>/results.jsonl` and the run folders it names."""
    records = read_records(output_dir / RESULTS)
    return BundleContents(
        scenario_yaml=scenario_path.read_bytes(), plan=plan, records=records,
        environment=collect_environment(records, image_digest), thresholds=thresholds,
        run_files=collect_run_files(output_dir, records), report=report,
        attempts=collect_attempts(output_dir, records))
