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

from copeca_action.bundle._model import RECORD, RESULTS, RUNS_DIR, check_member_path
from copeca_action.bundle._write import BundleContents, RenderedReport, Source, collect_environment
from copeca_action.errors import BundleError
from copeca_action.plan import RunPlan
from copeca_action.records import RunRecord, latest_by_run_id, read_records

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
        for folder, dirs, names in os.walk(run_dir, followlinks=False):
            if Path(folder) == run_dir:
                dirs[:] = [d for d in dirs if d not in AGENT_STATE_DIRS]
            dirs.sort()
            for name in sorted(names):
                path = Path(folder) / name
                relative = path.relative_to(run_dir).as_posix()
                if relative == RECORD or not stat.S_ISREG(os.lstat(path).st_mode):
                    continue
                why = check_member_path(f"{RUNS_DIR}/{run_id}/{relative}")
                if why:
                    raise BundleError(f"{path}: cannot enter a bundle: {why}")
                files.setdefault(run_id, {})[relative] = path
    return files


def contents_from_output(output_dir: Path, scenario_path: Path, plan: RunPlan,
                         thresholds: Mapping[str, Any], report: RenderedReport | None = None,
                         image_digest: str | None = None) -> BundleContents:
    """BundleContents from `<output_dir>/results.jsonl` and the run folders it names."""
    records = read_records(output_dir / RESULTS)
    return BundleContents(
        scenario_yaml=scenario_path.read_bytes(), plan=plan, records=records,
        environment=collect_environment(records, image_digest), thresholds=thresholds,
        run_files=collect_run_files(output_dir, records), report=report)
