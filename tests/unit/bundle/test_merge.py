"""Shards merge into the bundle a single machine would have made, or are refused."""

from __future__ import annotations

from pathlib import Path

import pytest
from bundle_support import Build
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from zipedit import read_all

from copeca_action._util.scrub import Scrubber
from copeca_action.bundle import RenderedReport, Summary, merge_bundles, verify_bundle
from copeca_action.errors import VerificationError
from copeca_action.plan import RunPlan, Shard, shard_plan


def shards(build: Build, plan: RunPlan, n: int = 3, batch: str = "a") -> list[Path]:
    return [build(f"shard{i}.copeca", batch=batch,
                  the_plan=shard_plan(plan, Shard(index=i, count=n))) for i in range(1, n + 1)]


def merge(paths: list[Path], out: Path, key: Ed25519PrivateKey, **kw):  # type: ignore[no-untyped-def]
    return merge_bundles(paths, out, key, key.public_key(), scrubber=Scrubber(), **kw)


def test_merged_shards_hold_the_whole_plan_in_its_order(
        build: Build, plan: RunPlan, key: Ed25519PrivateKey, tmp_path: Path) -> None:
    out = tmp_path / "all.copeca"
    merge(shards(build, plan), out, key)
    result = verify_bundle(out, key.public_key())
    assert result.plan.run_ids() == plan.run_ids() and result.plan.shard is None
    assert result.statement.predicate.shard is None
    merged, whole = read_all(out), read_all(build("whole.copeca"))
    runs = {n: d for n, d in whole.items() if n.startswith("runs/")}
    assert {n: merged[n] for n in runs} == runs  # every run's files, byte for byte
    assert result.statement.predicate.summary is None  # no report stage given


def test_merge_computes_the_report_with_the_report_stage(
        build: Build, plan: RunPlan, key: Ed25519PrivateKey, tmp_path: Path) -> None:
    seen: list[tuple[int, int]] = []

    def report(p: RunPlan, records: list, redactions: int) -> RenderedReport:  # type: ignore[type-arg]
        seen.append((len(records), redactions))
        return RenderedReport(Summary(verdict="improvement", delta=-0.2),
                              {"report.md": b"# merged\n"})

    out = tmp_path / "all.copeca"
    merge(shards(build, plan), out, key, report=report)
    assert seen == [(len(plan.runs), 0)]  # the shards' summaries name no redaction
    summary = verify_bundle(out).statement.predicate.summary
    assert summary is not None and summary.verdict == "improvement"
    assert read_all(out)["report.md"] == b"# merged\n"


def test_a_missing_shard_is_named(build: Build, plan: RunPlan, key: Ed25519PrivateKey,
                                  tmp_path: Path, demo) -> None:  # type: ignore[no-untyped-def]
    paths = shards(build, plan)
    with pytest.raises(VerificationError, match=r"shard\(s\) 2/3 absent") as info:
        merge([paths[0], paths[2]], tmp_path / "all.copeca", key)
    assert info.value.kind == "incomplete"
    missing = shard_plan(plan, Shard(index=2, count=3)).runs[0]
    with pytest.raises(VerificationError, match=missing.run_id):
        merge([paths[0], paths[2]], tmp_path / "all.copeca", key, scenario=demo[0],
              tasks=demo[1])
    assert not (tmp_path / "all.copeca").exists()


def test_overlapping_shards_are_refused(build: Build, plan: RunPlan, key: Ed25519PrivateKey,
                                        tmp_path: Path) -> None:
    paths = shards(build, plan)
    again = build("again.copeca", the_plan=shard_plan(plan, Shard(index=1, count=3)))
    with pytest.raises(VerificationError, match="in more than one shard"):
        merge([*paths, again], tmp_path / "all.copeca", key)


def test_shards_of_different_plans_are_refused(
        build: Build, plan: RunPlan, key: Ed25519PrivateKey, tmp_path: Path, demo) -> None:  # type: ignore[no-untyped-def]
    from copeca_action.plan import build_plan
    other = build_plan(demo[0], demo[1], repetitions=1)
    a = build("a.copeca", the_plan=shard_plan(plan, Shard(index=1, count=2)))
    b = build("b.copeca", the_plan=shard_plan(other, Shard(index=2, count=2)))
    with pytest.raises(VerificationError, match="another plan"):
        merge([a, b], tmp_path / "all.copeca", key)


def test_a_tampered_shard_stops_the_merge(build: Build, plan: RunPlan,
                                          key: Ed25519PrivateKey, tmp_path: Path) -> None:
    paths = shards(build, plan)
    raw = bytearray(paths[1].read_bytes())
    at = raw.find(b"answer for")
    raw[at] ^= 1
    paths[1].write_bytes(bytes(raw))
    with pytest.raises(VerificationError, match="changed: runs/") as info:
        merge(paths, tmp_path / "all.copeca", key)
    assert info.value.kind == "tampered"


def test_shards_signed_by_different_keys_need_a_pinned_key(
        build: Build, plan: RunPlan, key: Ed25519PrivateKey, tmp_path: Path) -> None:
    a = build("a.copeca", the_plan=shard_plan(plan, Shard(index=1, count=2)))
    b = build("b.copeca", the_plan=shard_plan(plan, Shard(index=2, count=2)),
              signing_key=Ed25519PrivateKey.generate())
    with pytest.raises(VerificationError, match="different keys"):
        merge_bundles([a, b], tmp_path / "all.copeca", key, None, scrubber=Scrubber())
    with pytest.raises(VerificationError, match="no signature by key"):
        merge([a, b], tmp_path / "all.copeca", key)


def test_shards_run_with_other_thresholds_or_seed_are_refused(
        build: Build, plan: RunPlan, key: Ed25519PrivateKey, tmp_path: Path, demo) -> None:  # type: ignore[no-untyped-def]
    """Shards of one plan and one scenario file, but one ran with another fail threshold
    (an action input) or another seed: the merge took the first shard's, so the merged
    verdict depended on the order of the shards on the command line."""
    import dataclasses

    from bundle_support import contents_for

    halves = [shard_plan(plan, Shard(index=i, count=2)) for i in (1, 2)]
    a = build("a.copeca", the_plan=halves[0])
    looser = contents_for(halves[1], demo[2])
    looser = dataclasses.replace(looser, thresholds={**looser.thresholds, "fail": 5.0})
    b = build("b.copeca", contents=looser)
    for order in ([a, b], [b, a]):
        with pytest.raises(VerificationError, match="threshold fail ") as info:
            merge(order, tmp_path / "all.copeca", key)
        assert info.value.kind == "incomplete" and str(a) in str(info.value)
    reseeded = build("c.copeca", the_plan=halves[1].model_copy(update={"seed": 999}))
    with pytest.raises(VerificationError, match="seed 999 vs "):
        merge([a, reseeded], tmp_path / "all.copeca", key)
    assert not (tmp_path / "all.copeca").exists()


@pytest.mark.parametrize("kinds", [("scripted", "real"), ("real", "dry_run"),
                                   ("scripted", "dry_run")])
def test_a_simulated_shard_is_not_merged_with_a_real_one(
        build: Build, plan: RunPlan, key: Ed25519PrivateKey, tmp_path: Path, demo,  # type: ignore[no-untyped-def]
        kinds: tuple[str, str]) -> None:
    """One shard's runs were answered by the scripted model (a demo, a dry run), the
    other's by a real API: merged, the report published real-looking numbers partly from
    the scripted model. Refused, naming both shards and what answered each; shards whose
    records say nothing (older ones) merge with either."""
    from bundle_support import contents_for, record_for

    paths = []
    for i, kind in enumerate(kinds, 1):
        half = shard_plan(plan, Shard(index=i, count=2))
        records = [record_for(half, j, endpoint=kind) for j in range(len(half.runs))]
        paths.append(build(f"{kind}{i}.copeca",
                           contents=contents_for(half, demo[2], records=records)))
    with pytest.raises(VerificationError) as info:
        merge(paths, tmp_path / "all.copeca", key)
    assert info.value.kind == "incomplete"
    assert f"{paths[0]} ran against " in str(info.value)
    assert f"{paths[1]} against " in str(info.value) and "simulated" in str(info.value)
    assert not (tmp_path / "all.copeca").exists()
    unknown = build("unknown2.copeca", the_plan=shard_plan(plan, Shard(index=2, count=2)))
    merge([paths[0], unknown], tmp_path / "all.copeca", key)


def test_a_failing_shard_is_named_by_its_path(
        build: Build, plan: RunPlan, key: Ed25519PrivateKey, tmp_path: Path) -> None:
    """Of several shards, the error names the one that failed: the checks of one bundle
    said 'statement.dsse.json: no signature by key …' or 'not a zip archive' without it."""
    paths = shards(build, plan)
    paths[1].write_bytes(paths[1].read_bytes()[:1000])
    foreign = build("foreign.copeca", the_plan=shard_plan(plan, Shard(index=3, count=3)),
                    signing_key=Ed25519PrivateKey.generate())
    for bad, paths_, kind in ((paths[1], paths, "corrupt"),
                              (foreign, [paths[0], paths[2], foreign], "signature")):
        with pytest.raises(VerificationError) as info:
            merge(paths_, tmp_path / "all.copeca", key)
        assert info.value.kind == kind
        assert str(info.value).startswith(f"{bad}: "), str(info.value)
        assert str(info.value).count(str(bad)) == 1
