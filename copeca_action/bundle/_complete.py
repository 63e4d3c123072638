"""Batch completeness from the records' content, not from file names.

A run's identity is recomputed from what its record says it ran (task, task hash, arm, model,
repetition), so a record copied under another run's name, a run directory renamed, or a run
made against a changed task shows up as what it really is.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from copeca_action._util.text import shown
from copeca_action.plan import PlannedRun, run_id_for
from copeca_action.records import RunRecord
from copeca_action.records._kinds import NOT_REACHED

SHOW = 1000
"""Names listed per problem class before '... and N more' (a cap only for pathological
bundles: every run of a real batch is named)."""


def content_id(record: RunRecord) -> str:
    return run_id_for(record.task_id, record.task_hash, record.arm, record.model,
                      record.repetition)


def describe(record: RunRecord | PlannedRun) -> str:
    return f"{record.task_id} / {record.arm} / {record.model} / rep {record.repetition}"


@dataclass
class Completeness:
    """What the records cover against what the plan expects; empty lists mean complete."""

    expected: int
    missing: list[str] = field(default_factory=list)
    duplicated: list[str] = field(default_factory=list)
    unexpected: list[str] = field(default_factory=list)
    mislabelled: list[str] = field(default_factory=list)
    """Records whose name disagrees with their content (renamed duplicates, moved dirs)."""

    @property
    def ok(self) -> bool:
        return not (self.missing or self.duplicated or self.unexpected or self.mislabelled)

    def message(self) -> str:
        lines = []
        for title, items in (("missing", self.missing), ("duplicated", self.duplicated),
                             ("unexpected", self.unexpected),
                             ("mislabelled", self.mislabelled)):
            if items:
                more = f"\n  ... and {len(items) - SHOW} more" if len(items) > SHOW else ""
                lines.append(f"{len(items)} {title} run(s):\n  "  # one line each, whatever
                             + "\n  ".join(shown(i, None) for i in items[:SHOW]) + more)
        return "\n".join(lines)


def _final_records(log: Sequence[RunRecord], report: Completeness) -> dict[str, RunRecord]:
    """The last record of each run; a run logged twice is a duplicate unless every earlier
    line is a superseded attempt that never finished: an infra error (retried), or a
    budget stop (run by a resume with a larger budget), as the report reads them."""
    by_id: dict[str, list[RunRecord]] = defaultdict(list)
    for record in log:
        cid = content_id(record)
        if cid != record.run_id:
            report.mislabelled.append(
                f"results.jsonl: a record named {record.run_id} holds run {cid} "
                f"({describe(record)}): a renamed duplicate or an edited record")
        by_id[cid].append(record)
    final = {}
    for cid, records in by_id.items():
        earlier = records[:-1]
        if any(r.outcome not in NOT_REACHED for r in earlier):
            report.duplicated.append(f"{cid} ({describe(records[0])}): {len(records)} "
                                     "records in results.jsonl")
        final[cid] = records[-1]
    return final


def check_completeness(planned: Sequence[PlannedRun], log: Sequence[RunRecord],
                       run_dirs: Mapping[str, RunRecord]) -> Completeness:
    """Compare the plan with results.jsonl and each `runs/<dir>/record.json`."""
    report = Completeness(expected=len(planned))
    final = _final_records(log, report)
    by_content: dict[str, list[str]] = defaultdict(list)
    for directory, record in sorted(run_dirs.items()):
        cid = content_id(record)
        by_content[cid].append(directory)
        if directory != cid or record.run_id != cid:
            report.mislabelled.append(
                f"runs/{directory}: its record is run {cid} ({describe(record)})"
                + (f", named {record.run_id}" if record.run_id != cid else "")
                + ": a renamed duplicate or a moved run")
        elif cid in final and final[cid] != record:
            report.mislabelled.append(f"runs/{directory}/record.json differs from the "
                                      "run's last line in results.jsonl")
    for cid, dirs in sorted(by_content.items()):
        if len(dirs) > 1:
            report.duplicated.append(f"{cid} ({describe(run_dirs[dirs[0]])}): in "
                                     + ", ".join(f"runs/{d}" for d in dirs))
    for cid in sorted(set(final) - set(by_content)):
        report.missing.append(f"{cid} ({describe(final[cid])}): in results.jsonl but "
                              f"runs/{cid}/ is absent")
    plan_ids = {p.run_id: p for p in planned}
    cells = {(p.task_id, p.arm, p.model, p.repetition): p for p in planned}
    for run in planned:
        if run.run_id not in final:
            report.missing.append(f"{run.run_id} ({describe(run)})")
    for cid in sorted(set(final) - set(plan_ids)):
        record = final[cid]
        twin = cells.get((record.task_id, record.arm, record.model, record.repetition))
        why = (f": task changed since the run (hash {record.task_hash}, plan has "
               f"{twin.task_hash})" if twin and twin.task_hash != record.task_hash
               else ": not in the plan")
        report.unexpected.append(f"{cid} ({describe(record)}){why}")
    return report
