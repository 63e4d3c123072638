"""RunRecords carrying retrieval summaries with known truth (imported by name)."""

from __future__ import annotations

from typing import Any

from copeca_action.records import RetrievalScore, RetrievalSummary, RetrievalTrajectory, RunRecord


def score(inter: int, gold: int, pred: int) -> RetrievalScore:
    cov = inter / gold if gold else 1.0
    prec = inter / pred if pred else 1.0
    f1 = 2 * cov * prec / (cov + prec) if cov + prec else 0.0
    return RetrievalScore(intersection=inter, gold=gold, pred=pred, coverage=cov,
                          precision=prec, f1=f1)


def summary(auc: float, inter: int = 5, gold: int = 10, pred: int = 20,
            redundancy: float = 0.25, steps: int = 4,
            curve: list[float] | None = None) -> RetrievalSummary:
    traj = RetrievalTrajectory(auc=auc, redundancy=redundancy,
                               coverage_by_step=curve if curve is not None else [auc] * steps)
    return RetrievalSummary(steps=steps, file=score(1, 1, 3), symbol=score(inter, gold, pred),
                            span=score(inter, gold, pred), trajectory_file=traj,
                            trajectory_symbol=traj, trajectory_span=traj)


def rec(task: str, arm: str, rep: int = 0, retrieval: RetrievalSummary | None = None,
        **fields: Any) -> RunRecord:
    base: dict[str, Any] = {
        "run_id": f"{task}-{arm}-{rep}", "scenario": "s", "task_id": task, "task_hash": "h",
        "arm": arm, "model": "m", "runner": "claude", "repetition": rep, "outcome": "ok",
        "cost_usd": 1.0, "correct": True, "retrieval": retrieval}
    base.update(fields)
    return RunRecord(**base)
