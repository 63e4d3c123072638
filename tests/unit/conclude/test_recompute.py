"""A bundle's report recomputed from what the bundle holds is the one its writer published:
report.json, report.md and the signed summary, notes included (isolation, reuse,
redactions), so `verify` can require it and `analyze` of a bundle prints it."""

from __future__ import annotations

import sys
import zipfile
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bundle"))
from bundle_support import demo_plan, record_for

from copeca_action.bundle import verify_bundle
from copeca_action.cli import main
from copeca_action.conclude import Recompute, conclude
from copeca_action.records import write_records


@pytest.fixture
def concluded(tmp_path: Path, corpus_root: Path) -> tuple[Path, Ed25519PrivateKey]:
    """A concluded run whose report carries notes the records alone do not hold in a
    field: test gradings without isolation (the isolation note) and reused runs."""
    scenario_path, scenario, corpus, plan = demo_plan(corpus_root)
    out = tmp_path / "out"
    out.mkdir()
    records = [record_for(plan, i, **({"grading": {"kind": "test", "isolation": []}}
                                      if i % 4 == 0 else {}),
                          **({"reused_from": "b" * 64} if i % 5 == 0 else {}))
               for i in range(len(plan.runs))]
    write_records(out / "results.jsonl", records)
    key = Ed25519PrivateKey.generate()
    conclude(out, scenario_path, scenario, plan, runners=corpus.runners, tasks=corpus.tasks,
             key=key, bundle_path=out / "demo.copeca")
    return out / "demo.copeca", key


def test_the_recomputed_report_is_the_published_one(
        concluded: tuple[Path, Ed25519PrivateKey]) -> None:
    path, key = concluded
    check = Recompute()
    result = verify_bundle(path, key.public_key(), report=check)
    assert result.report_checked == ("recomputed from the records: report.json, report.md, "
                                     "the signed summary match")
    assert check.report is not None
    assert any("without network isolation" in w for w in check.report.warnings)
    assert any("reused, not run again" in w for w in check.report.warnings)


def test_analyze_of_a_bundle_prints_its_report_with_the_writers_notes(
        concluded: tuple[Path, Ed25519PrivateKey], capsys: pytest.CaptureFixture[str]) -> None:
    """analyze of a bundle printed a report without the isolation and reuse notes its
    writer added (it read the records as a results file), so not its report.json."""
    path, _ = concluded
    with zipfile.ZipFile(path) as archive:
        published = {n: archive.read(n) for n in ("report.json", "report.md")}
    for fmt, name in (("json", "report.json"), ("md", "report.md")):
        assert main(["analyze", str(path), "--format", fmt]) == 0
        assert capsys.readouterr().out.encode() == published[name]
