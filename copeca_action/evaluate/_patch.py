"""A run's patch: extracted from its tree, then sanitised before any hidden test sees it.

Sanitising drops every file section that touches a test file or a protected file (old or new
path), leaves out build artefacts, normalises line endings and the final newline, and says
whether anything is left. A patch beyond `MAX_PATCH_BYTES` or `MAX_PATCH_FILES` is not
sanitised at all (`too_large` says why): its cost grows with it (a 370 MiB patch took 12 s and
2 GiB to evaluate), and no answer to a task comes near the bounds.
"""

from __future__ import annotations

import itertools
import re
import subprocess
import tempfile
from pathlib import Path

from pydantic import Field
from unidiff.errors import UnidiffParseError
from unidiff.patch import PatchedFile, PatchSet

from copeca_action._util.model import RecordModel
from copeca_action.errors import InfraError
from copeca_action.evaluate._testfiles import TestFileRules
from copeca_action.workspace._content import checkout_view, find_checkout
from copeca_action.workspace._git import HARDENING, git_env

_GIT_HEADER = re.compile(r"^diff --git ")
_PLAIN_HEADER = re.compile(r"^--- ")
_PLAIN_SECTION = re.compile(r"^--- [^\n]*\n\+\+\+ ", re.M)

MAX_PATCH_BYTES = 32 * 2**20
"""The largest patch evaluated (UTF-8 bytes, as written), test files and artefacts included:
about a second and 200 MiB to sanitise and apply; a fix or a feature is kilobytes."""
MAX_PATCH_FILES = 5_000
"""The most file sections a patch evaluated may hold."""


class DroppedFile(RecordModel):
    """A file section removed by the sanitiser, and the rule that removed it."""

    path: str
    rule: str


class SanitizedPatch(RecordModel):
    """The patch evaluation applies, and what sanitising did to it."""

    text: str
    """The sanitised unified diff (LF line endings, final newline; empty when nothing is left)."""
    files: list[str] = Field(default_factory=list)
    """Paths the sanitised patch changes (new paths for renames)."""
    dropped: list[DroppedFile] = Field(default_factory=list)
    """Test files and protected files the agent changed; never applied."""
    ignored: list[DroppedFile] = Field(default_factory=list)
    """Build artefacts (`__pycache__/`, `node_modules/`, ...) left by tools the agent ran;
    never applied, not a test change."""
    normalized: list[str] = Field(default_factory=list)
    """What was normalised: `crlf`, `final-newline`."""
    empty: bool
    """True when no change is left to apply (the agent changed nothing, or only tests, or
    the patch is `too_large`)."""
    too_large: str | None = None
    """Why the patch was not sanitised (beyond `MAX_PATCH_BYTES` or `MAX_PATCH_FILES`):
    nothing of it is applied. None: within the bounds."""


def extract_patch(tree: Path, base_commit: str) -> str:
    """Everything that differs in `tree` from `base_commit`: edits, deletions, new files
    (ignored files excepted) and commits the agent made. Uses a scratch index, so the
    run's own index and worktree are left as they are.

    The tree is the agent's, its `.git` too: the repository is found without git and read
    through a private view with the harness's config (`checkout_view`), so a `filter` driver,
    an fsmonitor or an include planted in that `.git` never runs in the harness."""
    found = find_checkout(tree.resolve())
    if found is None:
        raise InfraError(f"{tree}: not in a git checkout (no .git found), so it has no patch")
    top, git_dir, common_dir = found
    with checkout_view(git_dir, common_dir) as view, \
            tempfile.TemporaryDirectory(prefix="copeca-index-") as scratch:
        env = git_env({"GIT_DIR": str(view), "GIT_WORK_TREE": str(top),
                       "GIT_INDEX_FILE": str(Path(scratch) / "index")})
        for argv in (["read-tree", base_commit], ["add", "-A", "."]):
            _git(tree, argv, env)
        return _git(tree, ["diff", "--cached", "--binary", "--no-color", "--no-ext-diff",
                           "--no-textconv", "--ignore-submodules=all", "-M", base_commit], env)


def _git(cwd: Path, argv: list[str], env: dict[str, str]) -> str:
    proc = subprocess.run(["git", *HARDENING, "-c", "core.quotepath=off", *argv], cwd=cwd,
                          env=env, capture_output=True, check=False, stdin=subprocess.DEVNULL)
    if proc.returncode != 0:
        raise InfraError(f"git {' '.join(argv)} failed in {cwd}: "
                         f"{proc.stderr.decode(errors='replace').strip()}")
    return proc.stdout.decode("utf-8", "surrogateescape")  # bytes kept, CRs included


def normalize_patch(text: str) -> tuple[str, list[str]]:
    """LF line endings when the whole patch was converted to CRLF (its headers carry \\r),
    and exactly one final newline. Content lines of a file that really uses CRLF keep it."""
    done: list[str] = []
    headers = [ln for ln in text.split("\n") if ln.startswith(("diff --git ", "--- ", "+++ ",
                                                               "@@ "))]
    if headers and all(ln.endswith("\r") for ln in headers):
        text = text.replace("\r\n", "\n")
        done.append("crlf")
    if text.strip():
        fixed = text.rstrip("\n") + "\n"
        if fixed != text:
            done.append("final-newline")
        text = fixed
    return text, done


def split_sections(text: str) -> list[str]:
    """One chunk per file: at `diff --git` headers, or at `--- ` headers followed by `+++ `
    in a plain diff. Text before the first header (a commit message) is dropped."""
    lines = _lines(text)
    git_style = any(_GIT_HEADER.match(ln) for ln in lines)
    starts: list[int] = []
    for i, line in enumerate(lines):
        git_start = git_style and _GIT_HEADER.match(line)
        plain_start = (not git_style and _PLAIN_HEADER.match(line) and i + 1 < len(lines)
                       and lines[i + 1].startswith("+++ "))
        if git_start or plain_start:
            starts.append(i)
    bounds = [*starts, len(lines)]
    return ["".join(lines[a:b]) for a, b in itertools.pairwise(bounds)]


def _lines(text: str) -> list[str]:
    """Lines with their "\n" kept; only "\n" ends a line (str.splitlines would also split
    at \r, form feeds and other characters a source file may hold)."""
    parts = text.split("\n")
    lines = [p + "\n" for p in parts[:-1]]
    return [*lines, parts[-1]] if parts[-1] else lines


def section_paths(section: str) -> list[str]:
    """Old and new repository paths of one file section (one path when they are the same)."""
    parsed: list[PatchedFile]
    try:
        parsed = list(PatchSet(_header(section)))
    except UnidiffParseError:
        parsed = []
    paths: list[str] = []
    for patched in parsed:
        for raw in (patched.source_file, patched.target_file):
            paths.append(_strip_prefix(raw))
    if not paths:
        paths = _header_paths(section)
    unique = [p for p in dict.fromkeys(paths) if p and p != "/dev/null"]
    return unique


def _header(section: str) -> str:
    """The section up to its first hunk or binary payload: all its paths are there, and
    parsing a large file's hunks only to read them took minutes and gigabytes."""
    cut = len(section)
    for marker in ("\n@@ ", "\nGIT binary patch"):
        at = section.find(marker)
        if at != -1:
            cut = min(cut, at + 1)
    return section[:cut]


def _strip_prefix(raw: str) -> str:
    raw = raw.strip().strip('"')
    if raw == "/dev/null":
        return raw
    return raw[2:] if raw[:2] in ("a/", "b/") else raw


def _header_paths(section: str) -> list[str]:
    """Fallback for sections unidiff cannot parse: the `diff --git a/X b/Y` header."""
    first = section.split("\n", 1)[0]
    match = re.match(r'^diff --git "?a/(.+?)"? "?b/(.+?)"?$', first)
    return [match.group(1), match.group(2)] if match else []


def oversize(text: str, max_bytes: int = MAX_PATCH_BYTES,
             max_files: int = MAX_PATCH_FILES) -> str | None:
    """Why `text` is beyond the patches evaluation takes (None: within its bounds), in the
    time of a scan of the text (no split, no copy)."""
    size, least = len(text), ""  # characters: never more than its UTF-8 bytes
    if not text.isascii():
        if size > max_bytes:
            least = "at least "  # over already: not copied to count its bytes
        elif size > max_bytes // 4:
            size = len(text.encode("utf-8", "surrogateescape"))
    files = text.count("\ndiff --git ") + text.startswith("diff --git ")
    if not files:
        files = sum(1 for _ in _PLAIN_SECTION.finditer(text))
    over = []
    if size > max_bytes:
        over.append(f"{least}{size / 2**20:.1f} MiB (the bound is {max_bytes / 2**20:g} MiB)")
    if files > max_files:
        over.append(f"{files} files (the bound is {max_files})")
    if not over:
        return None
    return "the patch is too large to evaluate: " + " and ".join(over)


def sanitize_patch(text: str, rules: TestFileRules | None = None) -> SanitizedPatch:
    """Drop test-file sections, normalise, and detect an empty result. A patch beyond the
    bounds (`oversize`) is returned empty, `too_large` saying why, without being read."""
    why = oversize(text)
    if why is not None:
        return SanitizedPatch(text="", empty=True, too_large=why)
    rules = rules or TestFileRules()
    text, normalized = normalize_patch(text)
    kept: list[str] = []
    files: list[str] = []
    dropped: list[DroppedFile] = []
    ignored: list[DroppedFile] = []
    for section in split_sections(text):
        paths = section_paths(section)
        junk = next(((p, g) for p in paths if (g := rules.artefact(p)) is not None), None)
        if junk is not None:
            ignored.append(DroppedFile(path=junk[0], rule=junk[1]))
            continue
        hits = [(p, rules.classify(p)) for p in paths]
        hit = next(((p, r) for p, r in hits if r is not None), None)
        if hit is not None:
            dropped.append(DroppedFile(path=hit[0], rule=hit[1] or ""))
            continue
        if _has_change(section):
            kept.append(section)
            files.append(paths[-1] if paths else "?")
    body = "".join(kept)
    if body and not body.endswith("\n"):
        body += "\n"
    return SanitizedPatch(text=body, files=files, dropped=dropped, ignored=ignored,
                          normalized=normalized, empty=not kept)


def _has_change(section: str) -> bool:
    """A hunk, a binary payload, a mode change, a rename or a new/deleted (empty) file."""
    markers = ("@@ ", "GIT binary patch", "Binary files ", "rename from ", "copy from ",
               "new file mode", "deleted file mode", "old mode ")
    return any(line.startswith(markers) for line in _lines(section))
