"""Evaluation's git never obeys what graded code or an agent planted: the tree holds no `.git`
(its git data is the harness's, beside it), a change to that data is named a harness error
before git runs over it, and the agent's worktree is read through a private view. Each test
plants a real `filter` driver that appends to a marker file whenever git starts it."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from evalrepo import FIXED_ADD, PYTEST, QUIET, TEST_ADD, MakeDiff, run_git, write

from copeca_action.evaluate import (
    FeatureSpec,
    LocalSandbox,
    base_repo,
    clone_tree,
    evaluate_solo,
    extract_patch,
    sanitize_patch,
)
from copeca_action.evaluate._git import (
    GitDataTampered,
    commit_all,
    git,
    reset_tree,
    tree_git_dir,
)
from copeca_action.evaluate._local import (
    BWRAP_PROBE,
    _works,
    graded_view_works,
    unshare_prefix,
)


def _filter_config(marker: Path) -> str:
    run = f"\"sh -c 'echo ran >> {marker}; cat'\""  # quoted: `;` starts a comment
    return f'[filter "evil"]\n\tclean = {run}\n\tsmudge = {run}\n\trequired = true\n'


PLANT = '''import os, pathlib

CONFIG = {config!r}


def _plant(git_dir):
    try:
        git_dir.mkdir(exist_ok=True)
        with open(git_dir / "config", "a") as fh:
            fh.write(CONFIG)
        (git_dir / "info").mkdir(exist_ok=True)
        (git_dir / "info" / "attributes").write_text("* filter=evil\\n")
        return "planted"
    except OSError as exc:
        return f"refused: {{exc}}"


def test_plant():
    here = pathlib.Path.cwd()
    pathlib.Path(".gitattributes").write_text("* filter=evil\\n")
    print(".git:", _plant(here / ".git"))
    print("beside:", _plant(here.parent / (here.name + ".git")))
'''


def _network(name: str) -> LocalSandbox:
    works = {"bwrap": _works(BWRAP_PROBE), "unshare": unshare_prefix() is not None,
             "none": True}[name]
    if not works:
        pytest.skip(f"{name} does not work on this host")
    return LocalSandbox(network=name)  # type: ignore[arg-type]


@pytest.mark.parametrize("network", ["bwrap", "unshare", "none"])
def test_tests_that_plant_a_filter_never_run_it_in_the_harness(
        network: str, repo: Path, make_diff: MakeDiff, tmp_path: Path) -> None:
    # Before: the clone's own .git was in the tree, the tests wrote its config and the next
    # feature's reset ran the planted filter in the harness 7 times (bwrap, unshare, none).
    marker = tmp_path / "marker"
    plant = FeatureSpec(id=1, tests_patch=make_diff({
        "tests/test_plant.py": PLANT.format(config=_filter_config(marker))}),
        command=[*PYTEST, "-s", "tests/test_plant.py"], timeout_s=60, env=QUIET)
    add = FeatureSpec(id=2, tests_patch=make_diff({"tests/test_add.py": TEST_ADD}),
                      command=[*PYTEST, "tests/test_add.py"], timeout_s=60, env=QUIET)
    sandbox = _network(network)
    result = evaluate_solo(base_repo(repo), [plant, add], make_diff({"calc.py": FIXED_ADD}),
                           sandbox, repo="calc", task_id="t1")
    assert not marker.exists(), marker.read_text()
    if network == "bwrap":  # the git data beside the tree is out of the tests' sight (what
        # they wrote "beside" went to the sandbox's own blank /tmp): checked and unchanged
        assert result.status == "pass", result
    elif network == "unshare" and graded_view_works():  # read-only in the tests' mount
        # namespace (`harness-ro`): their writes there were refused, checked and unchanged
        assert result.status == "pass", result
        assert "harness-ro" in result.isolation
    else:  # no file-system isolation: the tests wrote it, which is named, not graded
        assert result.status == "error" and result.feature1 is None
        assert "git data" in (result.error or "") and "config" in (result.error or "")
        assert "not the agent's answer" in (result.error or "")


def test_tree_holds_no_git_and_a_planted_one_is_never_read(repo: Path, tmp_path: Path) -> None:
    base = base_repo(repo)
    tree = clone_tree(base, tmp_path / "scratch")
    assert not (tree / ".git").exists()
    assert tree_git_dir(tree).parent == tree.parent
    marker = tmp_path / "marker"
    (tree / ".git" / "info").mkdir(parents=True)
    (tree / ".git" / "config").write_text("[core]\n\trepositoryformatversion = 0\n"
                                          + _filter_config(marker))
    (tree / ".git" / "info" / "attributes").write_text("* filter=evil\n")
    write(tree, {".gitattributes": "* filter=evil\n", "calc.py": FIXED_ADD})
    head = commit_all(tree, "agent patch")
    reset_tree(tree, base.commit)
    reset_tree(tree, head)
    assert (tree / "calc.py").read_text() == FIXED_ADD
    files = git(tree, "ls-tree", "-r", "--name-only", head).stdout.split()
    assert ".gitattributes" in files and not [f for f in files if f.startswith(".git/")]
    assert not marker.exists(), marker.read_text()


@pytest.mark.parametrize("planted", ["config", "hooks", "commondir", "info/attributes",
                                     "objects/info/alternates"])
def test_changed_git_data_is_named_and_git_does_not_run(planted: str, repo: Path,
                                                        tmp_path: Path) -> None:
    base = base_repo(repo)
    tree = clone_tree(base, tmp_path / "scratch")
    marker = tmp_path / "marker"
    git_dir = tree_git_dir(tree)
    write(tree, {".gitattributes": "* filter=evil\n", "calc.py": FIXED_ADD})
    if planted == "config":
        with open(git_dir / "config", "a") as fh:
            fh.write(_filter_config(marker))
    elif planted == "hooks":
        (git_dir / "hooks").mkdir()
    elif planted == "commondir":
        (git_dir / "commondir").write_text(str(repo / ".git"))
    elif planted == "info/attributes":
        (git_dir / "info").mkdir(exist_ok=True)
        (git_dir / "info" / "attributes").write_text("* filter=evil\n")
    else:
        (git_dir / planted).write_text(str(tmp_path) + "\n")
    with pytest.raises(GitDataTampered, match=f"changed: {planted}.*not the agent's answer"):
        commit_all(tree, "agent patch")
    with pytest.raises(GitDataTampered):
        reset_tree(tree, base.commit)
    assert not marker.exists()


def test_a_git_data_folder_replaced_by_a_link_is_named(repo: Path, tmp_path: Path) -> None:
    tree = clone_tree(base_repo(repo), tmp_path / "scratch")
    git_dir = tree_git_dir(tree)
    shutil.move(git_dir, tmp_path / "moved.git")
    git_dir.symlink_to(tmp_path / "moved.git")
    with pytest.raises(GitDataTampered, match="the folder itself"):
        git(tree, "status")


def test_extract_patch_reads_the_agents_tree_through_a_view(repo: Path,
                                                            tmp_path: Path) -> None:
    # Before: extract_patch ran git in the agent's worktree, under its .git/config: the
    # planted clean filter ran in the harness on `git add -A`.
    agent = tmp_path / "agent"
    run_git(tmp_path, "clone", "-q", str(repo), str(agent))
    start = run_git(agent, "rev-parse", "HEAD").strip()
    marker = tmp_path / "marker"
    with open(agent / ".git" / "config", "a") as fh:
        fh.write(_filter_config(marker))
    write(agent, {".gitattributes": "* filter=evil\n", "calc.py": FIXED_ADD})
    patch = extract_patch(agent, start)
    assert "+    return a + b" in patch and "b/.gitattributes" in patch
    assert not marker.exists(), marker.read_text()


def test_a_patch_that_writes_git_data_is_dropped(repo: Path, make_diff: MakeDiff,
                                                 tmp_path: Path) -> None:
    # Before: `git apply` refused `.git/config`, but the ladder's last rung (GNU patch, with
    # fuzz) wrote it into the clone's .git: the next commit ran the planted filter.
    marker = tmp_path / "marker"
    config = (repo / ".git" / "config").read_text()
    evil = "".join(f"+{line}\n" for line in _filter_config(marker).splitlines())
    lines = config.count("\n")
    patch = (f"diff --git a/.git/config b/.git/config\n--- a/.git/config\n+++ b/.git/config\n"
             f"@@ -{lines},0 +{lines + 1},3 @@\n{evil}"
             + "diff --git a/.GIT./hooks/pre-commit b/.GIT./hooks/pre-commit\n"
             "new file mode 100755\n--- /dev/null\n+++ b/.GIT./hooks/pre-commit\n"
             "@@ -0,0 +1 @@\n+touch pwned\n"
             + make_diff({"calc.py": FIXED_ADD, ".gitattributes": "* filter=evil\n"}))
    clean = sanitize_patch(patch)
    assert [(d.path, d.rule) for d in clean.dropped] == [
        (".git/config", "protected:.git/"), (".GIT./hooks/pre-commit", "protected:.git/")]
    add = FeatureSpec(id=1, tests_patch=make_diff({"tests/test_add.py": TEST_ADD}),
                      command=[*PYTEST, "tests/test_add.py"], timeout_s=60, env=QUIET)
    result = evaluate_solo(base_repo(repo), [add], patch, LocalSandbox(), repo="calc",
                           task_id="t1")
    assert result.status == "pass" and result.patches["solo"].strategy == "git-apply"
    assert not marker.exists()


def test_a_link_out_of_the_tree_is_not_written_through(repo: Path, make_diff: MakeDiff,
                                                       tmp_path: Path) -> None:
    # The agent makes `lib` a link to a folder outside the tree; the hidden tests patch adds
    # lib/test_lib.py. No rung writes through the link: the agent's failure, named.
    outside = tmp_path / "outside"
    outside.mkdir()
    link_patch = ("diff --git a/lib b/lib\nnew file mode 120000\n--- /dev/null\n+++ b/lib\n"
                  f"@@ -0,0 +1 @@\n+{outside}\n\\ No newline at end of file\n")
    hidden = FeatureSpec(id=1, tests_patch=make_diff({"lib/test_lib.py": TEST_ADD}),
                         command=[*PYTEST, "lib/test_lib.py"], timeout_s=60, env=QUIET)
    result = evaluate_solo(base_repo(repo), [hidden], link_patch + make_diff(
        {"calc.py": FIXED_ADD}), LocalSandbox(), repo="calc", task_id="t1")
    assert result.status == "fail" and result.error is None
    assert result.feature1 is not None
    assert "conflicts with the agent's patch" in result.feature1.test_output
    assert list(outside.iterdir()) == []
