"""An output folder's earlier attempts (OUT/attempts/<run id>/<attempt>-<started>/: a retried
infra error, an attempt the harness died during) go into the bundle beside the runs, each
with its record (a superseded line of results.jsonl) and its output, scrubbed; a file too
large for a verifier is left out and named; verify checks each folder's record against
results.jsonl and says how the spend outside the statistics is backed."""

from __future__ import annotations

import datetime as dt
import json
import os
from pathlib import Path

import pytest
from bundle_support import record_for
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from zipedit import read_all

from copeca_action._util.scrub import Scrubber
from copeca_action.bundle import contents_from_output, verify_bundle, write_bundle
from copeca_action.bundle._verify import check_attempts
from copeca_action.bundle._zipread import Limits
from copeca_action.errors import VerificationError
from copeca_action.plan import RunPlan
from copeca_action.records import RunRecord, write_records

STARTED = dt.datetime(2026, 11, 27, 17, 0, tzinfo=dt.UTC)
SECRET = "sk-ant-api03-" + "x" * 40


def _output(tmp_path: Path, plan: RunPlan) -> tuple[Path, list[RunRecord], RunRecord]:
    """A folder whose run 0 was retried after an endpoint failure that spent $0.03 (kept in
    OUT/attempts/), with an unrecorded attempt beside it (no record.json: not taken)."""
    out = tmp_path / "out"
    final = [record_for(plan, i) for i in range(len(plan.runs))]
    retried = record_for(plan, 0, outcome="infra_error", correct=False, cost_usd=0.03,
                         attempt=1, started_at=STARTED, error="endpoint failure: HTTP 529")
    records = [retried, *final]
    write_records((out.mkdir() or out) / "results.jsonl", records)
    for record in final:
        (out / "runs" / record.run_id).mkdir(parents=True)
        (out / "runs" / record.run_id / "stdout.jsonl").write_text("{}\n")
    kept = out / "attempts" / retried.run_id / "1-20261127T170000000000Z"
    (kept / "home").mkdir(parents=True)
    (kept / "record.json").write_text(retried.model_dump_json(indent=2))
    (kept / "stdout.jsonl").write_text(json.dumps({"type": "result", "key": SECRET}) + "\n")
    (kept / "home" / "session").write_text("agent state")
    lost = out / "attempts" / retried.run_id / "unrecorded-20261127T170500000000Z"
    lost.mkdir()
    (lost / "stdout.jsonl").write_text("{}\n")
    return out, records, retried


def test_an_earlier_attempt_is_bundled_scrubbed_and_verified(
        tmp_path: Path, plan: RunPlan, demo, key: Ed25519PrivateKey,  # type: ignore[no-untyped-def]
        monkeypatch: pytest.MonkeyPatch) -> None:
    out, _, retried = _output(tmp_path, plan)
    monkeypatch.setenv("ANTHROPIC_API_KEY", SECRET)
    bundle = tmp_path / "b.copeca"
    write_bundle(contents_from_output(out, demo[2], plan, {"fail": 0.1}), bundle, key,
                 Scrubber.from_env())
    members = read_all(bundle)
    folder = f"attempts/{retried.run_id}/1-20261127T170000000000Z"
    assert sorted(m for m in members if m.startswith("attempts/")) == [
        f"{folder}/record.json", f"{folder}/stdout.jsonl"]  # no agent state, no unrecorded
    assert RunRecord.model_validate_json(members[f"{folder}/record.json"]) == retried
    assert SECRET.encode() not in bundle.read_bytes()
    result = verify_bundle(bundle, key.public_key(), demo[0], demo[1])
    assert result.attempts == {f"{retried.run_id}/1-20261127T170000000000Z": retried}
    assert result.attempts_checked == (
        "1 earlier attempt(s) spent $0.0300 outside the statistics; 1 of them with their "
        "folder in attempts/ (record, output)")


def test_a_file_too_large_for_a_verifier_is_left_out_and_named(
        tmp_path: Path, plan: RunPlan, demo, key: Ed25519PrivateKey) -> None:  # type: ignore[no-untyped-def]
    out, _, retried = _output(tmp_path, plan)
    folder = out / "attempts" / retried.run_id / "1-20261127T170000000000Z"
    cap = Limits().max_entry_size
    with (folder / "stderr.txt").open("wb") as handle:  # sparse: nothing is written
        os.truncate(handle.fileno(), cap + 1)
    bundle = tmp_path / "b.copeca"
    write_bundle(contents_from_output(out, demo[2], plan, {"fail": 0.1}), bundle, key,
                 Scrubber())
    members = read_all(bundle)
    name = f"attempts/{retried.run_id}/1-20261127T170000000000Z"
    assert f"{name}/stderr.txt" not in members and f"{name}/stdout.jsonl" in members
    assert json.loads(members[f"{name}/omitted.json"]) == [{
        "file": "stderr.txt", "size": cap + 1,
        "why": f"larger than the {cap} bytes a verifier accepts per file"}]
    assert verify_bundle(bundle, key.public_key()).attempts_checked.startswith(
        "1 earlier attempt(s) spent $0.0300")


def test_an_attempt_folder_that_is_no_superseded_line_is_incomplete(
        tmp_path: Path, plan: RunPlan) -> None:
    _, records, retried = _output(tmp_path, plan)
    key = f"{retried.run_id}/1-20261127T170000000000Z"
    changed = retried.model_copy(update={"cost_usd": 0.001})
    with pytest.raises(VerificationError) as info:
        check_attempts(records, {key: changed})
    assert info.value.kind == "incomplete"
    assert (f"attempts/{key}/record.json is no earlier attempt of run {retried.run_id} in "
            "results.jsonl") in str(info.value)
    final = records[1]  # a counted run's record is no earlier attempt either
    with pytest.raises(VerificationError, match="no earlier attempt"):
        check_attempts(records, {f"{final.run_id}/1-x": final})
    with pytest.raises(VerificationError, match="is in another folder of attempts/ too"):
        check_attempts(records, {key: retried, f"{retried.run_id}/copy": retried})
    # the same line logged twice (two attempts alike to the field) backs two folders, once
    said = check_attempts([retried, *records], {key: retried, f"{retried.run_id}/copy": retried})
    assert said.startswith("2 earlier attempt(s) spent $0.0600 outside the statistics; 2 of")
    with pytest.raises(VerificationError, match="is in another folder of attempts/ too"):
        check_attempts([retried, *records], {key: retried, f"{retried.run_id}/b": retried,
                                             f"{retried.run_id}/c": retried})


def test_an_earlier_attempt_without_its_folder_is_named_not_refused(
        tmp_path: Path, plan: RunPlan) -> None:
    """A retried attempt whose folder an older copeca-action cleared: its line and spend
    stand; verify says its evidence is not in the bundle."""
    _, records, retried = _output(tmp_path, plan)
    said = check_attempts(records, {})
    assert said == ("1 earlier attempt(s) spent $0.0300 outside the statistics; 0 of them "
                    "with their folder in attempts/ (record, output); 1 without one (an "
                    "older copeca-action cleared a retried attempt's folder, or it was "
                    f"removed by hand): {retried.run_id} attempt 1")


def test_a_merge_carries_each_shards_earlier_attempts(
        tmp_path: Path, plan: RunPlan, demo, key: Ed25519PrivateKey) -> None:  # type: ignore[no-untyped-def]
    """A shard's earlier attempt (its record and output) is in the merged bundle, byte for
    byte: its spend stays checkable there."""
    from bundle_support import contents_for, run_files

    from copeca_action.bundle import merge_bundles
    from copeca_action.bundle._write import KeptAttempt
    from copeca_action.plan import Shard, shard_plan

    paths = []
    kept_key = ""
    for i in (1, 2):
        part = shard_plan(plan, Shard(index=i, count=2))
        final = [record_for(part, j) for j in range(len(part.runs))]
        records = final
        attempts = {}
        if i == 2:
            retried = record_for(part, 0, outcome="infra_error", correct=False,
                                 cost_usd=0.03, attempt=1, started_at=STARTED)
            records = [retried, *final]
            kept_key = f"{retried.run_id}/1-20261127T170000000000Z"
            attempts = {kept_key: KeptAttempt(record=retried,
                                              files={"stdout.jsonl": b'{"spent": 0.03}\n'})}
        contents = contents_for(part, demo[2], records=records,
                                files={r.run_id: run_files(r) for r in final})
        contents = type(contents)(**{**contents.__dict__, "attempts": attempts})
        paths.append(tmp_path / f"shard{i}.copeca")
        write_bundle(contents, paths[-1], key, Scrubber())
    out = tmp_path / "all.copeca"
    merge_bundles(paths, out, key, key.public_key(), scrubber=Scrubber())
    merged, shard = read_all(out), read_all(paths[1])
    names = [n for n in shard if n.startswith("attempts/")]
    assert names == [f"attempts/{kept_key}/record.json", f"attempts/{kept_key}/stdout.jsonl"]
    assert {n: merged[n] for n in names} == {n: shard[n] for n in names}
    assert verify_bundle(out, key.public_key()).attempts_checked.startswith(
        "1 earlier attempt(s) spent $0.0300 outside the statistics; 1 of them with")


def test_attempt_folders_a_maker_crafted_are_refused(
        tmp_path: Path, plan: RunPlan, demo) -> None:  # type: ignore[no-untyped-def]
    """Signed by the maker's own key (their own writer, which checks nothing), so only what
    verify checks stands between them and a pass: an attempt folder when results.jsonl
    supersedes no line, one for a run the plan does not hold, one whose record says $0
    where the superseded line says $0.03 (or the reverse), a record under another run's
    folder, two folders of one line, and a folder name that climbs out."""
    import dataclasses

    from bundle_support import contents_for
    from zipedit import resign, rewrite_canonical

    from copeca_action.bundle._write import KeptAttempt
    from copeca_action.records import write_records

    final = [record_for(plan, i) for i in range(len(plan.runs))]
    retried = record_for(plan, 0, outcome="infra_error", correct=False, cost_usd=0.03,
                         attempt=1, started_at=STARTED)
    maker = Ed25519PrivateKey.generate()
    good = tmp_path / "good.copeca"
    write_bundle(dataclasses.replace(contents_for(plan, demo[2], records=final),
                                     records=[retried, *final], attempts={
        f"{retried.run_id}/1-x": KeptAttempt(record=retried)}), good, maker, Scrubber())
    assert verify_bundle(good).attempts_checked.startswith("1 earlier attempt(s) spent $0.0300")

    def results(records: list[RunRecord]) -> bytes:
        write_records(tmp_path / "r.jsonl", records)
        return (tmp_path / "r.jsonl").read_bytes()

    def record(r: RunRecord) -> bytes:
        return r.model_dump_json(indent=1).encode()

    folder = f"attempts/{retried.run_id}/1-x"
    other = final[1].run_id
    cases: dict[str, tuple[dict[str, bytes | None], str]] = {
        "no superseded line": ({"results.jsonl": results(final)}, folder),
        "a run not in the plan": ({f"{folder}/record.json": None,
                                   f"attempts/{'0' * 16}/1-x/record.json": record(
                                       retried.model_copy(update={"run_id": "0" * 16}))},
                                  f"attempts/{'0' * 16}/1-x"),
        "spent less than its line": ({f"{folder}/record.json": record(
            retried.model_copy(update={"cost_usd": 0.0}))}, folder),
        "spent more than its line": ({"results.jsonl": results(
            [retried.model_copy(update={"cost_usd": 0.0}), *final])}, folder),
        "under another run's folder": ({f"{folder}/record.json": None,
                                        f"attempts/{other}/1-x/record.json": record(retried)},
                                       f"attempts/{other}/1-x"),
    }
    for name, (edit, named) in cases.items():
        path = resign(good, tmp_path / f"{name}.copeca", edit, maker)
        with pytest.raises(VerificationError) as info:
            verify_bundle(path)
        assert info.value.kind == "incomplete", name
        assert f"{named}/record.json is no earlier attempt of run" in str(info.value), name
    twice = resign(good, tmp_path / "twice.copeca", {
        f"attempts/{retried.run_id}/2-y/record.json": record(retried)}, maker)
    with pytest.raises(VerificationError, match="is in another folder of attempts/ too"):
        verify_bundle(twice)
    members = read_all(good)
    members[f"attempts/{retried.run_id}/../1-x/record.json"] = members.pop(
        f"{folder}/record.json")
    with pytest.raises(VerificationError) as info:
        verify_bundle(rewrite_canonical(good, tmp_path / "climb.copeca", members))
    assert info.value.kind == "corrupt" and "climbs out" in str(info.value)
