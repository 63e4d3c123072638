"""A realistic CommentData for rendering and end-to-end tests."""

from __future__ import annotations

from copeca_action.github import (
    AdoptionLine,
    Bounds,
    CapabilityRow,
    CommentData,
    Estimate,
    FlagRow,
    Footer,
    Headline,
    MetricRow,
    RetrievalRow,
    TaskRow,
)


def sample_comment(comment_id: str = "copeca", tasks: int = 6, note: str = "",
                   verdict: str = "improvement") -> CommentData:
    est = Estimate(delta=-0.182, ci_low=-0.275, ci_high=-0.081)
    return CommentData.model_validate({
        "comment_id": comment_id,
        "verdict": verdict,
        "verdict_reason": "The upper bound of the interval is below zero.",
        "headline": Headline(estimate=est),
        "adoption": AdoptionLine(adoption=0.833,
                                 estimate=Estimate(delta=-0.201, ci_low=-0.3, ci_high=-0.09)),
        "metrics": [
            MetricRow(metric="Cost per correct", unit="usd", baseline=0.412, tool=0.337,
                      estimate=est, baseline_ci=Bounds(low=0.331, high=0.524),
                      tool_ci=Bounds(low=0.27, high=0.431)),
            MetricRow(metric="Accuracy", unit="fraction", baseline=0.615, tool=0.667,
                      estimate=Estimate(delta=0.052, ci_low=-0.02, ci_high=0.11),
                      delta_kind="points", baseline_ci=Bounds(low=0.482, high=0.734),
                      tool_ci=Bounds(low=0.531, high=0.78)),
            MetricRow(metric="Spend per run", unit="usd", baseline=0.55, tool=0.45,
                      estimate=Estimate(delta=-0.18)),
            MetricRow(metric="Runs", unit="count", baseline=12, tool=12),
            MetricRow(metric="Cost per correct", unit="usd", baseline=0.2, tool=0.204,
                      estimate=Estimate(delta=0.02, ci_low=-0.05, ci_high=0.09),
                      control=True, baseline_ci=Bounds(low=0.15, high=0.27),
                      tool_ci=Bounds(low=0.16, high=0.28)),
        ],
        "capabilities": [CapabilityRow(category="locate", tasks=3, baseline_accuracy=0.5,
                                       tool_accuracy=0.83)],
        "retrieval": [RetrievalRow(metric="Recall of gold lines", baseline=0.4, tool=0.7)],
        "flags": [FlagRow(flag="tool_not_used", baseline=0, tool=2, detail="2 of 12 runs")],
        "warnings": ["Only 12 runs per arm: the interval is wide."],
        "tasks": [TaskRow(task_id=f"fastapi/task-{i}", category="locate", baseline_correct=1,
                          baseline_runs=2, tool_correct=2, tool_runs=2, baseline_cost_usd=0.4,
                          tool_cost_usd=0.3, note=note) for i in range(tasks)],
        "footer": Footer(alert_threshold=0.05, fail_threshold=0.10, control_tolerance=0.15,
                         seed=7, resamples=10_000, scenario="demo",
                         bundle_name="copeca-demo.copeca", bundle_sha256="ab" * 32,
                         key_id="cd" * 32, run_url="https://github.com/o/r/actions/runs/1",
                         version="0.1.0"),
        "full_report": "copeca-bundle",
    })
