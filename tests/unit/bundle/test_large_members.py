"""Members of a megabyte and more are hashed from the mapped file, their CRC-32 on a second
thread: a changed byte and a changed CRC are still found."""

from __future__ import annotations

import os
import struct
import zipfile
from pathlib import Path

import pytest
from bundle_support import Build, contents_for, record_for, run_files
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from copeca_action.bundle import verify_bundle
from copeca_action.errors import VerificationError
from copeca_action.plan import RunPlan
from copeca_action.scenario import Scenario, Task

BIG = 3 * (1 << 20) + 12_345  # several mapped steps and a partial one


@pytest.fixture
def big(build: Build, plan: RunPlan, demo: tuple[Scenario, dict[str, Task], Path]) -> Path:
    records = [record_for(plan, i) for i in range(len(plan.runs))]
    files = {r.run_id: run_files(r) for r in records}
    noise = os.urandom(BIG // 2).hex().encode()
    files[records[0].run_id]["transcript.jsonl"] = noise[:BIG - 1] + b"\n"
    return build("big.copeca", contents=contents_for(plan, demo[2], records=records,
                                                     files=files))


def _big_member(path: Path) -> zipfile.ZipInfo:
    with zipfile.ZipFile(path) as archive:
        return max(archive.infolist(), key=lambda i: i.file_size)


def test_a_bundle_with_a_large_member_verifies(big: Path, key: Ed25519PrivateKey) -> None:
    result = verify_bundle(big, key.public_key())
    assert _big_member(big).file_size == BIG
    assert result.bytes_hashed == sum(f.size for f in result.manifest.files)


def test_a_changed_byte_deep_in_a_large_member_is_tampering(
        big: Path, key: Ed25519PrivateKey) -> None:
    info = _big_member(big)
    data = bytearray(big.read_bytes())
    at = info.header_offset + 30 + len(info.filename) + BIG - 5_000  # in the last step
    data[at] ^= 1
    big.write_bytes(bytes(data))
    with pytest.raises(VerificationError) as caught:
        verify_bundle(big, key.public_key())
    assert caught.value.kind == "tampered" and info.filename in str(caught.value)


def test_a_large_members_stated_crc_is_checked(big: Path, key: Ed25519PrivateKey) -> None:
    info = _big_member(big)
    with zipfile.ZipFile(big) as archive:
        names = [i.filename for i in archive.infolist()]
        central = archive.start_dir + sum(46 + len(n) for n in names[:names.index(info.filename)])
    data = bytearray(big.read_bytes())
    data[info.header_offset + 14:info.header_offset + 18] = struct.pack("<I", info.CRC ^ 1)
    data[central + 16:central + 20] = struct.pack("<I", info.CRC ^ 1)
    big.write_bytes(bytes(data))
    with pytest.raises(VerificationError) as caught:
        verify_bundle(big, key.public_key())
    assert caught.value.kind == "tampered"
    assert f"{info.filename}: the CRC-32 the archive states" in str(caught.value)
