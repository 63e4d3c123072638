"""Every way of altering a signed bundle is caught, with the kind and a message naming it."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest
from bundle_support import Build
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from hypothesis import given, settings
from hypothesis import strategies as st
from zipedit import read_all, rewrite, rewrite_canonical

from copeca_action._util.hashing import sha256_bytes
from copeca_action.bundle import verify_bundle
from copeca_action.bundle._sign import sign_envelope
from copeca_action.bundle._write import pretty_json
from copeca_action.errors import VerificationError
from copeca_action.plan import RunPlan


def failure(path: Path, key: Ed25519PrivateKey | None = None) -> VerificationError:
    with pytest.raises(VerificationError) as info:
        verify_bundle(path, key.public_key() if key else None)
    return info.value


def flip(data: bytes, at: int = 10) -> bytes:
    return data[:at] + bytes([data[at] ^ 1]) + data[at + 1:]


@pytest.fixture
def good(build: Build) -> Path:
    return build("good.copeca")


def test_a_changed_transcript_byte_is_tampered_and_names_the_run(
        good: Path, plan: RunPlan, key: Ed25519PrivateKey) -> None:
    run = plan.runs[3].run_id
    bad = rewrite(good, good.with_name("x.copeca"),
                  {f"runs/{run}/transcript.jsonl": flip})
    error = failure(bad, key)
    assert error.kind == "tampered" and error.exit_code == 11
    assert f"runs/{run}/transcript.jsonl (run {run})" in str(error)


def test_a_changed_record_is_tampered(good: Path, plan: RunPlan) -> None:
    run = plan.runs[0].run_id

    def flip_correct(data: bytes) -> bytes:
        record = json.loads(data)
        record["correct"] = not record["correct"]
        return json.dumps(record, indent=1).encode()

    bad = rewrite(good, good.with_name("x.copeca"), {
        f"runs/{run}/record.json": flip_correct,
        "results.jsonl": lambda b: b.replace(b'"outcome":"ok"', b'"outcome":"timeout"', 1)})
    error = failure(bad)
    assert error.kind == "tampered"
    assert "changed: results.jsonl" in str(error)
    assert f"changed: runs/{run}/record.json (run {run})" in str(error)


def _forged_manifest(good: Path, plan: RunPlan) -> tuple[dict[str, bytes], bytes]:
    """A transcript changed and the manifest updated to match it (as a tamperer would)."""
    members = read_all(good)
    path = f"runs/{plan.runs[0].run_id}/transcript.jsonl"
    members[path] = members[path].replace(b"answer", b"ANSWER")
    manifest = json.loads(members["manifest.json"])
    for entry in manifest["files"]:
        if entry["path"] == path:
            entry["sha256"] = sha256_bytes(members[path])
    members["manifest.json"] = pretty_json(manifest)
    return members, members[path]


def test_a_rewritten_manifest_is_not_the_one_the_statement_binds(
        good: Path, plan: RunPlan) -> None:
    members, _ = _forged_manifest(good, plan)
    error = failure(rewrite(good, good.with_name("x.copeca"), members))
    assert error.kind == "tampered" and "manifest.json is not the manifest" in str(error)


def test_a_changed_statement_differs_from_the_signed_one(good: Path) -> None:
    bad = rewrite(good, good.with_name("x.copeca"), {
        "statement.json": lambda b: b.replace(b'"inconclusive"', b'"improvement"')})
    error = failure(bad)
    assert error.kind == "tampered" and "statement.json differs" in str(error)


def test_a_changed_envelope_payload_breaks_the_signature(
        good: Path, key: Ed25519PrivateKey) -> None:
    members = read_all(good)
    statement = members["statement.json"].replace(b'"inconclusive"', b'"improvement"')
    envelope = json.loads(members["statement.dsse.json"])
    envelope["payload"] = base64.b64encode(statement).decode()
    bad = rewrite(good, good.with_name("x.copeca"), {
        "statement.json": statement, "statement.dsse.json": pretty_json(envelope)})
    for pinned in (key, None):
        error = failure(bad, pinned)
        assert error.kind == "signature" and "does not match the statement" in str(error)


def test_a_changed_payload_type_breaks_the_signature(good: Path, key: Ed25519PrivateKey) -> None:
    bad = rewrite(good, good.with_name("x.copeca"), {
        "statement.dsse.json": lambda b: b.replace(b"vnd.in-toto+json", b"vnd.other+json")})
    assert failure(bad, key).kind == "signature"


def test_a_flipped_signature_byte_is_a_bad_signature(good: Path, key: Ed25519PrivateKey) -> None:
    envelope = json.loads(read_all(good)["statement.dsse.json"])
    sig = base64.b64decode(envelope["signatures"][0]["sig"])
    envelope["signatures"][0]["sig"] = base64.b64encode(flip(sig, 5)).decode()
    bad = rewrite(good, good.with_name("x.copeca"),
                  {"statement.dsse.json": pretty_json(envelope)})
    error = failure(bad, key)
    assert error.kind == "signature" and error.exit_code == 12


def test_a_stripped_signature_is_caught_even_without_a_pinned_key(good: Path) -> None:
    envelope = json.loads(read_all(good)["statement.dsse.json"])
    envelope["signatures"] = []
    bad = rewrite(good, good.with_name("x.copeca"),
                  {"statement.dsse.json": pretty_json(envelope)})
    error = failure(bad)
    assert error.kind == "signature" and "stripped" in str(error)


def test_a_fully_re_signed_forgery_fails_against_the_pinned_key(
        good: Path, plan: RunPlan, key: Ed25519PrivateKey) -> None:
    members, _ = _forged_manifest(good, plan)
    statement = json.loads(members["statement.json"])
    statement["subject"][0]["digest"]["sha256"] = sha256_bytes(members["manifest.json"])
    payload = pretty_json(statement)
    members["statement.json"] = payload
    members["statement.dsse.json"] = pretty_json(sign_envelope(
        payload, Ed25519PrivateKey.generate()).model_dump(mode="json", by_alias=True))
    bad = rewrite(good, good.with_name("x.copeca"), members)
    error = failure(bad, key)
    assert error.kind == "signature" and "no signature by key" in str(error)
    assert failure(bad).kind == "signature"  # the statement still names the real signer


def test_an_added_file_is_tampered(good: Path) -> None:
    bad = rewrite(good, good.with_name("x.copeca"), {"runs/extra/notes.txt": b"trust me"})
    error = failure(bad)
    assert error.kind == "tampered" and "added, not in the manifest: runs/extra/notes.txt" \
        in str(error)


def test_a_removed_file_is_tampered(good: Path, plan: RunPlan) -> None:
    run = plan.runs[1].run_id
    bad = rewrite(good, good.with_name("x.copeca"), {f"runs/{run}/eval.json": None})
    error = failure(bad)
    assert error.kind == "tampered"
    assert f"removed, listed in the manifest: runs/{run}/eval.json (run {run})" in str(error)


def test_a_run_swapped_in_from_another_bundle_of_the_scenario_is_caught(
        build: Build, good: Path, plan: RunPlan) -> None:
    other = read_all(build("other.copeca", batch="b"))
    run = plan.runs[2].run_id
    swapped = {n: d for n, d in other.items() if n.startswith(f"runs/{run}/")}
    assert any(read_all(good)[n] != d for n, d in swapped.items())
    error = failure(rewrite(good, good.with_name("x.copeca"), swapped))
    assert error.kind == "tampered" and f"(run {run})" in str(error)


def test_a_renamed_duplicate_run_directory_is_caught(good: Path, plan: RunPlan) -> None:
    members = read_all(good)
    source, target = plan.runs[0].run_id, plan.runs[1].run_id
    copied = {n.replace(source, target): d for n, d in members.items()
              if n.startswith(f"runs/{source}/")}
    error = failure(rewrite(good, good.with_name("x.copeca"), copied))
    assert error.kind == "tampered" and f"(run {target})" in str(error)


def test_a_truncated_bundle_is_corrupt(good: Path) -> None:
    bad = good.with_name("x.copeca")
    bad.write_bytes(good.read_bytes()[:-100])
    error = failure(bad)
    assert error.kind == "corrupt" and error.exit_code == 10


@pytest.fixture(scope="module")
def small(tmp_path_factory: pytest.TempPathFactory, plan: RunPlan, demo,  # type: ignore[no-untyped-def]
          key: Ed25519PrivateKey) -> bytes:
    from bundle_support import contents_for

    from copeca_action._util.scrub import Scrubber
    from copeca_action.bundle import write_bundle
    out = tmp_path_factory.mktemp("fuzz") / "small.copeca"
    write_bundle(contents_for(plan, demo[2]), out, key, Scrubber())
    return out.read_bytes()


@settings(max_examples=150, deadline=None)
@given(data=st.data())
def test_any_damage_is_a_verification_error_or_leaves_every_member_intact(
        small: bytes, key: Ed25519PrivateKey, tmp_path_factory: pytest.TempPathFactory,
        data: st.DataObject) -> None:
    """Flip bytes anywhere, or cut the file: verify either fails with a VerificationError
    (never another exception) or every member it hashed is the one that was signed (a flip
    in a zip header field the signature does not cover, e.g. a timestamp or a CRC)."""
    damaged = bytearray(small)
    for _ in range(data.draw(st.integers(1, 3))):
        at = data.draw(st.integers(0, len(damaged) - 1))
        damaged[at] ^= data.draw(st.integers(1, 255))
    if data.draw(st.booleans()):
        damaged = damaged[:data.draw(st.integers(0, len(damaged)))]
    path = tmp_path_factory.mktemp("d") / "d.copeca"
    path.write_bytes(bytes(damaged))
    try:
        result = verify_bundle(path, key.public_key())
    except VerificationError:
        return
    original = read_all_bytes(small)
    assert read_all(path) == original
    assert result.signed


def read_all_bytes(raw: bytes) -> dict[str, bytes]:
    import io
    import zipfile
    with zipfile.ZipFile(io.BytesIO(raw)) as archive:
        return {i.filename: archive.read(i) for i in archive.infolist()}


@pytest.mark.parametrize(("field", "value", "says"), [
    ("scenario_sha256", "0" * 64, "scenario.yaml is not the scenario file the statement "
                                  "names"),
    ("seed", 12345, "plan.json is not the plan the statement names"),
    ("compare", "base-ref", "plan.json is not the plan the statement names")])
def test_a_statement_that_disagrees_with_the_bundled_scenario_or_plan_is_refused(
        good: Path, key: Ed25519PrivateKey, field: str, value: object, says: str) -> None:
    """Re-signed by the key holder, the statement names another scenario file (its
    sha256), seed or compare mode than the scenario.yaml and plan.json the bundle carries:
    verify compared the plan's digest, scenario hash, run count and shard only, and no one
    compared scenario.yaml with the scenario_sha256 the statement signs."""
    members = read_all(good)
    statement = json.loads(members["statement.json"])
    statement["predicate"][field] = value
    payload = pretty_json(statement)
    members["statement.json"] = payload
    members["statement.dsse.json"] = pretty_json(sign_envelope(payload, key).model_dump(
        mode="json", by_alias=True))
    error = failure(rewrite_canonical(good, good.with_name("x.copeca"), members), key)
    assert error.kind == "tampered" and says in str(error), str(error)
