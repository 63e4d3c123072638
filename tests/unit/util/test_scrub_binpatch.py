"""Binary hunks of the patches a run leaves (`git diff --binary`, by the real git): a secret
compressed into them, or into a compressed file the agent wrote, is withheld; clean hunks and
the rest of the patch are kept byte for byte."""

from __future__ import annotations

import bz2
import gzip
import io
import lzma
import os
import subprocess
import zipfile
import zlib
from pathlib import Path

import pytest

from copeca_action._util.binpatch import MAX_BYTES, WITHHELD, scrub_binary_patches
from copeca_action._util.scrub import Scrubber, count_redactions, scrub_file

SECRET = "sk-ant-api03-" + "Q7v" * 30
ENV = f"HOME=/root\nANTHROPIC_API_KEY={SECRET}\nPATH=/usr/bin\n".encode()


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True,
                          text=True, env={**os.environ, "GIT_AUTHOR_NAME": "t",
                                          "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
                                          "GIT_COMMITTER_EMAIL": "t@t"}).stdout


def _patch(tmp_path: Path, files: dict[str, bytes], before: dict[str, bytes] | None = None
           ) -> Path:
    """The binary-safe diff the harness captures, of `files` written over `before`."""
    repo = tmp_path / "repo"
    repo.mkdir()
    _git(repo, "init", "-q")
    for name, data in (before or {"README": b"x\n"}).items():
        (repo / name).write_bytes(data)
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "base")
    for name, data in files.items():
        (repo / name).write_bytes(data)
    _git(repo, "add", "-A")
    path = tmp_path / "patch.diff"
    path.write_text(_git(repo, "diff", "--cached", "--binary", "HEAD"))
    assert "GIT binary patch" in path.read_text()
    return path


def _zipped(data: bytes) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("a/notes.txt", b"nothing here")
        archive.writestr("a/env.txt", data)
    return buffer.getvalue()


@pytest.mark.parametrize("pack", [
    lambda d: b"\x00\x01binary\x00" + d,
    gzip.compress, zlib.compress, bz2.compress, lzma.compress, _zipped,
    lambda d: gzip.compress(_zipped(d)),
], ids=["raw", "gzip", "zlib", "bzip2", "xz", "zip", "gzip-of-zip"])
def test_a_secret_in_a_binary_file_is_withheld(tmp_path: Path, pack: object) -> None:
    assert callable(pack)
    path = _patch(tmp_path, {"leak.bin": pack(ENV), "logo.bin": b"\x89PNG\x00" * 40,
                             "notes.txt": b"plain text\n"})
    scrubber = Scrubber({"ANTHROPIC_API_KEY": SECRET})
    assert scrub_file(path, scrubber) == 1
    text = path.read_bytes()
    assert text.count(WITHHELD) == 1 and b"[REDACTED:env:ANTHROPIC_API_KEY]" in text
    assert count_redactions(tmp_path, skip=["repo"]) == 1
    # the clean binary file and the text file are still there as git wrote them
    assert text.count(b"GIT binary patch\nliteral") == 1 and b"+plain text" in text
    assert not list(tmp_path.glob(".patch.diff.*"))


def test_a_secret_inserted_into_a_binary_file_by_a_delta_is_withheld(tmp_path: Path) -> None:
    old = bytes(range(256)) * 200
    new = old[:20000] + b"\x00" + ENV + b"\x00" + old[20000:]
    path = _patch(tmp_path, {"data.bin": new}, before={"data.bin": old})
    assert "delta " in path.read_text()  # git chose a delta: the secret is an insert
    assert scrub_file(path, Scrubber({"ANTHROPIC_API_KEY": SECRET})) == 1
    assert WITHHELD + b"[REDACTED:env:ANTHROPIC_API_KEY]" in path.read_bytes()


def test_a_clean_patch_is_left_as_it_was(tmp_path: Path) -> None:
    path = _patch(tmp_path, {"a.bin": gzip.compress(b"hello\x00" * 1000),
                             "b.bin": bytes(range(256))})
    before = path.read_bytes()
    inode = path.stat().st_ino
    assert scrub_file(path, Scrubber({"ANTHROPIC_API_KEY": SECRET})) == 0
    assert path.read_bytes() == before and path.stat().st_ino == inode
    repo = tmp_path / "repo"
    _git(repo, "reset", "-q", "--hard", "HEAD")
    _git(repo, "apply", "--check", str(path))  # still a patch git applies


def test_a_bomb_is_withheld_unread(tmp_path: Path) -> None:
    bomb = gzip.compress(b"\x00" * (MAX_BYTES + (1 << 20)), compresslevel=9)
    path = _patch(tmp_path, {"bomb.gz": bomb})
    assert scrub_file(path, Scrubber({"ANTHROPIC_API_KEY": SECRET})) == 0
    assert b"too much to check" in path.read_bytes()


def test_only_the_callback_decides(tmp_path: Path) -> None:
    path = _patch(tmp_path, {"x.bin": b"\x00needle\x00"})
    seen: list[bytes] = []

    def finds(data: bytes) -> str | None:
        seen.append(data)
        return "rule" if b"needle" in data else None

    assert scrub_binary_patches(path, finds) == ["rule"]
    assert b"\x00needle\x00" in seen
    assert scrub_binary_patches(path, finds) == []  # withheld: nothing left to find
