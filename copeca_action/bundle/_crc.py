"""CRC-32s of archive members, computed on a second thread while the caller hashes the same
chunks with sha256.

The CRC-32 and hashlib's sha256 both release the GIL on large buffers, so with two cores
the CRC pass runs beside the sha256 pass instead of after it: verifying a bundle costs one
sha256 pass over its bytes, not a sha256 and a CRC pass. ISA-L's CRC-32 (the `isal`
package, same polynomial and values as zlib's) runs about 6x faster than zlib's, so the
second pass stays short on a busy machine too; zlib's is used where isal is absent."""

from __future__ import annotations

import queue
import threading

try:
    from isal.isal_zlib import crc32
except ImportError:  # pragma: no cover - isal is a dependency; zlib gives the same values
    from zlib import crc32

_AHEAD = 8
"""Chunks the CRC thread may lag behind (bounds the memory held for it)."""


class CrcWorker:
    """`add(name, chunk)` hands a member's next chunk over (members one after the other);
    `results()` waits for every chunk handed over and returns each member's CRC-32 (those
    not returned before). The thread starts on the first chunk and ends in `results()` or
    `close()`."""

    def __init__(self) -> None:
        self._chunks: queue.Queue[tuple[str, bytes | memoryview] | None] = queue.Queue(
            maxsize=_AHEAD)
        self._crcs: dict[str, int] = {}
        self._thread: threading.Thread | None = None

    def add(self, name: str, chunk: bytes | memoryview) -> None:
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name="crc32", daemon=True)
            self._thread.start()
        self._chunks.put((name, chunk))

    def _run(self) -> None:
        crcs = self._crcs
        while (item := self._chunks.get()) is not None:
            name, chunk = item
            crcs[name] = crc32(chunk, crcs.get(name, 0))

    def results(self) -> dict[str, int]:
        """The CRC-32 of each member handed over since the last call."""
        self.close()
        out, self._crcs = self._crcs, {}
        return out

    def close(self) -> None:
        if self._thread is not None:
            self._chunks.put(None)
            self._thread.join()
            self._thread = None
