"""conclude.merge_shards: the one merge behind the CLI and the action."""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bundle"))
from bundle_support import contents_for

from copeca_action._util.scrub import Scrubber
from copeca_action.bundle import verify_bundle, write_bundle
from copeca_action.conclude import merge_shards, shard_scenario
from copeca_action.errors import VerificationError
from copeca_action.plan import Shard, build_plan, shard_plan
from copeca_action.scenario import load_corpus, load_scenario


def _shards(tmp_path: Path, corpus_root: Path, key: Ed25519PrivateKey) -> list[Path]:
    path = corpus_root / "scenarios" / "demo.yaml"
    plan = build_plan(load_scenario(path), load_corpus(corpus_root).tasks)
    out = []
    for i in (1, 2):
        contents = dataclasses.replace(contents_for(shard_plan(plan, Shard(index=i, count=2)),
                                                    path), thresholds={"fail": 0.2})
        write_bundle(contents, tmp_path / f"s{i}.copeca", key, Scrubber())
        out.append(tmp_path / f"s{i}.copeca")
    return out


def test_shard_scenario_takes_the_signed_thresholds_then_overrides(
        tmp_path: Path, corpus_root: Path) -> None:
    paths = _shards(tmp_path, corpus_root, Ed25519PrivateKey.generate())
    which = shard_scenario(paths[0])
    assert which is not None and which.scenario.thresholds.fail == 0.2
    assert which.scenario.thresholds.alert == 0.05  # the YAML's, not overridden
    over = shard_scenario(paths[0], {"alert": 0.01})
    assert over is not None and over.scenario.thresholds.alert == 0.01
    garbage = tmp_path / "garbage.copeca"
    garbage.write_bytes(b"not a zip")
    assert shard_scenario(garbage) is None


def test_merge_shards_returns_the_report_it_signed(tmp_path: Path, corpus_root: Path) -> None:
    key = Ed25519PrivateKey.generate()
    paths = _shards(tmp_path, corpus_root, key)
    runners = load_corpus(corpus_root).runners
    merged = merge_shards(paths, tmp_path / "all.copeca", key=key, runners=runners)
    assert merged.report is not None and merged.report.thresholds.fail == 0.2
    verified = verify_bundle(tmp_path / "all.copeca", key.public_key())
    assert verified.statement.predicate.summary is not None
    assert verified.statement.predicate.summary.verdict == merged.report.verdict
    assert set(merged.files) == {"report.json", "report.md", "report.html"}
    assert merged.report.records == len(verified.records)


def test_an_unreadable_shard_is_named_by_the_merge(tmp_path: Path, corpus_root: Path) -> None:
    key = Ed25519PrivateKey.generate()
    paths = _shards(tmp_path, corpus_root, key)
    paths[0].write_bytes(b"not a zip")
    with pytest.raises(VerificationError):
        merge_shards(paths, tmp_path / "all.copeca", key=key, runners={})


def test_a_merge_keeps_the_redactions_its_shards_reported(tmp_path: Path,
                                                           corpus_root: Path) -> None:
    """Each shard's run left redacted secrets (its signed summary says how many): the merged
    report says so too, as an unsharded run would."""
    key = Ed25519PrivateKey.generate()
    path = corpus_root / "scenarios" / "demo.yaml"
    plan = build_plan(load_scenario(path), load_corpus(corpus_root).tasks)
    paths = []
    for i, found in ((1, 2), (2, 3)):
        contents = contents_for(shard_plan(plan, Shard(index=i, count=2)), path)
        assert contents.report is not None
        summary = contents.report.summary.model_copy(update={"extra": {"redactions": found}})
        contents = dataclasses.replace(
            contents, report=dataclasses.replace(contents.report, summary=summary))
        write_bundle(contents, tmp_path / f"s{i}.copeca", key, Scrubber())
        paths.append(tmp_path / f"s{i}.copeca")
    merged = merge_shards(paths, tmp_path / "all.copeca", key=key,
                          runners=load_corpus(corpus_root).runners)
    assert merged.report is not None and merged.report.redactions == 5
    assert any("5 secret value(s) were redacted" in w for w in merged.report.warnings)
    summary = verify_bundle(tmp_path / "all.copeca", key.public_key()).statement.predicate.summary
    assert summary is not None and summary.extra["redactions"] == 5


def test_a_shard_whose_scenario_is_a_zip_bomb_is_refused_without_inflating_it(
        tmp_path: Path, corpus_root: Path) -> None:
    """The first shard's scenario.yaml, deflated from 256 MiB of zeros (about 256 kB in the
    file), is never inflated: the shard is verified before its scenario is read, and the
    merge refuses it from its directory entry (a bundle stores every member).
    (merge_shards read it with zipfile first: 256 MiB in memory, and a 1 MB shard cost
    2 GB.)"""
    import tracemalloc
    import zipfile

    key = Ed25519PrivateKey.generate()
    paths = _shards(tmp_path, corpus_root, key)
    bomb = tmp_path / "bomb.copeca"
    with zipfile.ZipFile(paths[0]) as src, zipfile.ZipFile(bomb, "w") as out:
        for info in src.infolist():
            if info.filename != "scenario.yaml":
                out.writestr(info, src.read(info))
                continue
            packed = zipfile.ZipInfo("scenario.yaml")
            packed.compress_type = zipfile.ZIP_DEFLATED
            with out.open(packed, "w") as member:
                for _ in range(256):
                    member.write(bytes(1 << 20))
    tracemalloc.start()
    try:
        assert shard_scenario(bomb) is None
        with pytest.raises(VerificationError,
                           match=r"scenario.yaml: compressed \(deflate\)") as info:
            merge_shards([bomb, paths[1]], tmp_path / "all.copeca", key=key, runners={})
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert info.value.kind == "corrupt"
    assert peak < 32 << 20, f"{peak >> 20} MiB allocated"


def test_a_merge_signs_the_thresholds_its_report_used(
        tmp_path: Path, corpus_root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The action's merge lays its threshold inputs over the shards': the report used them,
    but the merged statement signed the shards' own, so `analyze` of the merged bundle (which
    takes the signed thresholds) was not its report."""
    import zipfile

    from copeca_action.cli import main

    key = Ed25519PrivateKey.generate()
    paths = _shards(tmp_path, corpus_root, key)
    out = tmp_path / "all.copeca"
    merged = merge_shards(paths, out, key=key, runners=load_corpus(corpus_root).runners,
                          thresholds={"fail": 3.0})
    assert merged.report is not None and merged.report.thresholds.fail == 3.0
    signed = verify_bundle(out, key.public_key()).statement.predicate.thresholds
    assert signed["fail"] == 3.0
    assert main(["analyze", str(out), "--format", "json"]) == 0
    with zipfile.ZipFile(out) as archive:
        assert capsys.readouterr().out.encode() == archive.read("report.json")
