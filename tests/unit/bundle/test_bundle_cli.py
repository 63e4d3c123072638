"""keygen, verify and merge from the command line: outputs and distinct exit codes."""

from __future__ import annotations

from pathlib import Path

import pytest
from bundle_support import contents_for
from zipedit import rewrite

from copeca_action._util.scrub import Scrubber
from copeca_action.bundle import load_signing_key, write_bundle
from copeca_action.cli import main
from copeca_action.plan import RunPlan, Shard, shard_plan


@pytest.fixture
def keys(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> tuple[Path, Path, str]:
    assert main(["keygen", "--out", str(tmp_path / "keys")]) == 0
    keyid = capsys.readouterr().out.split("keyid:")[1].strip()
    return tmp_path / "keys/copeca-signing.key", tmp_path / "keys/copeca-signing.pub", keyid


def bundle(tmp_path: Path, plan: RunPlan, demo, key_path: Path | None, name: str = "b.copeca"  # type: ignore[no-untyped-def]
           ) -> Path:
    out = tmp_path / name
    write_bundle(contents_for(plan, demo[2]), out,
                 load_signing_key(key_path, {}) if key_path else None, Scrubber())
    return out


def test_verify_prints_the_signer_and_exits_zero(
        tmp_path: Path, plan: RunPlan, demo, keys, capsys: pytest.CaptureFixture[str]) -> None:  # type: ignore[no-untyped-def]
    path = bundle(tmp_path, plan, demo, keys[0])
    assert main(["verify", str(path), "--pubkey", str(keys[1]),
                 "--scenario", str(demo[2])]) == 0
    out = capsys.readouterr().out
    assert f"signed by key {keys[2]} (checked against --pubkey)" in out
    assert f"runs: {len(plan.runs)}/{len(plan.runs)}" in out and "checked against" in out
    assert main(["verify", str(path)]) == 0
    assert "NOT pinned" in capsys.readouterr().out


def test_verify_says_when_the_scripted_model_answered(
        tmp_path: Path, plan: RunPlan, demo, capsys: pytest.CaptureFixture[str]) -> None:  # type: ignore[no-untyped-def]
    import json

    from bundle_support import record_for

    records = [record_for(plan, i, "a").model_copy(
        update={"endpoint": "dry_run" if i % 2 else "real"}) for i in range(len(plan.runs))]
    path = tmp_path / "b.copeca"
    write_bundle(contents_for(plan, demo[2], records=records), path, None, Scrubber())
    assert main(["verify", str(path)]) == 0
    out = capsys.readouterr().out
    half = len(records) // 2
    assert (f"SIMULATED: In part: in {half} of {len(records)} runs the scripted model answered "
            "instead of the vendors (a dry run)") in out
    assert out.index("SIMULATED:") < out.index("verdict:")  # read before the verdict
    assert main(["verify", str(path), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["simulated"] is True
    real = tmp_path / "real.copeca"
    write_bundle(contents_for(plan, demo[2]), real, None, Scrubber())
    assert main(["verify", str(real)]) == 0
    assert "SIMULATED" not in capsys.readouterr().out


def test_verify_exit_codes_differ_per_failure(
        tmp_path: Path, plan: RunPlan, demo, keys, capsys: pytest.CaptureFixture[str]) -> None:  # type: ignore[no-untyped-def]
    signed = bundle(tmp_path, plan, demo, keys[0])
    unsigned = bundle(tmp_path, plan, demo, None, "u.copeca")
    assert main(["verify", str(unsigned)]) == 0
    assert "UNSIGNED" in capsys.readouterr().out
    assert main(["verify", str(unsigned), "--pubkey", str(keys[1])]) == 13
    assert "FAILED (unsigned)" in capsys.readouterr().err
    assert main(["verify", str(unsigned), "--require-signature"]) == 13
    assert "FAILED (unsigned)" in capsys.readouterr().err
    tampered = rewrite(signed, tmp_path / "t.copeca", {"report.md": b"# better\n"})
    assert main(["verify", str(tampered)]) == 11
    assert "changed: report.md" in capsys.readouterr().err
    garbage = tmp_path / "g.copeca"
    garbage.write_bytes(b"not a zip")
    assert main(["verify", str(garbage)]) == 10
    other = tmp_path / "other"
    assert main(["keygen", "--out", str(other)]) == 0
    assert main(["verify", str(signed), "--pubkey", str(other / "copeca-signing.pub")]) == 12


def test_merge_writes_one_verified_bundle(
        tmp_path: Path, plan: RunPlan, demo, keys, capsys: pytest.CaptureFixture[str]) -> None:  # type: ignore[no-untyped-def]
    paths = []
    for i in (1, 2):
        shard = shard_plan(plan, Shard(index=i, count=2))
        out = tmp_path / f"s{i}.copeca"
        write_bundle(contents_for(shard, demo[2]), out, load_signing_key(keys[0], {}),
                     Scrubber())
        paths.append(str(out))
    out = tmp_path / "all.copeca"
    assert main(["merge", *paths, "--out", str(out), "--key", str(keys[0]),
                 "--pubkey", str(keys[1]), "--scenario", str(demo[2])]) == 0
    printed = capsys.readouterr().out
    assert f"{len(plan.runs)} runs" in printed and "no report" not in printed
    assert main(["verify", str(out), "--pubkey", str(keys[1])]) == 0
    import json
    import zipfile
    with zipfile.ZipFile(out) as merged:
        names = set(merged.namelist())
        assert {"report.json", "report.md", "report.html"} <= names
        report = json.loads(merged.read("report.json"))
        statement = json.loads(merged.read("statement.json"))
    runs = sum(arm["runs"] for arm in report["arms"])
    assert runs == len(plan.runs)  # the report covers every shard's records
    assert statement["predicate"]["summary"] is not None
    bare = tmp_path / "bare.copeca"  # no --scenario: the shards' own scenario.yaml is used
    assert main(["merge", *paths, "--out", str(bare), "--key", str(keys[0])]) == 0
    with zipfile.ZipFile(bare) as merged:
        assert "report.md" in merged.namelist()
    assert main(["merge", paths[0], "--out", str(tmp_path / "half.copeca"),
                 "--key", str(keys[0])]) == 14
    assert "shard(s) 2/2 absent" in capsys.readouterr().err


def _two_shards(tmp_path: Path, plan: RunPlan, demo, key: Path) -> list[str]:  # type: ignore[no-untyped-def]
    """The plan's shards 1/2 and 2/2 as signed bundles s1.copeca and s2.copeca."""
    paths = []
    for i in (1, 2):
        out = tmp_path / f"s{i}.copeca"
        write_bundle(contents_for(shard_plan(plan, Shard(index=i, count=2)), demo[2]), out,
                     load_signing_key(key, {}), Scrubber())
        paths.append(str(out))
    return paths


def test_merge_into_a_folder_names_the_folder_before_verifying_the_shards(
        tmp_path: Path, plan: RunPlan, demo, keys, capsys: pytest.CaptureFixture[str]) -> None:  # type: ignore[no-untyped-def]
    """`merge --bundle DIR` where DIR is a folder: refused (exit 2) naming DIR, before the
    shards are read; it failed after the merge was written, naming the temporary file
    (`.DIR.partial: Is a directory`)."""
    paths = _two_shards(tmp_path, plan, demo, keys[0])
    folder = tmp_path / "merged"
    folder.mkdir()
    (tmp_path / "s2.copeca").write_bytes(b"not a zip: the shards are never read")
    assert main(["merge", *paths, "--bundle", str(folder), "--key", str(keys[0])]) == 2
    err = capsys.readouterr().err
    assert f"{folder}: is a folder, expected the bundle file to write" in err
    assert ".partial" not in err and "not a zip" not in err
    assert list(folder.iterdir()) == []


def test_merge_with_a_scenario_of_other_settings_is_refused_before_writing(
        tmp_path: Path, plan: RunPlan, demo, keys, capsys: pytest.CaptureFixture[str]) -> None:  # type: ignore[no-untyped-def]
    """`merge --scenario X`, X with another fail threshold than the shards ran with: the
    merge wrote the bundle with X's thresholds, then its own check against X failed (exit
    14, "the run ids match but the plan digest differs") and left the failing bundle at
    --bundle. --scenario checks the shards, as verify's does: refused before anything is
    written, naming the shard and the setting."""
    paths = _two_shards(tmp_path, plan, demo, keys[0])
    other = tmp_path / "other.yaml"
    other.write_text(demo[2].read_text().replace("  fail: 0.10", "  fail: 0.30"))
    out = tmp_path / "all.copeca"
    assert main(["merge", *paths, "--bundle", str(out), "--key", str(keys[0]),
                 "--scenario", str(other), "--corpus", str(demo[2].parents[1])]) == 14
    err = capsys.readouterr().err
    assert f"{paths[0]}: against scenario 'demo'" in err
    assert "threshold fail 0.3 (the bundle ran with 0.1)" in err
    assert "plan digest" not in err
    assert not out.exists() and sorted(p.name for p in tmp_path.iterdir() if
                                       p.name.startswith((".", "all"))) == []


def test_merge_never_launders_a_signature(
        tmp_path: Path, plan: RunPlan, demo, keys, capsys: pytest.CaptureFixture[str]) -> None:  # type: ignore[no-untyped-def]
    """`merge --key` trusts only shards its key's public half signed: a shard that is
    unsigned, or signed by another key, is refused; `--allow-unsigned` merges them and the
    merged bundle says so in its signed summary and its report."""
    other = tmp_path / "other"
    assert main(["keygen", "--out", str(other)]) == 0
    signers = {"own": load_signing_key(keys[0], {}), "none": None,
               "forged": load_signing_key(other / "copeca-signing.key", {})}
    paths = {}
    for i, who in ((1, "own"), (2, "own"), (3, "none"), (4, "forged")):
        shard = shard_plan(plan, Shard(index=min(i, 2), count=2))
        out = tmp_path / f"s{i}-{who}.copeca"
        write_bundle(contents_for(shard, demo[2]), out, signers[who], Scrubber())
        paths[(i, who)] = str(out)
    own1, own2 = paths[(1, "own")], paths[(2, "own")]
    unsigned2, forged2 = paths[(3, "none")], paths[(4, "forged")]
    out = str(tmp_path / "m.copeca")
    assert main(["merge", own1, unsigned2, "--out", out, "--key", str(keys[0])]) == 13
    assert main(["merge", own1, forged2, "--out", out, "--key", str(keys[0])]) == 12
    assert main(["merge", own1, own2, "--out", out]) == 13  # nothing to trust them by
    assert "--allow-unsigned" in capsys.readouterr().err
    assert main(["merge", own1, own2, "--out", own1, "--key", str(keys[0])]) == 2
    # --allow-unsigned still wants one signer (or none) across the shards
    assert main(["merge", own1, forged2, "--out", out, "--allow-unsigned"]) == 12
    forged1 = str(tmp_path / "f1.copeca")
    write_bundle(contents_for(shard_plan(plan, Shard(index=1, count=2)), demo[2]),
                 Path(forged1), signers["forged"], Scrubber())
    assert main(["merge", forged1, forged2, "--out", out, "--key", str(keys[0])]) == 12
    assert main(["merge", forged1, forged2, "--out", out, "--key", str(keys[0]),
                 "--allow-unsigned"]) == 0
    import json
    import zipfile
    with zipfile.ZipFile(out) as merged:
        report = json.loads(merged.read("report.json"))
        statement = json.loads(merged.read("statement.json"))
    assert any("--allow-unsigned" in w for w in report["warnings"])
    assert "--allow-unsigned" in statement["predicate"]["summary"]["extra"]["merge_notes"][0]
    assert main(["merge", own1, own2, "--out", out, "--key", str(keys[0])]) == 0


def test_analyze_of_a_bundle_is_the_report_of_its_records_with_its_scenario(
        tmp_path: Path, plan: RunPlan, demo, keys, capsys: pytest.CaptureFixture[str]) -> None:  # type: ignore[no-untyped-def]
    """`analyze B.copeca` verifies the bundle and reports its records with the scenario it
    ran (its seed and thresholds): the report of those records and that scenario."""
    from copeca_action.bundle import verify_bundle
    from copeca_action.records import write_records

    path = bundle(tmp_path, plan, demo, keys[0])
    results = tmp_path / "alone" / "results.jsonl"
    results.parent.mkdir()
    write_records(results, verify_bundle(path).records)
    for fmt in ("md", "json"):
        assert main(["analyze", str(path), "--format", fmt, "--resamples", "200"]) == 0
        from_bundle = capsys.readouterr().out
        assert main(["analyze", str(results), "--scenario", str(demo[2]), "--format", fmt,
                     "--resamples", "200"]) == 0
        assert from_bundle == capsys.readouterr().out
    assert main(["analyze", str(path), "--format", "html", "--out", str(tmp_path / "r.html"),
                 "--resamples", "200"]) == 0
    page = (tmp_path / "r.html").read_text()
    assert keys[2] in page  # the signer, from the verified bundle
    tampered = rewrite(path, tmp_path / "t.copeca", {"report.md": b"# better\n"})
    assert main(["analyze", str(tampered)]) == 11
    assert "changed: report.md" in capsys.readouterr().err


def test_analyze_of_a_damaged_bundle_fails_as_verify_does(
        tmp_path: Path, plan: RunPlan, demo, keys, capsys: pytest.CaptureFixture[str]) -> None:  # type: ignore[no-untyped-def]
    """An empty (a failed download), truncated or prefixed .copeca file is a damaged bundle,
    not a results file: analyze used to read it as JSONL ("not JSON" at line 1, exit 2) and
    an empty one as no records (a "skipped" report, exit 0, so `--gate` passed)."""
    good = bundle(tmp_path, plan, demo, keys[0]).read_bytes()
    damaged = {"empty.copeca": (b"", 10), "truncated.copeca": (good[:len(good) // 2], 10),
               "prefixed.copeca": (b"#!/bin/sh\nexit 0\n" + good, 11),
               "truncated.zip": (good[:len(good) // 2], 10)}
    for name, (data, code) in damaged.items():
        path = tmp_path / name
        path.write_bytes(data)
        assert main(["analyze", str(path), "--gate"]) == code, name
        captured = capsys.readouterr()
        assert not captured.out and "Traceback" not in captured.err, name
        assert str(path) in captured.err, name


def test_a_signed_report_its_records_do_not_give_fails_verify_and_analyze(
        tmp_path: Path, plan: RunPlan, demo, keys, capsys: pytest.CaptureFixture[str]) -> None:  # type: ignore[no-untyped-def]
    """Signed by the key holder, every hash right, but report.json, report.md or the
    signed summary is not what the records give: verify printed OK with the signed
    verdict, and analyze quietly printed other numbers. Both now recompute the report and
    fail (`report`, exit 15), naming what differs; a bundle whose report is its records'
    passes and says so."""
    import dataclasses

    from bundle_support import report_for

    key = load_signing_key(keys[0], {})
    honest = contents_for(plan, demo[2])
    assert honest.report is not None
    path = tmp_path / "honest.copeca"
    write_bundle(honest, path, key, Scrubber())
    assert main(["verify", str(path), "--pubkey", str(keys[1])]) == 0
    assert ("report: recomputed from the records: report.json, report.md, the signed summary "
            "match") in capsys.readouterr().out
    files = dict(honest.report.files)
    summary = honest.report.summary
    lies = {
        "report.json": (dataclasses.replace(honest.report, files={
            **files, "report.json": files["report.json"].replace(
                b'"verdict": "inconclusive"', b'"verdict": "improvement"', 1)}),
            "report.json: differs from line"),
        "report.md": (dataclasses.replace(honest.report, files={
            **files, "report.md": files["report.md"] + b"\nAll good.\n"}),
            "report.md: differs from line"),
        "summary": (dataclasses.replace(honest.report, summary=summary.model_copy(
            update={"verdict": "improvement"})),
            "the signed summary's verdict is \"improvement\", the records give "
            "\"inconclusive\""),
        "thresholds": (report_for(honest.records, demo[2], {"alert": 0.05, "fail": 3.0}),
                       "report.json: differs from line"),
    }
    assert b'"verdict": "inconclusive"' in files["report.json"]
    for name, (lie, says) in lies.items():
        forged = tmp_path / f"{name}.copeca"
        write_bundle(dataclasses.replace(honest, report=lie), forged, key, Scrubber())
        for argv in (["verify", str(forged), "--pubkey", str(keys[1])],
                     ["analyze", str(forged), "--format", "json"]):
            assert main(argv) == 15, (name, argv[0])
            captured = capsys.readouterr()
            assert says in captured.err and not captured.out, (name, argv[0])
            assert str(forged) in captured.err
    # a changed member is named as that, before the report is compared
    tampered = rewrite(tmp_path / "summary.copeca", tmp_path / "t.copeca",
                       {"report.md": b"# better\n"})
    assert main(["verify", str(tampered)]) == 11


def test_a_bundle_of_another_harness_version_has_its_report_recomputed(
        tmp_path: Path, plan: RunPlan, demo, keys, capsys: pytest.CaptureFixture[str]) -> None:  # type: ignore[no-untyped-def]
    """Another version's report was not recomputed (verify passed with a note, so a report
    its records do not give passed too): it is now, and passes when this build gives it
    too, naming both builds (one that differs: tests/unit/bundle/test_build_identity.py)."""
    import dataclasses

    contents = contents_for(plan, demo[2])
    older = dataclasses.replace(contents, environment=contents.environment.model_copy(
        update={"harness_version": "0.0.9"}))
    path = tmp_path / "older.copeca"
    write_bundle(older, path, load_signing_key(keys[0], {}), Scrubber())
    assert main(["verify", str(path)]) == 0
    assert ("report: recomputed from the records: report.json, report.md, the signed summary "
            "match (made by copeca-action 0.0.9 (report code ") in capsys.readouterr().out
    assert main(["analyze", str(path), "--format", "json"]) == 0
    captured = capsys.readouterr()
    assert not captured.err and captured.out.startswith("{")


def test_verify_says_the_level_and_the_look_of_the_signed_interval(
        tmp_path: Path, plan: RunPlan, demo, capsys: pytest.CaptureFixture[str]) -> None:  # type: ignore[no-untyped-def]
    """An adaptive bundle's signed interval is at its look's level (98.75% at look 1 of 3):
    `verify` printed it bare, as if it were 95%. It names the level and the look (alpha,
    spent), as report.md and the comment do; an ordinary bundle's line names its 95%."""
    from copeca_action.bundle import verify_bundle

    scenario = tmp_path / "adaptive.yaml"
    scenario.write_text(demo[2].read_text().replace(
        "repetitions: 2\n", "repetitions: 2\nadaptive: {min_repetitions: 2, max_repetitions: 4}\n"))
    path = tmp_path / "b.copeca"
    write_bundle(contents_for(plan, scenario), path, None, Scrubber())
    summary = verify_bundle(path).statement.predicate.summary
    assert summary is not None and summary.extra["look"]["look"] == 1
    level = summary.extra["level"]
    assert main(["verify", str(path)]) == 0
    out = capsys.readouterr().out
    assert f"({level * 100:.4g}% interval)" in out and level == pytest.approx(0.9875)
    assert ("adaptive sampling, look 1 of 3 (2 repetitions): judged at alpha 0.0125 "
            "(98.75% intervals); 0.0125 of the overall alpha 0.05 spent") in out
    real = tmp_path / "real.copeca"
    write_bundle(contents_for(plan, demo[2]), real, None, Scrubber())
    assert main(["verify", str(real)]) == 0
    out = capsys.readouterr().out
    assert "(95% interval)" in out and "adaptive sampling" not in out


def test_verify_writes_an_unbounded_interval_as_the_report_does(
        tmp_path: Path, plan: RunPlan, demo, capsys: pytest.CaptureFixture[str]) -> None:  # type: ignore[no-untyped-def]
    """The tool arm right on one task only: a resample without it has nothing right, so the
    signed interval's upper side is unbounded. verify printed it "+inf%" (Python's float
    format) where report.md writes +∞."""
    from bundle_support import record_for

    from copeca_action.bundle import verify_bundle

    first = next(r.task_id for r in plan.runs if not r.control)
    records = [record_for(plan, i, "a", correct=r.arm != "codesearch" or r.task_id == first)
               for i, r in enumerate(plan.runs)]
    path = tmp_path / "b.copeca"
    write_bundle(contents_for(plan, demo[2], records=records), path, None, Scrubber())
    summary = verify_bundle(path).statement.predicate.summary
    assert summary is not None and summary.delta_ci is not None
    assert summary.delta_ci[1] == float("inf")
    assert main(["verify", str(path)]) == 0
    out = capsys.readouterr().out
    assert "inf%" not in out and ", +∞]" in out, out
