"""The CRC thread gives each member the CRC-32 of its whole content."""

from __future__ import annotations

import os
import zlib

from copeca_action.bundle._crc import CrcWorker


def test_each_member_gets_the_crc_of_its_chunks_in_order() -> None:
    members = {"a": os.urandom(300_000), "empty": b"", "b": os.urandom(70_001)}
    worker = CrcWorker()
    for name, data in members.items():
        worker.add(name, b"")
        for start in range(0, len(data), 65_536):
            worker.add(name, data[start:start + 65_536])
    crcs = worker.results()
    assert crcs == {name: zlib.crc32(data) for name, data in members.items()}
    assert crcs["empty"] == 0 and crcs["a"] != zlib.crc32(members["a"][::-1])


def test_closing_without_chunks_or_twice_is_harmless() -> None:
    worker = CrcWorker()
    worker.close()
    assert worker.results() == {}
    worker.add("x", b"abc")
    worker.close()
    worker.close()
    assert worker.results() == {"x": zlib.crc32(b"abc")}
    assert worker.results() == {}  # each member's CRC is returned once
    worker.add("y", b"de")
    assert worker.results() == {"y": zlib.crc32(b"de")}
