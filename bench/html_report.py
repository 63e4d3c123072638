"""Size and render time of report.html for a demo-like scenario and larger ones.

    .venv/bin/python bench/html_report.py

Records are simulated (2 arms, start times 45 s apart, a coverage curve per arm); the
report is built once per size, then rendered; figures are printed, never asserted.
"""

from __future__ import annotations

import datetime as dt
import gzip
import time

import numpy as np

from copeca_action.records import RunRecord
from copeca_action.render import CoverageCurve, Verification, render_html, run_points
from copeca_action.report import Settings, build_report
from copeca_action.report._simulate import Population, make_rows

SIZES = [(6, 2, 0, "demo scenario shape: 6 tasks × 2 arms × 2 reps"),
         (8, 2, 0, "demo-like: 8 tasks × 2 arms × 2 reps"),
         (8, 2, 2, "demo-like + 2 control tasks"),
         (50, 3, 5, "50 tasks × 2 arms × 3 reps + 5 control"),
         (500, 2, 20, "500 tasks × 2 arms × 2 reps + 20 control")]
T0 = dt.datetime(2026, 11, 21, 9, tzinfo=dt.UTC)


def main() -> None:
    print(f"{'scenario':45} {'runs':>6} {'bytes':>9} {'gzip':>8} {'render ms':>10}")
    for tasks, reps, control, label in SIZES:
        rows = make_rows(Population(cost_ratio=0.8), tasks, reps, np.random.default_rng(0),
                         control_tasks=control)
        recs = [RunRecord(**{**r, "started_at": T0 + dt.timedelta(seconds=45 * i)})
                for i, r in enumerate(rows)]
        report = build_report(recs, Settings(resamples=2000))
        runs = run_points(recs)
        cov = [CoverageCurve.from_runs(a, [[0.2, 0.5, 0.8]] * 4) for a in ("baseline",
                                                                           "codesearch")]
        start = time.perf_counter()
        html = render_html(report, runs=runs, coverage=cov,
                           verification=Verification(bundle_sha256="0" * 64, keyid="1" * 64))
        ms = (time.perf_counter() - start) * 1000
        data = html.encode()
        print(f"{label:45} {len(recs):6d} {len(data):9,d} {len(gzip.compress(data)):8,d} "
              f"{ms:10.1f}")


if __name__ == "__main__":
    main()
