"""folder_content_id: the tool's identity for reuse fingerprints, from real git and files."""

from __future__ import annotations

import subprocess
from pathlib import Path

from copeca_action.workspace import folder_content_id


def _git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(cwd), "-c", "user.name=t", "-c",
                           "user.email=t@e.invalid", *args], check=True, capture_output=True,
                          text=True).stdout.strip()


def test_a_clean_subfolder_is_named_by_its_tree_and_other_folders_do_not_matter(
        tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / "tool").mkdir(parents=True)
    (repo / "tool" / "main.py").write_text("v1\n")
    (repo / "docs.md").write_text("docs\n")
    _git(repo, "init", "-q")
    _git(repo, "add", ".")
    _git(repo, "commit", "-qm", "one")
    first = folder_content_id(repo / "tool")
    assert first == "tree:" + _git(repo, "rev-parse", "HEAD:tool")
    (repo / "docs.md").write_text("other docs\n")
    _git(repo, "commit", "-qam", "docs only")
    assert folder_content_id(repo / "tool") == first
    (repo / "tool" / "main.py").write_text("v2\n")
    edited = folder_content_id(repo / "tool")
    assert edited.startswith("files:")
    _git(repo, "commit", "-qam", "v2")
    assert folder_content_id(repo / "tool") not in (first, edited)


def test_outside_git_every_file_but_dot_git_counts(tmp_path: Path) -> None:
    folder = tmp_path / "plain"
    (folder / "sub").mkdir(parents=True)
    (folder / "sub" / "a.txt").write_text("a\n")
    first = folder_content_id(folder)
    assert first.startswith("files:") and folder_content_id(folder) == first
    (folder / "sub" / "a.txt").write_text("b\n")
    second = folder_content_id(folder)
    assert second != first
    (folder / "b.txt").write_text("new\n")
    assert folder_content_id(folder) not in (first, second)


def test_a_folder_no_enclosing_repository_tracks_is_hashed_whole(tmp_path: Path) -> None:
    """The tool's folder untracked inside another repository (a CI workspace, a parent
    checkout): its files are its identity, not the empty list of tracked ones (every
    version of the tool had the same id, so a reuse took runs of another version)."""
    import subprocess

    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    folder = tmp_path / "tool"
    folder.mkdir()
    (folder / "a.txt").write_text("a\n")
    first = folder_content_id(folder)
    (folder / "a.txt").write_text("b\n")
    assert folder_content_id(folder) != first


def test_config_planted_in_the_tools_checkout_never_runs(tmp_path: Path) -> None:
    """The tool's checkout is writable to agents: a `filter` driver (named by a
    `.gitattributes` of the checkout), an fsmonitor, hooks or an include planted in its
    `.git` must not run when the harness takes the content id, and the id is still the tree
    (nothing tracked changed) or the files' bytes as they are (a tracked file edited)."""
    repo = tmp_path / "tool"
    repo.mkdir()
    (repo / "main.py").write_text("v1\n")
    (repo / ".gitattributes").write_text("* filter=evil diff=evil\n")
    _git(repo, "init", "-q")
    _git(repo, "add", ".")
    _git(repo, "commit", "-qm", "one")
    clean_id = "tree:" + _git(repo, "rev-parse", "HEAD:")
    marker = tmp_path / "ran"
    evil = tmp_path / "evil.sh"
    evil.write_text(f"#!/bin/sh\necho \"$0 $*\" >> {marker}\ncat\n")
    evil.chmod(0o755)
    (tmp_path / "more.cfg").write_text(f"[core]\n\tfsmonitor = {evil}\n")
    hooks = tmp_path / "hooks"
    hooks.mkdir()
    for hook in ("post-index-change", "pre-commit", "post-checkout"):
        (hooks / hook).write_text(evil.read_text())
        (hooks / hook).chmod(0o755)
    with (repo / ".git" / "config").open("a") as fh:
        fh.write(f"[filter \"evil\"]\n\tclean = {evil}\n\tsmudge = {evil}\n\trequired = true\n"
                 f"[diff \"evil\"]\n\ttextconv = {evil}\n[core]\n\tfsmonitor = {evil}\n"
                 f"\thooksPath = {hooks}\n[include]\n\tpath = {tmp_path / 'more.cfg'}\n")
    (repo / "main.py").touch()  # stat-dirty: git must look at the bytes again
    (repo / ".git" / "index").touch()
    assert folder_content_id(repo) == clean_id
    (repo / "main.py").write_text("v2\n")
    edited = folder_content_id(repo)
    assert edited.startswith("files:") and edited != clean_id
    assert not marker.exists(), marker.read_text()


def test_a_linked_worktree_is_read_through_its_commondir(tmp_path: Path) -> None:
    repo = tmp_path / "main"
    repo.mkdir()
    (repo / "a.txt").write_text("a\n")
    _git(repo, "init", "-q")
    _git(repo, "add", ".")
    _git(repo, "commit", "-qm", "one")
    _git(repo, "worktree", "add", "-q", "--detach", str(tmp_path / "linked"))
    _git(repo, "pack-refs", "--all")  # HEAD's branch only in packed-refs
    assert folder_content_id(tmp_path / "linked") == "tree:" + _git(repo, "rev-parse", "HEAD:")
    assert folder_content_id(repo) == "tree:" + _git(repo, "rev-parse", "HEAD:")
    (tmp_path / "linked" / "a.txt").write_text("b\n")
    assert folder_content_id(tmp_path / "linked").startswith("files:")
