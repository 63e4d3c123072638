"""`copeca-action plan --power`: minimum detectable effects and spend, exact by common
random numbers."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from copeca_action.cli import main
from copeca_action.report._power import Design, pilot_from_rows, power
from copeca_action.report._simulate import Population, make_rows

DEMO = Path(__file__).parents[3] / "corpus" / "scenarios" / "demo.yaml"


def test_plan_power_prints_mde_and_spend_for_the_demo(
        capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["plan", str(DEMO), "--power", "--experiments", "300", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    planned, more = out["planned"], out["2x tasks"]
    assert -1 < planned["min_detectable_improvement"] < 0
    assert planned["min_detectable_regression"] > 0.10
    assert planned["expected_spend_usd"] == planned["expected_runs"] * 0.25
    # more tasks detect smaller effects
    assert planned["min_detectable_improvement"] < more["min_detectable_improvement"]
    assert more["min_detectable_regression"] < planned["min_detectable_regression"]


def test_more_tasks_detect_smaller_effects_and_the_mde_has_80_percent_power() -> None:
    small = power(Design(10, 2), experiments=400, resamples=400, seed=1)
    large = power(Design(40, 2), experiments=400, resamples=400, seed=1)
    assert small.improvement < large.improvement < 0
    assert 0.1 < large.regression < small.regression


def test_a_pilot_sets_the_population_and_the_cost(tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    rows = make_rows(Population(), 12, 3, np.random.default_rng(0))
    pilot = pilot_from_rows(rows, "p")
    assert len(pilot.cost) == 12 and "arm baseline" in pilot.source
    results = tmp_path / "pilot.jsonl"
    results.write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert main(["plan", str(DEMO), "--power", "--experiments", "200",
                 "--pilot", str(results)]) == 0
    text = capsys.readouterr().out
    assert "minimum detectable improvement" in text and "pilot:" in text
    assert main(["plan", str(DEMO), "--pilot", str(results)]) == 2  # --pilot needs --power


def test_an_adaptive_scenario_is_sized_at_its_maximum_with_its_looks(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    scenario = tmp_path / "adaptive.yaml"
    corpus = DEMO.parents[1]
    scenario.write_text(DEMO.read_text().replace(
        "repetitions: 2\n", "repetitions: 2\nadaptive: {min_repetitions: 2, max_repetitions: 4}\n"
    ).replace("scripts: ../scripts", f"scripts: {corpus / 'scripts'}"))
    assert main(["plan", str(scenario), "--corpus", str(corpus), "--power", "--experiments",
                 "200", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert set(out) == {"planned", "2x tasks"}  # repetitions are the schedule's to set
    planned = out["planned"]
    assert planned["adaptive"] and planned["models"] == 2
    assert planned["expected_runs"] == 2 * 12 * 4 * 2  # arms × tasks × max reps × models


@pytest.mark.parametrize("count", ["199", "20001", "100000000000"])
def test_a_count_of_experiments_out_of_range_is_refused_by_name(
        count: str, capsys: pytest.CaptureFixture[str]) -> None:
    """Not a traceback from numpy failing to allocate terabytes."""
    assert main(["plan", str(DEMO), "--power", "--experiments", count]) == 2
    err = capsys.readouterr().err
    assert f"--experiments: {count}: expected 200 to 20,000" in err and "Traceback" not in err


def test_a_pilot_whose_costs_are_no_price_is_refused(tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    """Each cost finite, but near the largest float: the expected spend would be an
    overflowed ∞; the pilot is refused, naming the cost and the limit."""
    rows = [{"run_id": f"r{t}{r}", "task_id": f"t{t}", "arm": "baseline", "model": "m",
             "outcome": "ok", "correct": True, "cost_usd": 1e308, "repetition": r}
            for t in range(3) for r in range(2)]
    results = tmp_path / "pilot.jsonl"
    results.write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert main(["plan", str(DEMO), "--power", "--experiments", "200",
                 "--pilot", str(results)]) == 2
    err = capsys.readouterr().err
    assert "a pilot run costs $1e+308; above $1,000,000,000 a run is no price" in err
    assert "$inf" not in err


def test_an_expected_spend_above_the_budget_is_warned_about(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # The demo's budget is $5 and its design, at the assumed $0.25 a run, costs $24: the run
    # would stop at about 20 runs, and the effects shown are those of all 96.
    assert main(["plan", str(DEMO), "--power", "--experiments", "200"]) == 0
    err = capsys.readouterr().err
    assert "budget_usd: the expected spend $24.00 is above the budget $5.00" in err
    assert "about 20 of 96 runs" in err
    roomy = tmp_path / "scenarios" / "roomy.yaml"
    roomy.parent.mkdir()
    roomy.write_text(DEMO.read_text().replace("budget_usd: 5.0", "budget_usd: 500").replace(
        "scripts: ../scripts", f"scripts: {DEMO.parents[1] / 'scripts'}"))
    assert main(["plan", str(roomy), "--corpus", str(DEMO.parents[1]), "--power",
                 "--experiments", "200"]) == 0
    assert "budget_usd" not in capsys.readouterr().err


def test_a_design_too_large_to_simulate_is_refused_before_allocating(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # 1000 experiments of 139 tasks × 1000 repetitions asked numpy for 1 GiB per array: a
    # MemoryError traceback, or the kernel's OOM kill.
    big = tmp_path / "scenarios" / "big.yaml"
    big.parent.mkdir()
    big.write_text(DEMO.read_text().replace("repetitions: 2", "repetitions: 1000").replace(
        "scripts: ../scripts", f"scripts: {DEMO.parents[1] / 'scripts'}"))
    assert main(["plan", str(big), "--corpus", str(DEMO.parents[1]), "--power"]) == 2
    err = capsys.readouterr().err
    assert "--power" in err and "28,000,000 simulated runs, over 20,000,000" in err
    assert "Traceback" not in err


@pytest.mark.parametrize(("args", "said"), [
    (["--experiments", "500"], "--experiments: only with --power"),
    (["--power", "--shard", "1/2"], "--shard: not with --power"),
    (["--power", "--pilot", "."], "--pilot: a folder"),
])
def test_a_flag_that_would_do_nothing_is_refused_by_name(
        args: list[str], said: str, capsys: pytest.CaptureFixture[str]) -> None:
    """`--experiments` without `--power`, or `--shard` with it, was ignored in silence; a
    folder given as the pilot was "no such file"."""
    assert main(["plan", str(DEMO), *args]) == 2
    assert said in capsys.readouterr().err


def _two_tools(tmp_path: Path, extra: str = "") -> Path:
    """The demo corpus with a second tool mode, and the demo scenario comparing both."""
    import shutil

    corpus = tmp_path / "corpus"
    shutil.copytree(DEMO.parents[1], corpus)
    mode = (corpus / "modes" / "codesearch.yaml").read_text()
    (corpus / "modes" / "codesearch2.yaml").write_text(
        mode.replace("name: codesearch\n", "name: codesearch2\n"))
    scenario = corpus / "scenarios" / "two.yaml"
    scenario.write_text(DEMO.read_text().replace(
        "modes: [baseline, codesearch]", "modes: [baseline, codesearch, codesearch2]"
    ).replace("repetitions: 2\n", "repetitions: 2\n" + extra))
    return scenario


def test_several_tools_are_sized_at_the_alpha_the_report_splits_between_them(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Two tool arms: the report judges each comparison at alpha 0.025 (Bonferroni), and
    plan --power sized them at 0.05, overstating what the design detects."""
    scenario = _two_tools(tmp_path)
    assert main(["plan", str(scenario), "--power", "--experiments", "300", "--json"]) == 0
    planned = json.loads(capsys.readouterr().out)["planned"]
    assert (planned["alpha"], planned["comparisons"], planned["alpha_family"]) == (0.025, 2,
                                                                                  0.05)
    assert planned["arms"] == 3
    # the same design of one tool, at the whole alpha, detects smaller effects: the split
    # is what the numbers above carry (same seed, same draws)
    one = power(Design(7, 2, 3, 5, 2), fail=0.10, experiments=300, resamples=1000, seed=7)
    two = power(Design(7, 2, 3, 5, 2), fail=0.10, experiments=300, resamples=1000, seed=7,
                comparisons=2)
    assert planned["min_detectable_improvement"] == two.improvement
    assert planned["min_detectable_regression"] == two.regression
    assert two.improvement < one.improvement and two.regression > one.regression
    assert main(["plan", str(scenario), "--power", "--experiments", "300"]) == 0
    text = capsys.readouterr().out
    assert ("alpha 0.05 split between 2 tool comparisons (Bonferroni, as the report will judge "
            "them): each at alpha 0.025 (two-sided)") in text


def test_one_tools_power_is_unchanged_and_written_without_a_split(
        capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["plan", str(DEMO), "--power", "--experiments", "200", "--json"]) == 0
    planned = json.loads(capsys.readouterr().out)["planned"]
    assert planned["alpha"] == 0.05 and "comparisons" not in planned
    assert main(["plan", str(DEMO), "--power", "--experiments", "200"]) == 0
    text = capsys.readouterr().out
    assert "alpha 0.05 (two-sided)" in text and "Bonferroni" not in text


def test_an_adaptive_design_of_several_tools_splits_each_looks_share(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    scenario = _two_tools(tmp_path, "adaptive: {min_repetitions: 2, max_repetitions: 4}\n")
    assert main(["plan", str(scenario), "--power", "--experiments", "200"]) == 0
    assert ("alpha 0.05 spent over them, split between 2 tool comparisons (Bonferroni, as the "
            "report will judge them): each look's share divided by 2") in capsys.readouterr().out


def test_an_adaptive_design_is_written_with_its_alpha_and_its_most_repetitions(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Adaptive, alpha 0.1, looks at 2..4 on a scenario of `repetitions: 2`: the looks were
    simulated at 0.1's shares up to 4 repetitions, but --json said alpha 0.05 and
    repetitions 2, and the first line "× 2 repetition(s)"."""
    from copeca_action.scenario import Adaptive

    scenario = tmp_path / "adaptive.yaml"
    corpus = DEMO.parents[1]
    scenario.write_text(DEMO.read_text().replace(
        "repetitions: 2\n",
        "repetitions: 2\nadaptive: {min_repetitions: 2, max_repetitions: 4, alpha: 0.1}\n"
    ).replace("scripts: ../scripts", f"scripts: {corpus / 'scripts'}"))
    args = ["plan", str(scenario), "--corpus", str(corpus), "--power", "--experiments", "200"]
    assert main([*args, "--json"]) == 0
    planned = json.loads(capsys.readouterr().out)["planned"]
    assert planned["alpha"] == 0.1 and planned["repetitions"] == 4
    same = power(Design(7, 4, 2, 5, 2), fail=0.10, experiments=200, resamples=1000, seed=7,
                 adaptive=Adaptive(min_repetitions=2, max_repetitions=4, alpha=0.1))
    assert planned["min_detectable_improvement"] == same.improvement
    assert planned["expected_runs"] == same.expected_runs == 2 * 12 * 4 * 2
    assert main(args) == 0
    assert "× up to 4 repetition(s)" in capsys.readouterr().out
