"""The apply ladder: `git apply`, then `git apply --3way`, then (leniencies, each an explicit
option) `git apply --ignore-whitespace` and `patch --fuzz=N`.

Each rung starts from the same clean tree (a failed rung is undone), and the rung that worked
and the options in force are recorded, so a report can tell a clean patch from one that needed
leniency. A file section that claims a binary change but carries no payload (`Binary files a/x
and b/x differ`, what `git diff` without `--binary` prints) is refused outright: no rung can
apply it, and GNU patch would skip it silently and apply the rest.
"""

from __future__ import annotations

import subprocess
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Literal

from copeca_action._util.model import RecordModel
from copeca_action.evaluate._git import git, reset_tree

Strategy = Literal["git-apply", "git-apply-3way", "git-apply-ignore-whitespace", "patch-fuzz"]
STRATEGIES: tuple[Strategy, ...] = ("git-apply", "git-apply-3way",
                                    "git-apply-ignore-whitespace", "patch-fuzz")
FUZZ = 3


@dataclass(frozen=True)
class ApplyOptions:
    """The leniencies the ladder may use, recorded with every result."""

    ignore_whitespace: bool = True
    """Try `git apply --ignore-whitespace` (context lines that differ only in whitespace
    match), as CooperBench's runner does."""
    fuzz: int | None = FUZZ
    """Try GNU `patch --fuzz=N` last (context lines may be ignored at the hunk's ends; None:
    never). CooperBench has no such step."""

    @classmethod
    def strict(cls) -> ApplyOptions:
        """Exact application only (`git apply`, `--3way`): for a diff made against the very
        commit it is applied to, as an edit task's run diff is."""
        return cls(ignore_whitespace=False, fuzz=None)

    def as_record(self) -> dict[str, object]:
        return {"ignore_whitespace": self.ignore_whitespace, "fuzz": self.fuzz}


class ApplyResult(RecordModel):
    """Whether a patch applied, how, and what each failed rung said."""

    applied: bool
    strategy: Strategy | None = None
    """The rung that worked (None when none did, or the patch was empty)."""
    log: str = ""
    """Messages of the rungs that failed, in order (or why the patch was refused)."""
    options: dict[str, object] = {}
    """The leniencies allowed (`ignore_whitespace`, `fuzz`)."""


def binary_without_payload(patch_text: str) -> list[str]:
    """Paths of file sections that claim a binary change but carry no `GIT binary patch`."""
    found: list[str] = []
    current: str | None = None
    pending = False
    for line in patch_text.split("\n"):
        if line.startswith("diff --git "):
            if pending and current is not None:
                found.append(current)
            current, pending = line[len("diff --git "):].split(" b/", 1)[-1], False
        elif line.startswith("Binary files "):
            pending = True
            if current is None:
                current = line[len("Binary files "):].split(" and ", 1)[0]
        elif line.startswith("GIT binary patch"):
            pending = False
    if pending and current is not None:
        found.append(current)
    return found


def apply_patch(tree: Path, patch_text: str, options: ApplyOptions | None = None) -> ApplyResult:
    """Apply `patch_text` to the committed, clean `tree`; leaves the tree clean on failure.
    An empty patch applies trivially (strategy None)."""
    options = options or ApplyOptions()
    record = options.as_record()
    if not patch_text.strip():
        return ApplyResult(applied=True, options=record)
    hollow = binary_without_payload(patch_text)
    if hollow:
        return ApplyResult(applied=False, options=record, log=(
            "binary change without payload (the diff was made without --binary), refused: "
            + ", ".join(hollow)))
    head = git(tree, "rev-parse", "HEAD").stdout.strip()
    with tempfile.NamedTemporaryFile("w", suffix=".patch", delete=False, encoding="utf-8",
                                     errors="surrogateescape", newline="") as fh:
        fh.write(patch_text)
        patch_file = Path(fh.name)
    rungs: dict[Strategy, Callable[[Path, Path], subprocess.CompletedProcess[str]]] = {
        "git-apply": _git_apply,
        "git-apply-3way": _git_apply_3way,
    }
    if options.ignore_whitespace:
        rungs["git-apply-ignore-whitespace"] = _git_apply_ignore_whitespace
    if options.fuzz is not None:
        rungs["patch-fuzz"] = partial(_patch_fuzz, fuzz=options.fuzz)
    log: list[str] = []
    try:
        for name, rung in rungs.items():
            proc = rung(tree, patch_file)
            if proc.returncode == 0:
                return ApplyResult(applied=True, strategy=name, log="\n".join(log),
                                   options=record)
            log.append(f"{name}: {(proc.stderr or proc.stdout).strip()[:2000]}")
            reset_tree(tree, head)
        return ApplyResult(applied=False, log="\n".join(log), options=record)
    finally:
        patch_file.unlink(missing_ok=True)


def _git_apply(tree: Path, patch_file: Path) -> subprocess.CompletedProcess[str]:
    return git(tree, "apply", "--whitespace=nowarn", str(patch_file), check=False)


def _git_apply_3way(tree: Path, patch_file: Path) -> subprocess.CompletedProcess[str]:
    proc = git(tree, "apply", "--3way", "--whitespace=nowarn", str(patch_file), check=False)
    if proc.returncode == 0 and git(tree, "diff", "--name-only", "--diff-filter=U",
                                    check=False).stdout.strip():
        return subprocess.CompletedProcess(proc.args, 1, "", "conflicts left by --3way")
    return proc


def _git_apply_ignore_whitespace(tree: Path,
                                 patch_file: Path) -> subprocess.CompletedProcess[str]:
    return git(tree, "apply", "--ignore-whitespace", "--whitespace=nowarn", str(patch_file),
               check=False)


def _patch_fuzz(tree: Path, patch_file: Path, fuzz: int = FUZZ) -> subprocess.CompletedProcess[str]:
    """GNU patch with fuzz; dry run first so a partial application never happens."""
    base = ["patch", "-p1", f"--fuzz={fuzz}", "--batch", "--forward", "--no-backup-if-mismatch",
            "--reject-file=-", "-i", str(patch_file)]
    try:
        dry = subprocess.run([*base, "--dry-run"], cwd=tree, capture_output=True, text=True,
                             check=False)
        if dry.returncode != 0:
            return dry
        return subprocess.run(base, cwd=tree, capture_output=True, text=True, check=False)
    except FileNotFoundError as exc:
        return subprocess.CompletedProcess(base, 127, "", f"patch not installed: {exc}")
