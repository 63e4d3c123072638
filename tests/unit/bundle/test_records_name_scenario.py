"""`verify` checks that the bundle's scenario is the one its records name: the statement's
scenario name on every record (else `report`, exit 15), and the records' thresholds against
the ones the statement signs (different ones, a merge's or an action input's, are said)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from bundle_support import contents_for, record_for
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from copeca_action._util.scrub import Scrubber
from copeca_action.bundle import write_bundle
from copeca_action.cli import main
from copeca_action.plan import RunPlan
from copeca_action.records import Design, design_of
from copeca_action.scenario._settings import Thresholds


def _bundle(tmp_path: Path, plan: RunPlan, demo, **update) -> Path:  # type: ignore[no-untyped-def]
    records = [record_for(plan, i, **update) for i in range(len(plan.runs))]
    path = tmp_path / "b.copeca"
    write_bundle(contents_for(plan, demo[2], records=records), path,
                 Ed25519PrivateKey.generate(), Scrubber())
    return path


def test_records_of_another_scenario_fail_verification(
        tmp_path: Path, plan: RunPlan, demo, capsys: pytest.CaptureFixture[str]) -> None:  # type: ignore[no-untyped-def]
    path = _bundle(tmp_path, plan, demo, scenario="elsewhere")
    assert main(["verify", str(path)]) == 15
    err = capsys.readouterr().err
    assert "FAILED (report)" in err and "name another scenario than the bundle's demo" in err
    assert "(elsewhere)" in err


def test_records_run_under_other_thresholds_are_said(
        tmp_path: Path, plan: RunPlan, demo, capsys: pytest.CaptureFixture[str]) -> None:  # type: ignore[no-untyped-def]
    """A merge may judge with thresholds of its own (signed): the bundle verifies, and says
    its records were run under others."""
    demo_design = design_of(demo[0].thresholds, demo[0].adaptive)
    other = design_of(Thresholds(fail=0.5), demo[0].adaptive)
    path = _bundle(tmp_path, plan, demo, design=Design(thresholds=other.thresholds,
                                                       adaptive=other.adaptive))
    assert main(["verify", str(path)]) == 0
    out = capsys.readouterr().out
    assert f"were run under other thresholds ({other.thresholds})" in out
    assert f"than the ones the statement signs ({demo_design.thresholds}" in out
    path.unlink()
    path = _bundle(tmp_path, plan, demo, design=Design(thresholds=demo_design.thresholds,
                                                       adaptive=demo_design.adaptive))
    assert main(["verify", str(path), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["design_checked"].startswith(
        "every record names the bundle's scenario demo")
