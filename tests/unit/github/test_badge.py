from __future__ import annotations

import json
import math
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from copeca_action.cli import main
from copeca_action.github import ENDPOINT_KEYS, BadgeInput, badge_endpoint, badge_svg


def test_endpoint_json_uses_only_shields_keys() -> None:
    data = badge_endpoint(BadgeInput(verdict="improvement", delta=-0.182, ci_low=-0.3,
                                     ci_high=-0.05))
    assert set(data) <= ENDPOINT_KEYS
    assert {"schemaVersion", "label", "message"} <= set(data)
    assert data["schemaVersion"] == 1
    assert data["message"] == "−18.2% vs baseline"
    assert data["color"] == "#2ea44f"


def test_svg_is_self_contained_and_escaped() -> None:
    svg = badge_svg(BadgeInput(verdict="regression", delta=0.25, ci_low=0.1, ci_high=0.4,
                               versus="base"))
    root = ET.fromstring(svg)
    assert root.tag == "{http://www.w3.org/2000/svg}svg"
    texts = [t.text for t in root.iter("{http://www.w3.org/2000/svg}text")]
    assert texts == ["cost per correct", "+25.0% vs base"]
    assert "href" not in svg and "<script" not in svg and "@import" not in svg
    assert "95% CI +10.0 to +40.0%" in svg


def test_badge_cli_writes_both_files(tmp_path: Path) -> None:
    report = tmp_path / "report.json"
    report.write_text(json.dumps({"verdict": "improvement", "delta": -0.031, "ci_low": -0.05,
                                  "ci_high": -0.01, "other": 1}))
    assert main(["badge", str(report), "--out-dir", str(tmp_path / "b")]) == 0
    data = json.loads((tmp_path / "b" / "badge.json").read_text())
    assert data["message"] == "−3.1% vs baseline"
    ET.fromstring((tmp_path / "b" / "badge.svg").read_text())


def test_badge_cli_names_the_bad_field(tmp_path: Path, capsys: pytest.CaptureFixture[str]
                                       ) -> None:
    report = tmp_path / "report.json"
    report.write_text(json.dumps({"verdict": "great"}))
    assert main(["badge", str(report)]) == 2
    assert "verdict" in capsys.readouterr().err


def test_an_inconclusive_badge_shows_the_interval_never_a_bare_estimate() -> None:
    bare = BadgeInput(verdict="inconclusive", delta=0.012)
    assert badge_endpoint(bare)["message"] == "inconclusive"
    ci = BadgeInput(verdict="inconclusive", delta=0.012, ci_low=-0.2, ci_high=0.25)
    assert badge_endpoint(ci)["message"] == "−20.0 to +25.0% vs baseline"
    assert "+1.2%" not in badge_svg(ci)


def test_a_simulated_badge_says_so() -> None:
    data = badge_endpoint(BadgeInput(verdict="improvement", delta=-0.4, ci_low=-0.5,
                                     ci_high=-0.3, simulated=True))
    assert data["label"] == "simulated cost per correct"


@pytest.mark.parametrize(("ratio", "tasks", "reps"), [(0.5, 10, 2), (1.0, 10, 2), (0.4, 20, 3),
                                                    (2.5, 20, 3)])
def test_the_cli_badge_of_report_json_is_the_actions_badge(tmp_path: Path, ratio: float,
                                                           tasks: int, reps: int) -> None:
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "render"))
    from html_cases import records

    from copeca_action.github import BundleInfo, comment_data
    from copeca_action.github._badge import badge_from_comment
    from copeca_action.report import Settings, build_report

    report = build_report(records(tasks, reps, ratio=ratio, control=2),
                          Settings(resamples=300, breakdown_resamples=100))
    if ratio in (0.4, 2.5):  # a real improvement and regression pass `unbacked`
        assert report.verdict == ("improvement" if ratio < 1 else "regression")
    (tmp_path / "report.json").write_text(report.model_dump_json())
    assert main(["badge", str(tmp_path / "report.json"), "--out-dir", str(tmp_path)]) == 0
    cli = json.loads((tmp_path / "badge.json").read_text())
    data = comment_data(report, BundleInfo(None, None, None), comment_id="x", tasks={})
    assert cli == badge_endpoint(badge_from_comment(data))
    if ratio == 1.0:
        assert report.verdict == "inconclusive"
        assert " to " in cli["message"]  # the interval, not a bare estimate


@pytest.mark.parametrize(("claim", "field"), [
    ({"verdict": "improvement"}, "ci_high"),
    ({"verdict": "improvement", "delta": -0.2}, "ci_high"),
    ({"verdict": "improvement", "delta": -0.2, "ci_low": -0.4, "ci_high": 0.1}, "ci_high"),
    ({"verdict": "regression", "delta": 0.3}, "ci_low"),
    ({"verdict": "regression", "delta": 0.3, "ci_low": -0.1, "ci_high": 0.6}, "ci_low"),
    # NaN drew a green "n/a vs baseline" and a grey "n/a to n/a": no number is null
    ({"verdict": "improvement", "delta": math.nan, "ci_low": -1, "ci_high": -0.5}, "delta"),
    ({"verdict": "improvement", "delta": "NaN", "ci_low": -1, "ci_high": -0.5}, "delta"),
    ({"verdict": "regression", "delta": 0.3, "ci_low": 0.1, "ci_high": math.nan}, "ci_high"),
    ({"verdict": "inconclusive", "delta": 0.1, "ci_low": math.nan, "ci_high": 1}, "ci_low"),
])
def test_a_verdict_its_numbers_do_not_back_is_no_badge(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], claim: dict[str, object],
        field: str) -> None:
    """The verdict is drawn only with the interval that decides it: a bare "improvement",
    or one whose interval reaches above zero, is refused, and nothing is written."""
    report = tmp_path / "claim.json"
    report.write_text(json.dumps(claim))
    assert main(["badge", str(report), "--out-dir", str(tmp_path / "b")]) == 2
    err = capsys.readouterr().err
    assert str(report) in err and field in err and "Traceback" not in err
    assert not (tmp_path / "b").exists()


def test_an_edited_report_verdict_is_no_badge(tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "render"))
    from html_cases import records

    from copeca_action.report import Settings, build_report

    report = build_report(records(10, 2, ratio=1.0, control=2),
                          Settings(resamples=300, breakdown_resamples=100))
    assert report.verdict == "inconclusive"
    data = json.loads(report.model_dump_json())
    data["verdict"] = "improvement"
    path = tmp_path / "report.json"
    path.write_text(json.dumps(data))
    assert main(["badge", str(path), "--out-dir", str(tmp_path / "b")]) == 2
    err = capsys.readouterr().err
    assert f"{path}" in err and "verdict 'improvement' is not what the headline" in err
    assert not (tmp_path / "b").exists()


def test_the_svg_names_the_intervals_own_level(tmp_path: Path) -> None:
    """A scenario's alpha (or an adaptive look's) sets the interval's level: the badge's
    title names that level, as the comment and report do, never a fixed 95%."""
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "render"))
    from html_cases import records

    from copeca_action.github import BundleInfo, comment_data
    from copeca_action.github._badge import badge_from_comment, badge_input
    from copeca_action.report import Settings, build_report

    report = build_report(records(10, 2, ratio=0.4, control=2),
                          Settings(resamples=300, breakdown_resamples=100, alpha=0.2))
    c = report.headline_comparison
    assert c is not None and c.delta.level == pytest.approx(0.8)
    svg = badge_svg(badge_input(report))
    assert "(80% CI " in svg and "95%" not in svg
    data = comment_data(report, BundleInfo(None, None, None), comment_id="x", tasks={})
    assert badge_svg(badge_from_comment(data)) == svg
    (tmp_path / "report.json").write_text(report.model_dump_json())
    assert main(["badge", str(tmp_path / "report.json"), "--out-dir", str(tmp_path)]) == 0
    assert (tmp_path / "badge.svg").read_text() == svg


def test_a_badge_is_against_the_baseline_or_the_base_and_nothing_else(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`versus` is drawn after "vs": free text there could write any claim into the badge."""
    claim = tmp_path / "b.json"
    claim.write_text(json.dumps({"verdict": "inconclusive", "delta": 0.1, "ci_low": -0.1,
                                 "ci_high": 0.3,
                                 "versus": "baseline | verified improvement -40%"}))
    assert main(["badge", str(claim), "--out-dir", str(tmp_path / "b")]) == 2
    assert "versus" in capsys.readouterr().err
    assert not (tmp_path / "b").exists()


def test_a_badge_never_rounds_a_bound_onto_zero() -> None:
    from copeca_action.github._badge import badge_message

    assert badge_message(BadgeInput(verdict="inconclusive", delta=-0.00004, ci_low=-0.1,
                                    ci_high=0.00004)) == "−10.0 to +0.004% vs baseline"
    assert badge_message(BadgeInput(verdict="improvement", delta=-0.0004, ci_low=-0.001,
                                    ci_high=-0.0001)) == "−0.04% vs baseline"
