"""Several tool arms against one base: the verdict is the worst tool's, and the alpha is
split between them (Bonferroni), once, so every interval shows the level that decided."""

from __future__ import annotations

import math

import pytest
from report_factory import record, several_tools

from copeca_action.records import RunRecord
from copeca_action.render import render_markdown
from copeca_action.report import Report, Settings, build_report
from copeca_action.scenario import Adaptive

FAST = Settings(resamples=500, breakdown_resamples=200, power_experiments=0)


def _levels(report: Report) -> set[float]:
    """The level of every interval the report publishes."""
    out = set()
    for c in report.comparisons:
        lines = [c.overall, c.control, *c.capabilities, *c.languages, *c.models, *c.tasks]
        out |= {i.level for i in (c.delta, c.control_delta, c.adopted and c.adopted.delta)
                if i is not None}
        out |= {ln.delta.level for ln in lines if ln is not None and ln.delta is not None}
        out |= {i.level for ln in lines if ln is not None
                for i in (ln.interval_tool, ln.interval_base) if i is not None}
    out |= {a.interval.level for a in report.arms if a.interval is not None}
    return out


def test_a_regression_of_one_tool_is_the_reports_verdict_beside_anothers_improvement() -> None:
    report = build_report(several_tools({"toolA": 0.4, "toolB": 2.5}), FAST)
    verdicts = {c.name: c.verdict for c in report.comparisons}
    assert verdicts == {"toolA vs baseline": "improvement", "toolB vs baseline": "regression"}
    assert report.verdict == "regression"  # was toolA's improvement: comparison 0 decided
    head = report.headline_comparison
    assert head is not None and head.name == "toolB vs baseline"
    assert report.verdict_reasons[0].startswith("toolB vs baseline: regression (the interval")
    assert report.verdict_reasons[1].startswith("toolA vs baseline: improvement (")


def test_an_improvement_only_when_every_tool_improved() -> None:
    both = build_report(several_tools({"toolA": 0.4, "toolB": 0.35}), FAST)
    assert [c.verdict for c in both.comparisons] == ["improvement", "improvement"]
    assert both.verdict == "improvement" and both.headline == 0
    mixed = build_report(several_tools({"toolA": 0.4, "toolB": 1.0}), FAST)
    assert [c.verdict for c in mixed.comparisons] == ["improvement", "inconclusive"]
    assert mixed.verdict == "inconclusive" and mixed.headline == 1


def test_another_tools_invalid_comparison_does_not_hide_a_regression() -> None:
    records = several_tools({"toolA": 0.4, "toolB": 2.5})
    unused = [r.model_copy(update={"tool_adopted": False}) if r.arm == "toolA" else r
              for r in records]  # toolA was never used: its comparison is invalid
    report = build_report(unused, FAST)
    assert [c.verdict for c in report.comparisons] == ["invalid", "regression"]
    assert report.verdict == "regression"
    assert report.verdict_reasons[1].startswith("toolA vs baseline: invalid (the tool was "
                                                "used in 0%")


def test_the_alpha_is_split_once_and_every_interval_carries_the_level_used() -> None:
    records = several_tools({"toolA": 0.4, "toolB": 2.5})
    report = build_report(records, FAST)
    m = report.multiplicity
    assert m is not None and (m.comparisons, m.alpha_family, m.alpha) == (2, 0.05, 0.025)
    assert report.alpha == 0.025 and _levels(report) == {0.975}
    # each comparison is the one a report of its two arms alone makes at alpha 0.025:
    # the same interval, computed once at the level that decided
    alone = build_report([r for r in records if r.arm != "toolB"],
                         Settings(resamples=500, breakdown_resamples=200, power_experiments=0,
                                  alpha=0.025))
    assert alone.multiplicity is None
    assert report.comparisons[0].delta == alone.comparisons[0].delta
    at_95 = build_report([r for r in records if r.arm != "toolB"], FAST).comparisons[0].delta
    assert at_95.level == 0.95 and at_95.low is not None and at_95.high is not None
    low, high = report.comparisons[0].delta.low, report.comparisons[0].delta.high
    assert low is not None and high is not None and low < at_95.low and high > at_95.high
    text = render_markdown(report)
    assert "(97.5% CI, 30 tasks" in text and "alpha 0.025" in text
    assert "- 2 tool comparisons: the alpha 0.05 is split between them (Bonferroni)" in text


def test_one_tool_is_judged_at_the_full_alpha_and_written_without_multiplicity() -> None:
    report = build_report(several_tools({"codesearch": 2.5}), FAST)
    assert report.multiplicity is None and report.alpha == 0.05
    assert _levels(report) == {0.95}
    assert report.verdict_reasons == report.comparisons[0].reasons
    assert '"multiplicity"' not in report.model_dump_json()
    assert "Bonferroni" not in render_markdown(report)


def test_with_base_ref_arms_every_tools_head_vs_base_decides() -> None:
    records = several_tools({"toolA": 1.0, "toolB": 1.0})
    heads = [r for r in records if r.arm in ("toolA", "toolB")]
    bases = [r.model_copy(update={"arm": f"{r.arm}@base", "run_id": r.run_id + "@base",
                                  "cost_usd": r.cost_usd / (2.5 if r.arm == "toolB" else 1)})
             for r in heads]
    report = build_report(records + bases, FAST)
    kinds = [(c.kind, c.name, c.verdict) for c in report.comparisons]
    assert kinds[:2] == [("head_vs_base", "toolA vs toolA@base", "inconclusive"),
                         ("head_vs_base", "toolB vs toolB@base", "regression")]
    assert [k for k, _, _ in kinds[2:]] == ["tool_vs_baseline"] * 2
    assert report.verdict == "regression" and report.headline == 1
    assert [r.split(":")[0] for r in report.verdict_reasons] == ["toolB vs toolB@base",
                                                                 "toolA vs toolA@base"]
    m = report.multiplicity
    assert m is not None and m.comparisons == 2 and _levels(report) == {0.975}


def test_an_infinite_cost_per_correct_survives_json_beside_the_multiplicity() -> None:
    records: list[RunRecord] = []
    for i in range(8):
        for r in range(2):
            for arm, correct in (("toolA", True), ("toolB", False), ("baseline", True)):
                records.append(record(task_id=f"t{i}", arm=arm, repetition=r, correct=correct))
    report = build_report(records, FAST)
    assert report.comparisons[1].delta.estimate == math.inf
    text = report.model_dump_json()
    assert '"Infinity"' in text and '"multiplicity"' in text
    assert Report.model_validate_json(text) == report


@pytest.mark.parametrize("ratios", [{"toolA": 0.4, "toolB": 2.5}, {"toolA": 2.5}])
def test_reports_of_several_tools_are_reproducible(ratios: dict[str, float]) -> None:
    records = several_tools(ratios)
    assert build_report(records, FAST) == build_report(records, FAST)


def test_under_adaptive_sampling_the_looks_alpha_is_split_and_the_look_says_so() -> None:
    settings = Settings(resamples=500, breakdown_resamples=200, power_experiments=0,
                        adaptive=Adaptive(min_repetitions=2, step=2, max_repetitions=8))
    report = build_report(several_tools({"toolA": 0.4, "toolB": 2.5}), settings)
    look, m = report.look, report.multiplicity
    assert look is not None and m is not None and look.repetitions == 4
    assert m.alpha_family == look.alpha_look and report.alpha == look.alpha_look / 2
    assert _levels(report) == {1 - look.alpha_look / 2}
    judged = f"judged at alpha {look.alpha_look / 2:.4g}"
    assert f"split between 2 tools: {judged}" in report.look_note
    assert f"- {report.look_note}" in render_markdown(report)
    alone = build_report(several_tools({"toolA": 0.4}), settings)
    assert alone.look is not None and alone.look_note == alone.look.note
    assert f"judged at alpha {alone.look.alpha_look:.4g}" in alone.look_note


def test_the_engines_decision_logs_the_alpha_its_verdict_was_judged_at() -> None:
    """adaptive.json is `decide`'s Decision: with two tools it logged the look's share
    (alpha_look) as if the verdict had been judged at it, beside a report judged at half of
    it. It says the split and the alpha judged at, the report's own."""
    from copeca_action.report import decide
    from copeca_action.scenario import Scenario

    sc = Scenario(name="s", tasks={"include": ["*"]}, modes=["baseline", "codesearch"],
                  models=["m"], model_runner_map={"m": "claude"}, resamples=500,
                  adaptive=Adaptive(min_repetitions=2, step=2, max_repetitions=8))
    records = several_tools({"toolA": 0.4, "toolB": 2.5})
    d = decide(records, sc)
    report = build_report(records, Settings.from_scenario(sc, power_experiments=0))
    assert report.look is not None and report.multiplicity is not None
    assert d.verdict == report.verdict and d.look == report.look.look
    assert d.alpha_look == report.look.alpha_look == report.multiplicity.alpha_family
    assert d.comparisons == 2 and d.alpha == report.alpha == d.alpha_look / 2
    one = [r for r in records if r.arm != "toolB"]
    alone = decide(one, sc)
    assert alone.comparisons == 1 and alone.alpha == alone.alpha_look == build_report(
        one, Settings.from_scenario(sc, power_experiments=0)).alpha


def _unpriced(records: list[RunRecord], arm: str) -> list[RunRecord]:
    """`records` with one run of `arm` of unknown cost (a model with no price)."""
    i = next(i for i, r in enumerate(records) if r.arm == arm)
    out = list(records)
    out[i] = out[i].model_copy(update={"cost_usd": None,
                                       "cost_unknown_reason": "no price for gpt-9"})
    return out


def test_a_regression_with_known_costs_is_not_hidden_by_another_tools_unknown_cost() -> None:
    """toolA has one unpriced run, toolB's arms are all priced and regress: the verdict was
    `invalid` (which passes the default gate, fail-on: regression); it is toolB's
    regression, and the reasons say that toolA's comparison is invalid and why."""
    report = build_report(_unpriced(several_tools({"toolA": 1.0, "toolB": 2.5}), "toolA"),
                          FAST)
    assert [c.verdict for c in report.comparisons] == ["invalid", "regression"]
    assert report.verdict == "regression"
    head = report.headline_comparison
    assert head is not None and head.name == "toolB vs baseline"
    reasons = report.verdict_reasons
    assert reasons[0].startswith("toolB vs baseline: regression (the interval's lower bound")
    assert reasons[1].startswith("toolA vs baseline: invalid (1 counted run(s) have no known "
                                 "cost (models: m)")  # was "inconclusive": judged before
    assert reasons[2] == ("1 counted run(s) have no known cost (models: m): spend and cost "
                          "per correct cannot be established; no price for gpt-9: so "
                          "toolA vs baseline is invalid; the regression of toolB vs "
                          "baseline does not depend on it (its arms' costs are all known)")
    # what depends on the unknown stays so: toolA's comparison, and a spend total that
    # says it is a lower bound
    sp = report.spend
    assert sp is not None and sp.unknown_attempts == 1
    assert "(the total is a lower bound)" in render_markdown(report)


@pytest.mark.parametrize("arm", ["baseline", "toolB"])
def test_an_unknown_cost_in_the_regressions_arms_leaves_the_report_invalid(arm: str) -> None:
    report = build_report(_unpriced(several_tools({"toolA": 1.0, "toolB": 2.5}), arm), FAST)
    verdicts = [c.verdict for c in report.comparisons]
    assert verdicts == (["invalid", "invalid"] if arm == "baseline" else ["inconclusive",
                                                                          "invalid"])
    assert report.verdict == "invalid"
    assert report.verdict_reasons[0].startswith("1 counted run(s) have no known cost")
    assert report.headline_comparison is not None
    assert report.headline_comparison.verdict == "invalid"


def test_an_unknown_cost_beside_improvements_is_invalid() -> None:
    """No regression: the unknown cost decides, as with one tool (an improvement needs every
    tool's, and toolA's is not established)."""
    report = build_report(_unpriced(several_tools({"toolA": 0.4, "toolB": 0.35}), "toolA"),
                          FAST)
    assert [c.verdict for c in report.comparisons] == ["invalid", "improvement"]
    assert report.verdict == "invalid" and report.headline == 0
    assert report.verdict_reasons[0].startswith("1 counted run(s) have no known cost")
    assert report.verdict_reasons[1].startswith("toolA vs baseline: invalid (1 counted run")
    assert report.verdict_reasons[2].startswith("toolB vs baseline: improvement (")


def test_a_run_that_costs_no_price_in_another_tool_does_not_hide_a_regression() -> None:
    records = several_tools({"toolA": 1.0, "toolB": 2.5})
    i = next(i for i, r in enumerate(records) if r.arm == "toolA")
    records[i] = records[i].model_copy(update={"cost_usd": 1e160})
    report = build_report(records, FAST)
    assert [c.verdict for c in report.comparisons] == ["invalid", "regression"]
    assert report.verdict == "regression"
    assert report.verdict_reasons[-1].startswith("a run of arm(s) toolA costs $1e+160")
    assert report.verdict_reasons[-1].endswith("so toolA vs baseline is invalid; the "
                                               "regression of toolB vs baseline does not "
                                               "depend on it (its arms' costs are all known)")


def test_one_tools_regression_vs_base_stands_beside_an_unknown_cost_in_the_baseline() -> None:
    """compare: both with one tool: head vs base decides; an unpriced baseline run makes
    tool vs baseline invalid, not the regression it does not take part in."""
    records = several_tools({"tool": 1.0})
    bases = [r.model_copy(update={"arm": "tool@base", "run_id": r.run_id + "@base",
                                  "cost_usd": r.cost_usd / 2.5})
             for r in records if r.arm == "tool"]
    report = build_report(_unpriced(records, "baseline") + bases, FAST)
    assert [(c.name, c.verdict) for c in report.comparisons] == [
        ("tool vs tool@base", "regression"), ("tool vs baseline", "invalid")]
    assert report.verdict == "regression" and report.headline == 0
    assert report.verdict_reasons[:-1] == report.comparisons[0].reasons
    assert report.verdict_reasons[-1].endswith(
        "so tool vs baseline is invalid; the regression of tool vs tool@base does not depend "
        "on it (its arms' costs are all known)")


def test_the_power_of_an_adaptive_design_of_several_tools_is_at_the_split_alpha() -> None:
    """Each comparison's minimum detectable effects simulate the looks at the alpha the
    report judges them with: each look's share / k (they used the whole share)."""
    def settings(alpha: float) -> Settings:
        return Settings(resamples=200, breakdown_resamples=100, power_experiments=200,
                        adaptive=Adaptive(min_repetitions=2, step=2, max_repetitions=4,
                                          alpha=alpha))

    records = several_tools({"toolA": 1.0, "toolB": 1.0}, tasks=12)
    both = build_report(records, settings(0.05)).comparisons[0].power
    whole = build_report([r for r in records if r.arm != "toolB"], settings(0.05))
    half = build_report([r for r in records if r.arm != "toolB"], settings(0.025))
    assert both is not None and whole.comparisons[0].power is not None
    assert both == half.comparisons[0].power  # alpha 0.05 / 2 tools at every look
    assert both.regression is not None and whole.comparisons[0].power.regression is not None
    assert both.regression > whole.comparisons[0].power.regression
