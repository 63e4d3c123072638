"""Code search over a folder: literal or regex matches, and definitions by name."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path

SKIP_DIRS = {".git", "node_modules", "__pycache__", ".venv", "venv", ".mypy_cache",
             ".pytest_cache", ".tox", "dist", "build"}
MAX_FILE_BYTES = 1_000_000
DEFINITION = r"^\s*(?:async\s+def|def|class|function|func|fn|pub\s+fn|type|interface)\s+{name}\b"


def iter_files(root: Path, under: str = "") -> Iterator[Path]:
    """Text files below `root/under`, in a stable order, skipping tool and build folders."""
    base = (root / under).resolve()
    if not str(base).startswith(str(root.resolve())):
        return
    if base.is_file():
        yield base
        return
    for folder, dirs, files in os.walk(base):
        dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS and not d.startswith("."))
        for name in sorted(files):
            path = Path(folder) / name
            try:
                if path.stat().st_size > MAX_FILE_BYTES:
                    continue
            except OSError:
                continue
            yield path


def _lines(path: Path) -> list[str] | None:
    try:
        data = path.read_bytes()
    except OSError:
        return None
    if b"\0" in data[:4096]:
        return None
    return data.decode("utf-8", "replace").splitlines()


def search(root: Path, query: str, *, under: str = "", regex: bool = False,
           max_results: int = 50) -> list[str]:
    """`path:line: text` for each matching line (case-sensitive literal unless `regex`)."""
    pattern = re.compile(query if regex else re.escape(query))
    out: list[str] = []
    for path in iter_files(root, under):
        lines = _lines(path)
        if lines is None:
            continue
        rel = path.relative_to(root.resolve()).as_posix()
        for number, line in enumerate(lines, 1):
            if pattern.search(line):
                out.append(f"{rel}:{number}: {line.strip()[:200]}")
                if len(out) >= max_results:
                    return out
    return out


def definition(root: Path, name: str, *, context: int = 12) -> list[str]:
    """Where `name` is defined (def/class/function/...), with the first lines of its body."""
    pattern = re.compile(DEFINITION.format(name=re.escape(name)))
    out: list[str] = []
    for path in iter_files(root):
        lines = _lines(path)
        if lines is None:
            continue
        rel = path.relative_to(root.resolve()).as_posix()
        for number, line in enumerate(lines, 1):
            if pattern.search(line):
                body = lines[number - 1:number - 1 + context]
                out.append(f"{rel}:{number}-{number + len(body) - 1}\n"
                           + "\n".join(f"{number + i:>5}  {t}" for i, t in enumerate(body)))
    return out
