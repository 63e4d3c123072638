"""A report's numbers do not follow the BLAS thread count: the statistics run on one thread
(`_util.blas`), so a bundle's report is the one `analyze` recomputes anywhere."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

_PROGRAM = """
import json, sys
sys.path.insert(0, {factory!r})
from threadpoolctl import threadpool_info
from report_factory import make_simulated
import copeca_action.report._build as build
from copeca_action.report import Settings

def blas():
    return max(i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas")

inside = []
headline = build._headline
def spy(comparisons):
    inside.append(blas())
    return headline(comparisons)
build._headline = spy
records = make_simulated(0.8, tasks=500, reps=10, seed=3)
before = blas()
report = build.build_report(records, Settings(power_experiments=50))
print(json.dumps({{"before": before, "inside": inside, "after": blas(),
                  "report": json.loads(report.model_dump_json())}}))
"""


def _report(threads: str) -> dict[str, object]:
    factory = str(Path(__file__).parent)
    env = {k: v for k, v in os.environ.items() if not k.endswith("_NUM_THREADS")}
    env["OPENBLAS_NUM_THREADS"] = threads
    done = subprocess.run([sys.executable, "-c", _PROGRAM.format(factory=factory)], env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    out: dict[str, object] = json.loads(done.stdout)
    return out


@pytest.mark.skipif(sys.platform != "linux", reason="numpy's OpenBLAS as on the CI machine")
def test_the_statistics_run_on_one_thread_and_give_the_same_numbers() -> None:
    """At this size (500 tasks, 10 repetitions, 10,000 resamples) two threads unlimited
    changed bounds in their last bits (2026-11-27)."""
    two, one = _report("2"), _report("1")
    assert two["before"] == two["after"] == 2  # the caller's count, put back after
    assert two["inside"] == [1]
    assert two["report"] == one["report"]
