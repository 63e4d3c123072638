"""The retrieval section: per-arm point estimates, and per comparison the tool/base ratio of
each metric with the paired cluster bootstrap that cost per correct uses.

Every compared metric is a ratio of sums over runs, so `paired_bootstrap` (which bootstraps
cpc(tool)/cpc(base) = (Σspend_t/Σcorrect_t)/(Σspend_b/Σcorrect_b) from per-task sums) gives
its interval unchanged: micro coverage is Σ∩/Σgold, micro precision Σ∩/Σpred, micro F1
2Σ∩/(Σgold+Σpred), and a macro mean Σvalue/Σ1. Tasks are resampled with the same draws for
both arms; the statistic is recomputed exactly as the point estimate.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

import numpy as np
from numpy.typing import NDArray

from copeca_action._util.arrays import distinct
from copeca_action._util.percent import level_text
from copeca_action.report._model import (
    ComparisonKind,
    RetrievalArm,
    RetrievalComparison,
    RetrievalLine,
    RetrievalSection,
)
from copeca_action.report._stats import FloatArray, IntervalMethod, paired_bootstrap
from copeca_action.report._table import RecordTable

Aggregation = Literal["micro", "macro"]
HEADLINE_AUC = ("trajectory.span.auc", "trajectory.symbol.auc", "trajectory.file.auc")
"""The sentence's metric: span AUC-coverage, else the next granularity that has a ratio."""


def _metrics() -> list[tuple[str, str, Aggregation]]:
    """(key, label, aggregation) in table order: how early, how much, how precise."""
    out: list[tuple[str, str, Aggregation]] = [
        (f"trajectory.{g}.auc", f"AUC-coverage ({g})", "macro")
        for g in ("span", "symbol", "file")]
    for g in ("span", "symbol", "file", "editloc"):
        out += [(f"{g}.coverage", f"coverage ({g})", "micro"),
                (f"{g}.precision", f"precision ({g})", "micro"),
                (f"{g}.f1", f"F1 ({g})", "micro")]
    out += [(f"trajectory.{g}.redundancy", f"redundancy ({g})", "macro")
            for g in ("span", "symbol", "file")]
    return [*out, ("steps", "viewing steps", "macro")]


METRICS = _metrics()


def _ratio_parts(arrays: dict[str, FloatArray], key: str) -> tuple[FloatArray, FloatArray]:
    """Per run (numerator, denominator) whose sums give the statistic; NaN where absent."""
    if key.startswith("trajectory.") or key == "steps":
        values = arrays[key]
        return values, np.where(np.isnan(values), np.nan, 1.0)
    g, field = key.split(".")
    inter, gold, pred = (arrays[f"{g}.{k}"] for k in ("intersection", "gold", "pred"))
    if field == "coverage":
        return inter, gold
    if field == "precision":
        return inter, pred
    return 2 * inter, gold + pred


def retrieval_section(t: RecordTable, pairs: Sequence[tuple[ComparisonKind, str, str]], *,
                      seed: int, resamples: int, alpha: float,
                      method: IntervalMethod) -> RetrievalSection | None:
    """None when no run that reached the agent carries retrieval data."""
    if not t.retrieval:
        return None
    scored = t.reached & np.array([r is not None for r in t.retrieval], dtype=bool)
    if not scored.any():
        return None
    from copeca_action.retrieval import retrieval_arrays, summarize_arm  # only when scored

    rows = np.flatnonzero(scored)
    runs = [r for i in rows.tolist() if (r := t.retrieval[i]) is not None]
    arrays = retrieval_arrays(runs)
    arm, task = t.arm.codes[rows], t.task.codes[rows]
    arms = [RetrievalArm(arm=name, unscored_runs=int((t.reached & ~scored
                                                      & (t.arm.codes == code)).sum()),
                         metrics=summarize_arm([runs[i] for i in np.flatnonzero(arm == code)]))
            for code, name in enumerate(t.arm.names) if (arm == code).any()]
    # `distinct`, not np.unique/np.setdiff1d: their first call imports numpy.ma (35 ms of
    # every `verify`, which recomputes this report beside its hashing)
    scored_tasks = set(distinct(task).tolist())
    no_gold = sorted(t.task.names[c] for c in distinct(t.task.codes[t.reached]).tolist()
                     if c not in scored_tasks)
    comparisons = []
    for kind, tool, base in pairs:
        tc, bc = t.arm.code(tool), t.arm.code(base)
        if (arm == tc).any() and (arm == bc).any():
            lines = _lines(arrays, arm == tc, arm == bc, task, len(t.task.names), seed=seed,
                           resamples=resamples, alpha=alpha, method=method)
            comparisons.append(RetrievalComparison(
                name=f"{tool} vs {base}", kind=kind, tool=tool, base=base, lines=lines,
                summary=sentence(tool, base, lines, 1 - alpha)))
    return RetrievalSection(arms=arms, comparisons=comparisons, tasks_without_gold=no_gold,
                            level=1 - alpha, method=method, resamples=resamples)


def _cluster_sums(values: FloatArray, rows: NDArray[np.bool_], task: NDArray[np.int64],
                  n: int) -> FloatArray:
    present = rows & ~np.isnan(values)
    return np.bincount(task[present], weights=values[present], minlength=n).astype(np.float64)


def _lines(arrays: dict[str, FloatArray], tool: NDArray[np.bool_], base: NDArray[np.bool_],
           task: NDArray[np.int64], n: int, *, seed: int, resamples: int, alpha: float,
           method: IntervalMethod) -> list[RetrievalLine]:
    """One line per metric that both arms have on some task. Metrics with the same paired
    tasks are bootstrapped in one batch (one set of draws for all of them)."""
    sums: dict[str, tuple[FloatArray, ...]] = {}
    groups: dict[bytes, list[str]] = {}
    for key, _, _ in METRICS:
        num, den = _ratio_parts(arrays, key)
        has_t = np.bincount(task[tool & ~np.isnan(num)], minlength=n) > 0
        has_b = np.bincount(task[base & ~np.isnan(num)], minlength=n) > 0
        paired = has_t & has_b
        if not paired.any():
            continue
        sums[key] = tuple(_cluster_sums(v, r, task, n)[paired]
                          for v, r in ((num, tool), (den, tool), (num, base), (den, base)))
        groups.setdefault(paired.tobytes(), []).append(key)
    ratios: dict[str, tuple[float | None, float | None, float | None]] = {}
    for keys in groups.values():
        stacked = [np.stack([sums[k][j] for k in keys]) for j in range(4)]
        bs = paired_bootstrap(*stacked, alpha=alpha, resamples=resamples, seed=seed,
                              method=method)
        for i, key in enumerate(keys):
            defined = stacked[1][i].sum() > 0 and stacked[3][i].sum() > 0
            ratios[key] = ((_num(1 + bs.estimate[i]), _num(1 + bs.low[i]),
                            _num(1 + bs.high[i])) if defined else (None, None, None))
    lines = []
    for key, label, aggregation in METRICS:
        if key not in sums:
            continue
        num_t, den_t, num_b, den_b = (float(a.sum()) for a in sums[key])
        ratio, low, high = ratios[key]
        lines.append(RetrievalLine(
            metric=key, label=label, aggregation=aggregation,
            tool=num_t / den_t if den_t > 0 else None, base=num_b / den_b if den_b > 0 else None,
            ratio=ratio, low=low, high=high, tasks=len(sums[key][0])))
    return lines


def _num(value: float | np.floating) -> float | None:
    v = float(value)
    return None if np.isnan(v) else v


def _fmt(value: float | None) -> str:
    if value is None:
        return "n/a"
    return "∞" if np.isinf(value) else f"{value:.2g}" if value < 10 else f"{value:.0f}"


def sentence(tool: str, base: str, lines: Sequence[RetrievalLine], level: float) -> str:
    """How early the tool arm reached the gold context, in one sentence with its interval."""
    by_key = {ln.metric: ln for ln in lines}
    line = next((by_key[k] for k in HEADLINE_AUC if k in by_key and by_key[k].ratio is not None),
                None)
    if line is None:
        return (f"No AUC-coverage ratio between {tool} and {base}: no task with gold context "
                "where both arms viewed code.")
    r, low, high = line.ratio, line.low, line.high
    assert r is not None
    gran = line.metric.split(".")[1]
    figure = (f"AUC-coverage ratio ({gran}) {_fmt(r)}, {level_text(level)} CI "
              f"{_fmt(low)}–{_fmt(high)}, {line.tasks} task{'s' if line.tasks != 1 else ''}")
    if np.isinf(r):
        return f"{tool} viewed gold context where {base} viewed none ({figure})."
    if r == 0:
        return f"{tool} viewed no gold context where {base} did ({figure})."
    if low is not None and low > 1:
        return f"{tool} reached the gold context {_fmt(r)}× earlier than {base} ({figure})."
    if high is not None and high < 1:
        return f"{tool} reached the gold context {_fmt(1 / r)}× later than {base} ({figure})."
    return (f"No clear difference in how early {tool} and {base} reached the gold context "
            f"({figure}).")
