"""Unpacking an sdist where tarfile has no extraction filters (Python < 3.11.4, as in Debian
bookworm's python3): the same safety by hand."""

from __future__ import annotations

import io
import tarfile
from pathlib import Path

import pytest

from copeca_action.errors import WorkspaceError
from copeca_action.workspace._sdist import unpack


def _tar(path: Path, members: dict[str, bytes]) -> Path:
    with tarfile.open(path, "w:gz") as tf:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            info.mode = 0o4755
            tf.addfile(info, io.BytesIO(data))
    return path


def test_without_filters_files_unpack_and_setuid_is_dropped(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delattr(tarfile, "data_filter", raising=False)
    archive = _tar(tmp_path / "p-1.0.tar.gz", {"p-1.0/setup.py": b"x = 1\n"})
    root = unpack(archive, tmp_path / "out")
    assert root.name == "p-1.0" and (root / "setup.py").read_bytes() == b"x = 1\n"
    assert not (root / "setup.py").stat().st_mode & 0o4000


def test_without_filters_an_escaping_member_is_refused(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delattr(tarfile, "data_filter", raising=False)
    archive = _tar(tmp_path / "evil.tar.gz", {"p/../../evil": b"boom"})
    with pytest.raises(WorkspaceError, match="escape"):
        unpack(archive, tmp_path / "out")
    assert not (tmp_path / "evil").exists()
