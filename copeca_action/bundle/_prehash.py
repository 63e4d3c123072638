"""Every member's sha256 (and CRC-32), computed on a thread from the moment verification
starts, while the main thread imports and parses the bundle's metadata.

Hashing is most of a verification and releases the GIL; importing the models and checking
the signature is Python work. Started first (`copeca-action verify` starts it before it
imports pydantic), the hashing runs beside them instead of after them. Only structure and
bytes are read here; nothing is trusted: the results are compared with the signed manifest
by the verifier, in its own order, and a member that could not be read is reported as the
verifier would have found it.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path

from copeca_action._util.forked import Forked
from copeca_action.bundle._layout import METADATA
from copeca_action.bundle._zipread import Limits, SafeZip
from copeca_action.errors import VerificationError


class MemberHashes:
    """(size, sha256) of each member but the metadata, in archive order, on a thread."""

    def __init__(self, path: Path, limits: Limits | None = None) -> None:
        self.path = path
        self.limits = limits
        self._digests: dict[str, tuple[int, str] | VerificationError] = {}
        self._crcs: dict[str, int] = {}
        self._failure: BaseException | None = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="sha256", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        try:
            with SafeZip(self.path, self.limits) as archive:
                members = sorted((m for m in archive.members.values()
                                  if m.name not in METADATA), key=lambda m: m.header_offset)
                for member in members:
                    if self._stop.is_set():
                        return
                    try:
                        self._digests[member.name] = archive.digest(member.name)
                    except VerificationError as exc:  # reported if the manifest lists it
                        self._digests[member.name] = exc
                self._crcs = archive.crcs
        except BaseException as exc:  # the verifier's own scan reports a structural fault
            self._failure = exc

    def _wait(self) -> None:
        self._thread.join()
        if self._failure is not None:
            raise self._failure

    def digest(self, name: str) -> tuple[int, str]:
        """The member's (size, sha256); raises what reading it raised (e.g. `corrupt`)."""
        self._wait()
        found = self._digests[name]
        if isinstance(found, VerificationError):
            raise found
        return found

    def crcs(self) -> dict[str, int]:
        """The CRC-32 of every member hashed."""
        self._wait()
        return self._crcs

    def cancel(self) -> None:
        """Stop after the member being hashed (verification failed before it needed them)."""
        self._stop.set()


class ForkedMemberHashes(MemberHashes):
    """The same hashing in a forked child process: it holds its own interpreter lock, so
    the parent's imports and parsing cannot slow it (on a thread they took about a third
    more time than hashing alone). Only where nothing else runs yet: fork copies a single
    thread (`copeca-action verify` makes it first thing); anywhere else use the thread."""

    def __init__(self, path: Path, limits: Limits | None = None) -> None:
        self.path = path
        self.limits = limits
        self._digests = {}
        self._crcs = {}
        self._failure = None
        self._stop = threading.Event()
        self._done = False
        self._child = Forked(self._hash)
        self._pid = self._child.pid

    def _hash(self) -> bytes:
        """The child's work: hash, and the results as JSON."""
        self._run()
        return json.dumps(self._payload()).encode()

    def _payload(self) -> dict[str, object]:
        def error(exc: BaseException) -> list[str]:
            kind = exc.kind if isinstance(exc, VerificationError) else "corrupt"
            return [kind, str(exc)]

        return {"digests": {name: error(v) if isinstance(v, BaseException) else list(v)
                            for name, v in self._digests.items()},
                "crcs": self._crcs,
                "failure": error(self._failure) if self._failure is not None else None}

    def _wait(self) -> None:
        if not self._done:
            self._done = True
            try:
                data = json.loads(self._child.output() or b"")
            except ValueError:
                data = {"digests": {}, "crcs": {}, "failure": [
                    "corrupt", f"{self.path}: the hashing process ended without a result"]}
            self._digests = {
                name: VerificationError(v[0], v[1]) if isinstance(v[0], str) else (v[0], v[1])
                for name, v in data["digests"].items()}
            self._crcs = {name: int(v) for name, v in data["crcs"].items()}
            if data["failure"] is not None:
                self._failure = VerificationError(*data["failure"])
        if self._failure is not None:
            raise self._failure

    def cancel(self) -> None:
        if not self._done:
            self._done = True
            self._child.stop()

