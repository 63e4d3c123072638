"""ReusableBundle: verified before anything is read; each run's files written from the
archive and checked against the verified manifest; a change after verification is caught."""

from __future__ import annotations

from pathlib import Path

import pytest
from bundle_support import contents_for
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from copeca_action._util.hashing import sha256_file
from copeca_action._util.scrub import Scrubber
from copeca_action.bundle import ReusableBundle, write_bundle
from copeca_action.errors import VerificationError
from copeca_action.plan import RunPlan
from copeca_action.scenario import Scenario, Task


def _bundle(tmp_path: Path, plan: RunPlan, scenario_path: Path,
            key: Ed25519PrivateKey | None) -> Path:
    out = tmp_path / "prev.copeca"
    write_bundle(contents_for(plan, scenario_path), out, key, Scrubber())
    return out


def test_extracts_a_runs_files_but_its_record(tmp_path: Path, plan: RunPlan,
                                              demo: tuple[Scenario, dict[str, Task], Path],
                                              key: Ed25519PrivateKey) -> None:
    path = _bundle(tmp_path, plan, demo[2], key)
    rid = plan.runs[0].run_id
    with ReusableBundle(path, key.public_key()) as bundle:
        assert bundle.sha256 == sha256_file(path)
        assert set(bundle.records) == set(plan.run_ids())
        dest = tmp_path / "run"
        dest.mkdir()
        bundle.extract(rid, dest)
    assert sorted(p.name for p in dest.iterdir()) == ["eval.json", "patch.diff",
                                                       "transcript.jsonl"]
    assert rid.encode() in (dest / "transcript.jsonl").read_bytes()


def test_another_key_or_a_missing_signature_is_refused(
        tmp_path: Path, plan: RunPlan, demo: tuple[Scenario, dict[str, Task], Path],
        key: Ed25519PrivateKey) -> None:
    signed = _bundle(tmp_path, plan, demo[2], key)
    with pytest.raises(VerificationError) as other:
        ReusableBundle(signed, Ed25519PrivateKey.generate().public_key())
    assert other.value.kind == "signature"
    signed.unlink()
    unsigned = _bundle(tmp_path, plan, demo[2], None)
    with pytest.raises(VerificationError) as missing:
        ReusableBundle(unsigned, key.public_key())
    assert missing.value.kind == "unsigned"
    with ReusableBundle(unsigned) as bundle:  # no key asked for: an intact bundle will do
        assert len(bundle.records) == len(plan.runs)


def test_a_file_changed_after_verification_is_caught_and_removed(
        tmp_path: Path, plan: RunPlan, demo: tuple[Scenario, dict[str, Task], Path],
        key: Ed25519PrivateKey) -> None:
    path = _bundle(tmp_path, plan, demo[2], key)
    rid = plan.runs[0].run_id
    needle = f"answer for {rid}".encode()
    with ReusableBundle(path, key.public_key()) as bundle:
        data = path.read_bytes()
        assert data.count(needle) == 1  # stored members: the bytes are in the file as is
        with path.open("r+b") as handle:  # the same inode the reader holds
            handle.seek(data.index(needle))
            handle.write(needle.upper())
        dest = tmp_path / "run"
        dest.mkdir()
        with pytest.raises(VerificationError) as caught:
            bundle.extract(rid, dest)
    assert caught.value.kind == "tampered" and "changed after verification" in str(caught.value)
    assert not (dest / "transcript.jsonl").exists()
