"""A bundle's report recomputed from what the bundle holds is the one its writer published:
report.json, report.md and the signed summary, notes included (isolation, reuse,
redactions), so `verify` can require it and `analyze` of a bundle prints it."""

from __future__ import annotations

import json
import shutil
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
from copeca_action.plan import build_plan
from copeca_action.records import write_records
from copeca_action.scenario import load_corpus, load_scenario


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


def test_the_signed_summary_of_several_tools_records_the_alpha_split(
        tmp_path: Path, corpus_root: Path) -> None:
    """Two tool arms: every interval is at 1 − alpha / 2, and the signed summary said the
    level (0.975) without the split behind it; it now signs report.json's `multiplicity`,
    and verify, which recomputes the summary, finds it."""
    root = tmp_path / "corpus"
    shutil.copytree(corpus_root, root)
    mode = (root / "modes" / "codesearch.yaml").read_text()
    (root / "modes" / "codesearch2.yaml").write_text(
        mode.replace("name: codesearch\n", "name: codesearch2\n"))
    scenario_path = root / "scenarios" / "two.yaml"
    scenario_path.write_text((root / "scenarios" / "demo.yaml").read_text().replace(
        "modes: [baseline, codesearch]", "modes: [baseline, codesearch, codesearch2]"))
    scenario, corpus = load_scenario(scenario_path), load_corpus(root)
    plan = build_plan(scenario, corpus.tasks)
    out = tmp_path / "out"
    out.mkdir()
    write_records(out / "results.jsonl", [record_for(plan, i) for i in range(len(plan.runs))])
    key = Ed25519PrivateKey.generate()
    conclude(out, scenario_path, scenario, plan, runners=corpus.runners, tasks=corpus.tasks,
             key=key, bundle_path=out / "two.copeca")
    check = Recompute()
    result = verify_bundle(out / "two.copeca", key.public_key(), report=check)
    assert "the signed summary match" in result.report_checked
    with zipfile.ZipFile(out / "two.copeca") as archive:
        published = json.loads(archive.read("report.json"))
    summary = result.statement.predicate.summary
    assert summary is not None
    assert summary.extra["multiplicity"] == published["multiplicity"] == {
        "method": "bonferroni", "comparisons": 2, "alpha_family": 0.05, "alpha": 0.025}
    assert summary.extra["level"] == 0.975


def test_one_tools_signed_summary_has_no_multiplicity(
        concluded: tuple[Path, Ed25519PrivateKey]) -> None:
    path, key = concluded
    summary = verify_bundle(path, key.public_key()).statement.predicate.summary
    assert summary is not None and "multiplicity" not in summary.extra
