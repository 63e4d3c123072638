"""The apply ladder on real git trees: each rung, and a clean tree after total failure."""

from __future__ import annotations

from pathlib import Path

import pytest
from evalrepo import CALC, FIXED_ADD, MakeDiff, run_git, write

from copeca_action.evaluate import apply_patch
from copeca_action.evaluate._git import base_repo, clone_tree, git

DRIFTED = "# header line added upstream\n" + CALC.replace("def mul(a, b):",
                                                          "def mul(a, b):  # product")


@pytest.fixture
def drifted(repo: Path) -> Path:
    """The repo one commit later: calc.py changed near the lines a patch touches."""
    write(repo, {"calc.py": DRIFTED})
    run_git(repo, "commit", "-q", "-am", "drift")
    return repo


def test_clean_patch_uses_git_apply(repo: Path, make_diff: MakeDiff, tmp_path: Path) -> None:
    tree = clone_tree(base_repo(repo), tmp_path / "t")
    result = apply_patch(tree, make_diff({"calc.py": FIXED_ADD}))
    assert result.applied and result.strategy == "git-apply" and result.log == ""


def test_drifted_context_falls_back_to_three_way(repo: Path, make_diff: MakeDiff,
                                                 tmp_path: Path) -> None:
    # The patch was made against the old commit; its blob ids are in the repository, so a
    # three-way apply can merge it although plain `git apply` rejects the changed context.
    patch = make_diff({"calc.py": FIXED_ADD})
    write(repo, {"calc.py": DRIFTED})
    run_git(repo, "commit", "-q", "-am", "drift")
    tree = clone_tree(base_repo(repo), tmp_path / "t")
    result = apply_patch(tree, patch)
    assert result.applied and result.strategy == "git-apply-3way"
    assert "git-apply:" in result.log
    text = (tree / "calc.py").read_text()
    assert "a + b" in text and "# product" in text


def test_fuzz_when_no_blob_is_known(drifted: Path, tmp_path: Path) -> None:
    # A hand-written diff with no index line and one stale context line: only fuzz applies it.
    patch = ("--- a/calc.py\n+++ b/calc.py\n@@ -1,4 +1,4 @@\n def add(a, b):\n"
             "-    return a - b\n+    return a + b\n \n # a stale context line\n")
    tree = clone_tree(base_repo(drifted), tmp_path / "t")
    result = apply_patch(tree, patch)
    assert result.applied and result.strategy == "patch-fuzz"
    assert "return a + b" in (tree / "calc.py").read_text()
    assert not list(tree.glob("*.orig")) and not list(tree.glob("*.rej"))


def test_nothing_applies_and_tree_is_left_clean(repo: Path, tmp_path: Path) -> None:
    patch = ("--- a/calc.py\n+++ b/calc.py\n@@ -1,2 +1,2 @@\n def nothing_like_this():\n"
             "-    pass\n+    return 1\n")
    tree = clone_tree(base_repo(repo), tmp_path / "t")
    result = apply_patch(tree, patch)
    assert not result.applied and result.strategy is None
    assert [line.split(":")[0] for line in result.log.splitlines() if line.endswith(":") or
            line.startswith(("git-apply:", "git-apply-3way:", "patch-fuzz:"))][:3] == [
        "git-apply", "git-apply-3way", "patch-fuzz"]
    assert git(tree, "status", "--porcelain").stdout == ""


def test_empty_patch_applies_trivially(repo: Path, tmp_path: Path) -> None:
    tree = clone_tree(base_repo(repo), tmp_path / "t")
    assert apply_patch(tree, "").applied and apply_patch(tree, "").strategy is None
