"""The apply ladder: `git apply`, then `git apply --3way`, then `patch --fuzz`.

Each rung starts from the same clean tree (a failed rung is undone), and the rung that worked
is recorded, so a report can tell a clean patch from one that needed fuzz.
"""

from __future__ import annotations

import subprocess
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Literal

from copeca_action._util.model import RecordModel
from copeca_action.evaluate._git import git, reset_tree

Strategy = Literal["git-apply", "git-apply-3way", "patch-fuzz"]
STRATEGIES: tuple[Strategy, ...] = ("git-apply", "git-apply-3way", "patch-fuzz")
FUZZ = 3


class ApplyResult(RecordModel):
    """Whether a patch applied, how, and what each failed rung said."""

    applied: bool
    strategy: Strategy | None = None
    """The rung that worked (None when none did, or the patch was empty)."""
    log: str = ""
    """Messages of the rungs that failed, in order."""


def apply_patch(tree: Path, patch_text: str) -> ApplyResult:
    """Apply `patch_text` to the committed, clean `tree`; leaves the tree clean on failure.
    An empty patch applies trivially (strategy None)."""
    if not patch_text.strip():
        return ApplyResult(applied=True)
    head = git(tree, "rev-parse", "HEAD").stdout.strip()
    with tempfile.NamedTemporaryFile("w", suffix=".patch", delete=False, encoding="utf-8",
                                     errors="surrogateescape", newline="") as fh:
        fh.write(patch_text)
        patch_file = Path(fh.name)
    rungs: dict[Strategy, Callable[[Path, Path], subprocess.CompletedProcess[str]]] = {
        "git-apply": _git_apply,
        "git-apply-3way": _git_apply_3way,
        "patch-fuzz": _patch_fuzz,
    }
    log: list[str] = []
    try:
        for name in STRATEGIES:
            proc = rungs[name](tree, patch_file)
            if proc.returncode == 0:
                return ApplyResult(applied=True, strategy=name, log="\n".join(log))
            log.append(f"{name}: {(proc.stderr or proc.stdout).strip()[:2000]}")
            reset_tree(tree, head)
        return ApplyResult(applied=False, log="\n".join(log))
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


def _patch_fuzz(tree: Path, patch_file: Path) -> subprocess.CompletedProcess[str]:
    """GNU patch with fuzz; dry run first so a partial application never happens."""
    base = ["patch", "-p1", f"--fuzz={FUZZ}", "--batch", "--forward", "--no-backup-if-mismatch",
            "--reject-file=-", "-i", str(patch_file)]
    try:
        dry = subprocess.run([*base, "--dry-run"], cwd=tree, capture_output=True, text=True,
                             check=False)
        if dry.returncode != 0:
            return dry
        return subprocess.run(base, cwd=tree, capture_output=True, text=True, check=False)
    except FileNotFoundError as exc:
        return subprocess.CompletedProcess(base, 127, "", f"patch not installed: {exc}")
