"""Several tool arms: the comment, the outputs, the badge and the gate publish the report's
one decision (the worst tool's, at the split alpha), and name which tool it is."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from fake_github import FakeGitHub
from gh_support import payload

from copeca_action.errors import ConfigError
from copeca_action.github import (
    ActionContext,
    BundleInfo,
    Outcome,
    RetryPolicy,
    badge_input,
    comment_data,
    main,
    output_values,
    read_badge_input,
    render_comment,
)
from copeca_action.github._badge import badge_endpoint, badge_from_comment
from copeca_action.records import RunRecord
from copeca_action.report import Report, Settings, build_report
from copeca_action.report._simulate import Population, make_rows

NO_BUNDLE = BundleInfo(None, None, None)
FAST = Settings(resamples=500, breakdown_resamples=200, power_experiments=0)


def _report(ratios: dict[str, float]) -> Report:
    """A baseline and one tool arm per ratio, sharing the baseline's runs (same seed)."""
    rows: list[dict[str, object]] = []
    for tool, ratio in ratios.items():
        drawn = make_rows(Population(cost_ratio=ratio), 30, 4, np.random.default_rng(0),
                          tool=tool)
        rows += [r for r in drawn if r["arm"] == tool or not rows]
    return build_report([RunRecord(**r) for r in rows], FAST)


@pytest.fixture(scope="module")
def mixed() -> Report:
    report = _report({"toolA": 0.4, "toolB": 2.5})
    assert [c.verdict for c in report.comparisons] == ["improvement", "regression"]
    return report


def test_the_comment_names_the_deciding_tool_and_lists_each_tools_verdict(
        mixed: Report) -> None:
    data = comment_data(mixed, NO_BUNDLE, comment_id="copeca", tasks={})
    assert data.verdict == "regression"
    assert data.headline is not None and data.headline.comparison == "toolB vs baseline"
    assert [(c.name, c.verdict) for c in data.comparisons] == [
        ("toolB vs baseline", "regression"), ("toolA vs baseline", "improvement")]
    assert data.footer is not None and data.footer.confidence == 0.975
    body = render_comment(data)
    assert "**toolB vs baseline: Cost per correct +" in body
    assert "(97.5% CI " in body and "split between them (Bonferroni)" in body
    assert "| toolB vs baseline | 🔴 regression | +" in body
    assert "| toolA vs baseline | 🟢 improvement | −" in body
    assert "The table is toolB vs baseline, the comparison that decides the verdict." in body


def test_outputs_and_badge_are_the_deciding_comparisons_numbers(mixed: Report) -> None:
    head = mixed.comparisons[1]
    out = output_values(mixed, NO_BUNDLE, None)
    assert out["verdict"] == "regression" and out["delta"] == f"{head.delta.estimate:.6g}"
    drawn = badge_endpoint(badge_input(mixed))
    assert drawn["message"].startswith("toolB vs baseline: +") and drawn["color"] == "#cf222e"
    data = comment_data(mixed, NO_BUNDLE, comment_id="copeca", tasks={})
    assert badge_endpoint(badge_from_comment(data)) == drawn


def test_one_tools_badge_and_comment_are_as_before() -> None:
    report = _report({"codesearch": 0.4})
    assert report.multiplicity is None and report.verdict == "improvement"
    data = comment_data(report, NO_BUNDLE, comment_id="copeca", tasks={})
    assert data.comparisons == [] and data.headline is not None
    assert data.headline.comparison == "" and "Bonferroni" not in render_comment(data)
    assert badge_endpoint(badge_input(report))["message"].endswith("% vs baseline")


def test_an_edited_report_that_hides_a_tools_regression_gets_no_badge(
        mixed: Report, tmp_path: Path) -> None:
    data = json.loads(mixed.model_dump_json())
    data["verdict"], data["headline"] = "improvement", 0  # toolA's numbers back it
    path = tmp_path / "report.json"
    path.write_text(json.dumps(data))
    with pytest.raises(ConfigError) as caught:
        read_badge_input(path)
    assert "hides comparison 'toolB vs baseline' (regression)" in str(caught.value)


def test_the_gate_fails_naming_the_tool_that_regressed(
        mixed: Report, fake_github: FakeGitHub, actions_env: Any,
        capsys: pytest.CaptureFixture[str]) -> None:
    def engine(ctx: ActionContext) -> Outcome:
        return Outcome(comment=comment_data(mixed, NO_BUNDLE, comment_id="copeca", tasks={}),
                       outputs=output_values(mixed, NO_BUNDLE, None), report=mixed)

    env = actions_env("pull_request", payload("pull_request.opened"), fake_github.url)
    assert main(env, engine, policy=RetryPolicy(attempts=1, backoff_s=0.0),
                sleep=lambda _: None) == 1
    assert ("::error::copeca-action: verdict regression (fail-on: "
            "regression): toolB vs baseline: regression") in capsys.readouterr().out
    body = fake_github.comments[("Codertocat", "Hello-World", 2)][0]["body"]
    assert "| toolB vs baseline | 🔴 regression |" in body
