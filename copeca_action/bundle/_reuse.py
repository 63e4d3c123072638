"""A previous bundle opened for reuse: verified first, then read run by run, each file
checked against the verified manifest as it is written (never trusted, never extracted
blindly: names were checked by SafeZip, files are created new and never through a link).
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from copeca_action._util.hashing import sha256_file
from copeca_action.bundle._model import RECORD, RUNS_DIR, FileEntry
from copeca_action.bundle._verify import VerifiedBundle, verify_bundle
from copeca_action.bundle._zipread import Limits, SafeZip
from copeca_action.errors import VerificationError
from copeca_action.records import RunRecord, latest_by_run_id


class ReusableBundle:
    """Open with `with ReusableBundle(path, pubkey) as bundle:`; raises VerificationError
    when the bundle does not verify (with `pubkey`: unless that key signed it)."""

    def __init__(self, path: Path, pubkey: Ed25519PublicKey | None = None,
                 limits: Limits | None = None) -> None:
        self.path = path
        self.sha256 = sha256_file(path)
        self.verified: VerifiedBundle = verify_bundle(path, pubkey, limits=limits)
        self.records: dict[str, RunRecord] = latest_by_run_id(self.verified.records)
        self._by_run: dict[str, list[FileEntry]] = {}
        for entry in self.verified.manifest.files:  # sorted by path
            parts = entry.path.split("/", 2)
            if len(parts) == 3 and parts[0] == RUNS_DIR and parts[2] != RECORD:
                self._by_run.setdefault(parts[1], []).append(entry)
        self._zip = SafeZip(path, limits)

    def __enter__(self) -> ReusableBundle:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def close(self) -> None:
        self._zip.close()

    def extract(self, run_id: str, dest: Path) -> None:
        """Run `run_id`'s files but its record into the empty folder `dest`."""
        prefix = f"{RUNS_DIR}/{run_id}/"
        for entry in self._by_run.get(run_id, []):
            if entry.path not in self._zip.members:
                raise VerificationError("tampered", f"{self.path}: {entry.path} vanished "
                                        "after verification")
            target = dest / entry.path[len(prefix):]
            target.parent.mkdir(parents=True, exist_ok=True)
            self._write(entry.path, entry, target)

    def _write(self, path: str, entry: FileEntry, target: Path) -> None:
        digest = hashlib.sha256()
        size = 0
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW
        with os.fdopen(os.open(target, flags, 0o644), "wb") as handle:
            for chunk in self._zip.iter_chunks(path):
                digest.update(chunk)
                size += len(chunk)
                handle.write(chunk)
        if (size, digest.hexdigest()) != (entry.size, entry.sha256):
            target.unlink()
            raise VerificationError("tampered", f"{self.path}: {path} changed after "
                                    "verification (its sha256 is not the manifest's)")
