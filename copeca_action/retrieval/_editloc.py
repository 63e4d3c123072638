"""EditLoc: which lines an edit touched, in the numbering of the file before the edit."""

from __future__ import annotations

from collections.abc import Iterable

from unidiff.errors import UnidiffParseError
from unidiff.patch import PatchSet

from copeca_action.errors import ConfigError, Problem

LineKey = tuple[str, int]
"""(repository-relative path, 1-based line number in the old file)."""


def _strip_prefix(path: str) -> str:
    return path[2:] if path.startswith(("a/", "b/")) else path


def edit_lines(patch: str, source: str = "patch") -> set[LineKey]:
    """Lines the patch deletes or changes (a change is a deletion plus an addition), in old-file
    numbering. Pure insertions touch no old line and add nothing; new files add nothing."""
    if not patch.strip():
        return set()
    try:
        patch_set = PatchSet(patch)
    except UnidiffParseError as exc:
        raise ConfigError(Problem(source, f"not a unified diff: {exc}")) from exc
    out: set[LineKey] = set()
    for patched in patch_set:
        if patched.is_added_file:
            continue
        path = _strip_prefix(patched.source_file)
        for hunk in patched:
            for line in hunk:
                if line.is_removed and line.source_line_no is not None:
                    out.add((path, int(line.source_line_no)))
    return out


def line_set(spans: Iterable[tuple[str, tuple[int, int]]]) -> set[LineKey]:
    """Every line of `(file, (first, last))` ranges, 1-based inclusive."""
    return {(file, n) for file, (first, last) in spans for n in range(first, last + 1)}
