from __future__ import annotations

import hashlib
import json
import stat
import zipfile
from pathlib import Path

import pytest
from bundle_support import Build, contents_for
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from zipedit import read_all

from copeca_action._util.scrub import Scrubber
from copeca_action.bundle import collect_environment, verify_bundle, write_bundle
from copeca_action.errors import VerificationError
from copeca_action.plan import RunPlan


def test_a_fresh_bundle_verifies_with_its_key(build: Build, key: Ed25519PrivateKey,
                                               plan: RunPlan) -> None:
    result = verify_bundle(build(), key.public_key())
    assert result.signed and result.pinned
    assert len(result.records) == len(plan.runs)
    assert result.statement.predicate.plan_digest == plan.plan_digest
    assert result.statement.predicate.summary is not None
    assert result.statement.predicate.summary.verdict == "inconclusive"


def test_the_statement_is_an_in_toto_v1_statement_over_the_manifest(build: Build) -> None:
    members = read_all(build())
    statement = json.loads(members["statement.json"])
    assert statement["_type"] == "https://in-toto.io/Statement/v1"
    assert statement["subject"] == [{"name": "manifest.json", "digest": {
        "sha256": hashlib.sha256(members["manifest.json"]).hexdigest()}}]
    assert statement["predicateType"].startswith("https://")
    predicate = statement["predicate"]
    for field in ("scenario", "plan_digest", "seed", "thresholds", "environment", "summary",
                  "signer"):
        assert field in predicate
    envelope = json.loads(members["statement.dsse.json"])
    assert envelope["payloadType"] == "application/vnd.in-toto+json"
    assert set(envelope["signatures"][0]) == {"keyid", "sig"}


def test_the_manifest_lists_every_other_member_with_size_and_hash(build: Build) -> None:
    members = read_all(build())
    manifest = json.loads(members["manifest.json"])
    listed = {f["path"]: f for f in manifest["files"]}
    assert set(listed) == set(members) - {"manifest.json", "statement.json",
                                          "statement.dsse.json"}
    for path, entry in listed.items():
        assert entry["size"] == len(members[path])
        assert entry["sha256"] == hashlib.sha256(members[path]).hexdigest()
    assert {"scenario.yaml", "plan.json", "results.jsonl", "report.json",
            "report.md"} <= set(listed)
    assert any(p.endswith("/transcript.jsonl") for p in listed)


def test_two_builds_of_the_same_inputs_are_the_same_bytes(build: Build) -> None:
    first, second = build("one.copeca"), build("two.copeca")
    assert first.read_bytes() == second.read_bytes()
    with zipfile.ZipFile(first) as archive:
        infos = archive.infolist()
    names = [i.filename for i in infos]
    assert names[-3:] == ["manifest.json", "statement.json", "statement.dsse.json"]
    assert names[:-3] == sorted(names[:-3])
    assert {i.date_time for i in infos} == {(1980, 1, 1, 0, 0, 0)}
    assert {stat.S_IMODE(i.external_attr >> 16) for i in infos} == {0o644}


def test_run_files_given_in_another_order_give_the_same_bytes(
        tmp_path: Path, plan: RunPlan, demo, key: Ed25519PrivateKey) -> None:  # type: ignore[no-untyped-def]
    contents = contents_for(plan, demo[2])
    reordered = contents_for(plan, demo[2])
    files = {k: dict(reversed(v.items())) for k, v in reversed(reordered.run_files.items())}
    object.__setattr__(reordered, "run_files", files)
    write_bundle(contents, tmp_path / "a.copeca", key, Scrubber())
    write_bundle(reordered, tmp_path / "b.copeca", key, Scrubber())
    assert (tmp_path / "a.copeca").read_bytes() == (tmp_path / "b.copeca").read_bytes()


def test_an_unsigned_bundle_says_so_and_fails_when_a_key_is_required(
        build: Build, key: Ed25519PrivateKey) -> None:
    path = build(signed=False)
    result = verify_bundle(path)
    assert not result.signed and result.keyid is None
    assert result.statement.predicate.signer is None
    with pytest.raises(VerificationError, match="unsigned") as info:
        verify_bundle(path, key.public_key())
    assert info.value.kind == "unsigned" and info.value.exit_code == 13


def test_a_bundle_signed_by_another_key_fails_against_the_pinned_key(
        build: Build, key: Ed25519PrivateKey) -> None:
    path = build(signing_key=Ed25519PrivateKey.generate())
    assert verify_bundle(path).signed  # self-consistent, but not ours
    with pytest.raises(VerificationError, match="no signature by key") as info:
        verify_bundle(path, key.public_key())
    assert info.value.kind == "signature"


def test_environment_comes_from_github_actions_variables(plan: RunPlan) -> None:
    env = collect_environment(image_digest=None, env={
        "GITHUB_RUN_ID": "42", "GITHUB_REPOSITORY": "o/r", "GITHUB_SHA": "b" * 40,
        "GITHUB_SERVER_URL": "https://github.com", "GITHUB_RUN_ATTEMPT": "2",
        "COPECA_IMAGE_DIGEST": "sha256:" + "c" * 64})
    assert env.workflow_run == "https://github.com/o/r/actions/runs/42/attempts/2"
    assert env.repo_commit == "b" * 40 and env.image_digest == "sha256:" + "c" * 64
    assert collect_environment(env={}).workflow_run is None


def test_prefetch_keeps_order_reraises_errors_and_stops_early() -> None:
    from copeca_action.bundle._write import prefetch

    assert list(prefetch(iter([b"a", b"b", b"c"]))) == [b"a", b"b", b"c"]

    def failing():  # type: ignore[no-untyped-def]
        yield b"ok"
        raise VerificationError("tampered", "changed after it was verified")

    with pytest.raises(VerificationError, match="changed after"):
        list(prefetch(failing()))
    produced = []

    def endless():  # type: ignore[no-untyped-def]
        n = 0
        while True:
            produced.append(n)
            n += 1
            yield b"x"

    stream = prefetch(endless())
    assert next(stream) == b"x"
    stream.close()  # the worker stops instead of producing forever
    assert len(produced) < 10


def test_a_large_file_source_streams_through_scrubbing(
        tmp_path: Path, plan: RunPlan, demo, key: Ed25519PrivateKey) -> None:  # type: ignore[no-untyped-def]
    contents = contents_for(plan, demo[2])
    big = tmp_path / "big.jsonl"
    line = b'{"out": "' + b"z" * 1000 + b'"}\n'
    big.write_bytes(line * 9000 + b'{"leak": "ghp_' + b"Q1w2E3r4T5y6" * 3 + b'"}\n')
    run = plan.runs[0].run_id
    files = {k: dict(v) for k, v in contents.run_files.items()}
    files[run]["transcript.jsonl"] = big  # type: ignore[assignment]
    object.__setattr__(contents, "run_files", files)
    manifest = write_bundle(contents, tmp_path / "big.copeca", key, Scrubber())
    assert manifest.scrubbed == {"github_token": 1}
    data = read_all(tmp_path / "big.copeca")[f"runs/{run}/transcript.jsonl"]
    assert data == line * 9000 + b'{"leak": "[REDACTED:github_token]"}\n'
    assert verify_bundle(tmp_path / "big.copeca", key.public_key()).bytes_hashed > 9_000_000


def test_a_bundle_path_that_is_a_folder_is_named_not_its_temporary_file(
        tmp_path: Path, plan: RunPlan, demo) -> None:  # type: ignore[no-untyped-def]
    """The bundle is written under a temporary name beside `out`, then renamed over it: a
    folder at `out` failed the rename, and the error named the temporary file
    (".out.partial: Is a directory"). It is refused first, naming `out`."""
    from copeca_action.errors import BundleError

    folder = tmp_path / "out"
    folder.mkdir()
    with pytest.raises(BundleError) as info:
        write_bundle(contents_for(plan, demo[2]), folder, None, Scrubber())
    assert str(info.value).startswith(f"{folder}: is a folder, expected the bundle file")
    assert ".partial" not in str(info.value)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]


def test_a_bundle_that_fails_its_check_is_never_left_at_the_output_path(
        tmp_path: Path, plan: RunPlan, demo, key: Ed25519PrivateKey) -> None:  # type: ignore[no-untyped-def]
    """`check` (the writer's own verification) runs before the file takes its name: when it
    fails, what was at the path stays, no temporary file is left, and the error names the
    path. (merge wrote the bundle, then its final check failed with exit 14 and the failing
    bundle stayed at --bundle.)"""
    out = tmp_path / "b.copeca"
    write_bundle(contents_for(plan, demo[2]), out, key, Scrubber())
    before = out.read_bytes()
    other = Ed25519PrivateKey.generate().public_key()
    with pytest.raises(VerificationError) as info:
        write_bundle(contents_for(plan, demo[2], batch="b"), out, key, Scrubber(),
                     check=lambda written: verify_bundle(written, other))
    assert info.value.kind == "signature"
    assert str(info.value).startswith(f"{out}: ") and ".partial" not in str(info.value)
    assert f"{out}: not written, as it does not verify" in str(info.value)
    assert out.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["b.copeca"]
    write_bundle(contents_for(plan, demo[2], batch="b"), out, key, Scrubber(),
                 check=lambda written: verify_bundle(written, key.public_key()))
    assert out.read_bytes() != before
