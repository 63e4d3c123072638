"""Per-repository figures of a finished (or partial) scenario run, from its results.jsonl:
runs, outcomes, correct answers, agent seconds, grading seconds and build-cache use.

    .venv/bin/python bench/smoke_figures.py OUT_DIR

Wall time is not in results.jsonl (runs overlap, and grading waits in a queue): time the
`copeca-action run` command itself.
"""

from __future__ import annotations

import argparse
from collections import defaultdict
from pathlib import Path
from typing import Any

from copeca_action.records import latest_by_run_id, read_records


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("out", type=Path)
    args = ap.parse_args()
    records = list(latest_by_run_id(read_records(args.out / "results.jsonl")).values())
    by_repo: dict[str, list[Any]] = defaultdict(list)
    for r in records:
        by_repo[r.task_id.split("/")[0]].append(r)
    print(f"{'repo':<9} {'runs':>4} {'ok':>4} {'other':>5} {'correct':>7} {'agent s':>8} "
          f"{'grade s':>8} {'edit':>4} {'warm':>4} {'wait s':>7} {'copy s':>7}")
    for repo in sorted(by_repo):
        rs = by_repo[repo]
        grade_s = wait_s = copy_s = 0.0
        edits = warm = 0
        for r in rs:
            g = r.grading or {}
            took = float(g.get("duration_s") or 0.0)
            grade_s += took
            if g.get("kind") in ("test", "patch"):
                edits += 1
            bc = g.get("build_cache")
            if bc:
                warm += 1 if bc.get("warm") else 0
                wait_s += float(bc.get("wait_s") or 0.0)
                copy_s += float(bc.get("copy_s") or 0.0)
        ok = sum(1 for r in rs if r.outcome == "ok")
        print(f"{repo:<9} {len(rs):>4} {ok:>4} {len(rs) - ok:>5} "
              f"{sum(1 for r in rs if r.correct):>7} {sum(r.duration_s or 0 for r in rs):>8.0f} "
              f"{grade_s:>8.0f} {edits:>4} {warm:>4} {wait_s:>7.0f} {copy_s:>7.1f}")
    outcomes: dict[str, int] = defaultdict(int)
    for r in records:
        outcomes[r.outcome] += 1
    print(f"total: {len(records)} runs; " + ", ".join(f"{k} {v}" for k, v in
                                                       sorted(outcomes.items())))
    print(f"correct: {sum(1 for r in records if r.correct)}")
    wrong = [r for r in records if r.outcome == "ok" and not r.correct]
    for r in sorted(wrong, key=lambda r: r.run_id):
        print(f"  wrong: {r.task_id} {r.arm} {r.runner}")


if __name__ == "__main__":
    main()
