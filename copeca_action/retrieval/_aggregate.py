"""Per-arm arrays of run metrics, and the macro / micro statistics the report bootstraps.

The report owns the paired bootstrap. It calls `retrieval_arrays(runs)` once per arm (runs in
the same task order as its cost arrays), resamples task indices, and applies `macro` or
`micro` to the resampled rows: both take arrays whose last axis is runs, so an index matrix
of shape (resamples, runs) gives every resample at once.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numpy.typing import NDArray

from copeca_action._util.model import RecordModel
from copeca_action.retrieval._metrics import (
    CONTEXT_GRANULARITIES,
    GRANULARITIES,
    RunRetrieval,
    Score,
    TrajectoryScore,
)

FloatArray = NDArray[np.float64]

SCORE_FIELDS = ("coverage", "precision", "f1", "intersection", "gold", "pred")
TRAJECTORY_FIELDS = ("auc", "redundancy")


def array_keys() -> list[str]:
    """`file.coverage`, …, `editloc.pred`, then `trajectory.file.auc`, …: the arrays' names."""
    keys = [f"{g}.{f}" for g in GRANULARITIES for f in SCORE_FIELDS]
    keys += [f"trajectory.{g}.{f}" for g in CONTEXT_GRANULARITIES for f in TRAJECTORY_FIELDS]
    return [*keys, "steps"]


def retrieval_arrays(runs: Sequence[RunRetrieval]) -> dict[str, FloatArray]:
    """One float array per metric (see `array_keys`), one entry per run in the given order;
    NaN where the run has no value (its task has no gold at that granularity)."""
    n = len(runs)
    out = {key: np.full(n, np.nan) for key in array_keys()}
    for i, run in enumerate(runs):
        for g in GRANULARITIES:
            value: Score | None = getattr(run, g)
            if value is not None:
                for f in SCORE_FIELDS:
                    out[f"{g}.{f}"][i] = getattr(value, f)
        for g in CONTEXT_GRANULARITIES:
            traj: TrajectoryScore | None = getattr(run, f"trajectory_{g}")
            if traj is not None:
                for f in TRAJECTORY_FIELDS:
                    out[f"trajectory.{g}.{f}"][i] = getattr(traj, f)
        out["steps"][i] = run.steps
    return out


def macro(values: FloatArray) -> FloatArray:
    """Mean over runs (last axis), ignoring runs without a value; NaN when none has one."""
    present = ~np.isnan(values)
    count = present.sum(axis=-1)
    total = np.where(present, values, 0.0).sum(axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(count > 0, total / np.maximum(count, 1), np.nan)


def micro(intersection: FloatArray, gold: FloatArray,
          pred: FloatArray) -> tuple[FloatArray, FloatArray, FloatArray]:
    """(coverage, precision, F1) of the pooled sizes over runs (last axis): Σ∩/Σgold and
    Σ∩/Σpred, with the same empty conventions as one run. Runs without a value are skipped;
    NaN when no run has one."""
    present = ~np.isnan(gold)
    inter_sum = np.where(present, intersection, 0.0).sum(axis=-1)
    gold_sum = np.where(present, gold, 0.0).sum(axis=-1)
    pred_sum = np.where(present, pred, 0.0).sum(axis=-1)
    any_present = present.any(axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        coverage = np.where(gold_sum > 0, inter_sum / np.maximum(gold_sum, 1e-300), 1.0)
        precision = np.where(pred_sum > 0, inter_sum / np.maximum(pred_sum, 1e-300), 1.0)
        denominator = coverage + precision
        f1 = np.where(denominator > 0, 2 * coverage * precision / np.where(
            denominator > 0, denominator, 1.0), 0.0)
    nan = np.nan
    return (np.where(any_present, coverage, nan), np.where(any_present, precision, nan),
            np.where(any_present, f1, nan))


class GranularitySummary(RecordModel):
    """One granularity of one arm: macro means and micro pooled ratios."""

    runs: int
    """Runs with a value at this granularity."""
    macro_coverage: float | None
    macro_precision: float | None
    macro_f1: float | None
    micro_coverage: float | None
    micro_precision: float | None
    micro_f1: float | None
    auc: float | None = None
    """Macro mean AUC-coverage (context granularities only)."""
    redundancy: float | None = None


class ArmRetrieval(RecordModel):
    """Point estimates for one arm (the report adds intervals by bootstrap)."""

    runs: int
    mean_steps: float | None
    file: GranularitySummary
    symbol: GranularitySummary
    span: GranularitySummary
    editloc: GranularitySummary


def _opt(value: FloatArray | float) -> float | None:
    number = float(value)
    return None if np.isnan(number) else number


def summarize_arm(runs: Sequence[RunRetrieval]) -> ArmRetrieval:
    arrays = retrieval_arrays(runs)
    parts: dict[str, GranularitySummary] = {}
    for g in GRANULARITIES:
        cov, prec, f1 = micro(arrays[f"{g}.intersection"], arrays[f"{g}.gold"],
                              arrays[f"{g}.pred"])
        traj = g in CONTEXT_GRANULARITIES
        parts[g] = GranularitySummary(
            runs=int((~np.isnan(arrays[f"{g}.gold"])).sum()),
            macro_coverage=_opt(macro(arrays[f"{g}.coverage"])),
            macro_precision=_opt(macro(arrays[f"{g}.precision"])),
            macro_f1=_opt(macro(arrays[f"{g}.f1"])),
            micro_coverage=_opt(cov), micro_precision=_opt(prec), micro_f1=_opt(f1),
            auc=_opt(macro(arrays[f"trajectory.{g}.auc"])) if traj else None,
            redundancy=_opt(macro(arrays[f"trajectory.{g}.redundancy"])) if traj else None)
    return ArmRetrieval(runs=len(runs), mean_steps=_opt(macro(arrays["steps"])), **parts)
