"""Hand-computed metrics at every granularity, the trajectory metrics, the conventions and the
macro / micro aggregation."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from copeca_action.retrieval import (
    Repo,
    RunRetrieval,
    Score,
    Viewed,
    edit_lines,
    line_set,
    macro,
    micro,
    ratios,
    retrieval_arrays,
    run_metrics,
    summarize_arm,
)

MakeRepo = Callable[[dict[str, str]], Path]

# m.py bytes: line 1 [0,9) line 2 [9,22) line 3 [22,23) line 4 [23,32) line 5 [32,45);
# symbols a = [0,21), b = [23,44). n.py: 6 bytes, no symbols. o.py: c = [0,17), line 1 [0,9).
FILES = {"m.py": "def a():\n    return 1\n\ndef b():\n    return 2\n",
         "n.py": "x = 1\n",
         "o.py": "def c():\n    pass\n"}
GOLD = [("m.py", (4, 5)), ("o.py", (1, 1))]
"""files {m, o}; symbols {b, c}; bytes 22 + 9 = 31."""

STEPS = [Viewed(step=0, file="n.py", whole=True),           # n: 6 bytes
         Viewed(step=1, file="m.py", lines=(1, 4)),         # m [0,32): symbols a, b
         Viewed(step=2, file="o.py"),                       # name only
         Viewed(step=3, file="m.py", lines=(4, 5))]         # m [23,45): symbol b


@pytest.fixture
def repo(make_repo: MakeRepo) -> Repo:
    return Repo(make_repo(FILES))


def test_byte_layout_is_as_documented(repo: Repo) -> None:
    m = repo.file("m.py")
    assert m is not None
    assert m.lines_to_bytes(4, 5) == (23, 45)
    assert m.lines_to_bytes(1, 4) == (0, 32)
    assert [(s.name, s.start, s.end) for s in m.symbols()] == [("a", 0, 21), ("b", 23, 44)]


def approx(score: Score | None, inter: int, gold: int, pred: int, cov: float, prec: float,
           f1: float) -> None:
    assert score is not None
    assert (score.intersection, score.gold, score.pred) == (inter, gold, pred)
    assert score.coverage == pytest.approx(cov)
    assert score.precision == pytest.approx(prec)
    assert score.f1 == pytest.approx(f1)


def test_final_scores_every_granularity(repo: Repo) -> None:
    run = run_metrics(repo, STEPS, GOLD)
    assert run.steps == 4
    approx(run.file, 2, 2, 3, 1.0, 2 / 3, 0.8)
    approx(run.symbol, 1, 2, 2, 0.5, 0.5, 0.5)
    approx(run.span, 22, 31, 51, 22 / 31, 22 / 51, 44 / 82)
    assert run.editloc is None  # no gold edit lines


def test_trajectory_every_granularity(repo: Repo) -> None:
    run = run_metrics(repo, STEPS, GOLD)
    assert run.trajectory_file is not None
    assert run.trajectory_file.coverage_by_step == pytest.approx([0, 0.5, 1, 1])
    assert run.trajectory_file.auc == pytest.approx(0.625)
    assert run.trajectory_file.redundancy == pytest.approx(1 - 3 / 4)
    assert run.trajectory_symbol is not None
    assert run.trajectory_symbol.coverage_by_step == pytest.approx([0, 0.5, 0.5, 0.5])
    assert run.trajectory_symbol.auc == pytest.approx(0.375)
    assert run.trajectory_symbol.redundancy == pytest.approx(1 - 2 / 3)
    assert run.trajectory_span is not None
    assert run.trajectory_span.coverage_by_step == pytest.approx([0, 9 / 31, 9 / 31, 22 / 31])
    assert run.trajectory_span.auc == pytest.approx(10 / 31)
    assert (run.trajectory_span.viewed_union, run.trajectory_span.viewed_total) == (51, 60)
    assert run.trajectory_span.redundancy == pytest.approx(0.15)


def test_step_order_matters_for_auc_not_for_final(repo: Repo) -> None:
    reordered = [v.model_copy(update={"step": 3 - v.step}) for v in STEPS]
    early = run_metrics(repo, reordered, GOLD)
    late = run_metrics(repo, STEPS, GOLD)
    assert early.file == late.file and early.span == late.span
    assert early.trajectory_file is not None and late.trajectory_file is not None
    assert early.trajectory_file.coverage_by_step == pytest.approx([0.5, 1, 1, 1])
    assert early.trajectory_file.auc > late.trajectory_file.auc


def test_editloc_from_patch(repo: Repo) -> None:
    patch = "\n".join([
        "diff --git a/m.py b/m.py", "--- a/m.py", "+++ b/m.py", "@@ -1,5 +1,6 @@",
        " def a():", "+    # inserted: touches no old line", "     return 1", " ",
        " def b():", "-    return 2", "+    return 3",
        "diff --git a/new.py b/new.py", "new file mode 100644", "--- /dev/null", "+++ b/new.py",
        "@@ -0,0 +1 @@", "+y = 2", ""])
    pred = edit_lines(patch)
    assert pred == {("m.py", 5)}
    run = run_metrics(repo, STEPS, GOLD, gold_edit=line_set([("m.py", (4, 5))]), pred_edit=pred)
    approx(run.editloc, 1, 2, 1, 0.5, 1.0, 2 / 3)


def test_editloc_no_change_is_zero_coverage(repo: Repo) -> None:
    run = run_metrics(repo, [], GOLD, gold_edit={("m.py", 5)}, pred_edit=edit_lines(""))
    approx(run.editloc, 0, 1, 0, 0.0, 1.0, 0.0)


def test_conventions() -> None:
    assert ratios(0, 0, 0) == (1.0, 1.0, 1.0)      # nothing to find, nothing claimed
    assert ratios(0, 3, 0) == (0.0, 1.0, 0.0)      # empty prediction: precision 1, F1 0
    assert ratios(0, 0, 4) == (1.0, 0.0, 0.0)      # empty gold: coverage 1
    assert ratios(0, 3, 4) == (0.0, 0.0, 0.0)      # disjoint: F1 0, not a division error


def test_no_steps_and_no_gold(repo: Repo) -> None:
    empty = run_metrics(repo, [], GOLD)
    approx(empty.file, 0, 2, 0, 0.0, 1.0, 0.0)
    assert empty.trajectory_span is not None
    assert (empty.trajectory_span.auc, empty.trajectory_span.redundancy) == (0.0, 0.0)
    assert empty.trajectory_span.coverage_by_step == []
    no_gold = run_metrics(repo, STEPS, [])
    assert no_gold.file is None and no_gold.trajectory_file is None and no_gold.steps == 4


def test_gold_lines_outside_any_definition_give_empty_symbol_gold(repo: Repo) -> None:
    run = run_metrics(repo, STEPS, [("n.py", (1, 1))])
    approx(run.symbol, 0, 0, 2, 1.0, 0.0, 0.0)


# --- aggregation -------------------------------------------------------------------------


def _run(inter: int, gold: int, pred: int, auc: float = 0.0) -> RunRetrieval:
    from copeca_action.retrieval import TrajectoryScore
    from copeca_action.retrieval._metrics import score

    traj = TrajectoryScore(coverage_by_step=[auc], auc=auc, redundancy=0.0, viewed_union=0,
                           viewed_total=0)
    return RunRetrieval(steps=1, file=score(inter, gold, pred), trajectory_file=traj)


def test_macro_and_micro() -> None:
    runs = [_run(2, 2, 3, auc=0.5), _run(0, 1, 0, auc=0.0), RunRetrieval(steps=2)]
    arrays = retrieval_arrays(runs)
    assert np.isnan(arrays["file.coverage"][2])
    assert float(macro(arrays["file.coverage"])) == pytest.approx(0.5)
    assert float(macro(arrays["file.precision"])) == pytest.approx((2 / 3 + 1) / 2)
    cov, prec, f1 = micro(arrays["file.intersection"], arrays["file.gold"], arrays["file.pred"])
    assert float(cov) == pytest.approx(2 / 3)
    assert float(prec) == pytest.approx(2 / 3)
    assert float(f1) == pytest.approx(2 / 3)
    assert float(macro(arrays["trajectory.file.auc"])) == pytest.approx(0.25)
    assert float(macro(arrays["steps"])) == pytest.approx(4 / 3)
    summary = summarize_arm(runs)
    assert summary.file.runs == 2
    assert summary.file.micro_coverage == pytest.approx(2 / 3)
    assert summary.file.auc == pytest.approx(0.25)
    assert summary.editloc.runs == 0 and summary.editloc.macro_f1 is None


def test_statistics_vectorise_over_bootstrap_resamples() -> None:
    runs = [_run(2, 2, 3), _run(0, 1, 0), _run(1, 4, 1)]
    arrays = retrieval_arrays(runs)
    index = np.array([[0, 1, 2], [0, 0, 0], [1, 1, 2]])  # 3 resamples of 3 runs
    cov, _, _ = micro(arrays["file.intersection"][index], arrays["file.gold"][index],
                      arrays["file.pred"][index])
    assert cov == pytest.approx([3 / 7, 1.0, 1 / 6])
    means = macro(arrays["file.coverage"][index])
    assert means == pytest.approx([(1 + 0 + 0.25) / 3, 1.0, 0.25 / 3])


def test_all_missing_is_nan_not_an_error() -> None:
    arrays = retrieval_arrays([RunRetrieval(), RunRetrieval()])
    assert np.isnan(macro(arrays["span.f1"]))
    assert all(np.isnan(x) for x in micro(arrays["span.intersection"], arrays["span.gold"],
                                          arrays["span.pred"]))
    assert retrieval_arrays([])["file.coverage"].shape == (0,)


viewed_items = st.lists(st.builds(
    lambda step, file, kind, a, n: Viewed(step=step, file=file,
                                          lines=(a, a + n) if kind == "lines" else None,
                                          whole=kind == "whole"),
    st.integers(0, 5), st.sampled_from(sorted(FILES)), st.sampled_from(["name", "whole", "lines"]),
    st.integers(1, 6), st.integers(0, 3)), max_size=12)


@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(viewed_items)
def test_invariants(repo: Repo, items: list[Viewed]) -> None:
    run = run_metrics(repo, items, GOLD)
    for name in ("file", "symbol", "span"):
        final = getattr(run, name)
        traj = getattr(run, f"trajectory_{name}")
        assert 0 <= final.coverage <= 1 and 0 <= final.precision <= 1 and 0 <= final.f1 <= 1
        assert final.intersection <= min(final.gold, final.pred) or final.pred == 0
        # cumulative coverage never falls, ends at the final coverage, bounds the AUC
        steps = traj.coverage_by_step
        assert steps == sorted(steps)
        if steps:
            assert steps[-1] == pytest.approx(final.coverage)
            assert traj.auc <= steps[-1] + 1e-12
        assert 0 <= traj.redundancy < 1
        assert traj.viewed_union <= traj.viewed_total
    assert run.steps == len({i.step for i in items})
