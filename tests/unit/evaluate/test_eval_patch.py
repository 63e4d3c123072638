"""Patch extraction from a real git tree, and sanitising of real diffs."""

from __future__ import annotations

import time
from pathlib import Path

from evalrepo import CALC, FIXED_ADD, TEST_ADD, MakeDiff, run_git, write

from copeca_action.evaluate import TestFileRules, apply_patch, extract_patch, sanitize_patch
from copeca_action.evaluate._git import base_repo, clone_tree


def test_extract_includes_new_deleted_and_committed_changes(repo: Path) -> None:
    base = run_git(repo, "rev-parse", "HEAD").strip()
    write(repo, {"calc.py": FIXED_ADD, "newmod.py": "X = 1\n", "README.md": None})
    run_git(repo, "add", "calc.py")
    run_git(repo, "commit", "-q", "-m", "agent committed part of it")
    write(repo, {"calc.py": FIXED_ADD + "# more\n"})
    patch = extract_patch(repo, base)
    assert "+++ b/newmod.py" in patch
    assert "deleted file mode" in patch and "README.md" in patch
    assert "+    return a + b" in patch and "+# more" in patch
    # The run's own index is untouched: newmod.py is still untracked there.
    assert "?? newmod.py" in run_git(repo, "status", "--porcelain")


def test_extract_respects_gitignore_and_keeps_binary(repo: Path) -> None:
    base = run_git(repo, "rev-parse", "HEAD").strip()
    write(repo, {".gitignore": "build/\n", "build/out.o": b"\x00junk",
                 "logo.bin": bytes(range(256))})
    patch = extract_patch(repo, base)
    assert "build/out.o" not in patch
    assert "GIT binary patch" in patch and "logo.bin" in patch


def test_sanitise_drops_test_files_and_reports_the_rule(make_diff: MakeDiff) -> None:
    diff = make_diff({"calc.py": FIXED_ADD, "tests/test_add.py": TEST_ADD,
                      "conftest.py": "import os\n", "pkg/thing_test.py": "x = 1\n",
                      "latests.py": "y = 2\n"})
    clean = sanitize_patch(diff)
    assert sorted(clean.files) == ["calc.py", "latests.py"]
    assert {(d.path, d.rule) for d in clean.dropped} == {
        ("tests/test_add.py", "tests/"), ("conftest.py", "conftest.py"),
        ("pkg/thing_test.py", "*_test.py")}
    assert "tests/test_add.py" not in clean.text and not clean.empty


def test_sanitise_uses_repo_globs(make_diff: MakeDiff) -> None:
    diff = make_diff({"calc.py": FIXED_ADD, "fixtures/data.json": "{}\n"})
    clean = sanitize_patch(diff, TestFileRules.from_patterns(["fixtures/**"]))
    assert clean.files == ["calc.py"]
    assert clean.dropped[0].rule == "fixtures/**"


def test_only_test_changes_is_empty(make_diff: MakeDiff) -> None:
    clean = sanitize_patch(make_diff({"tests/test_add.py": TEST_ADD}))
    assert clean.empty and clean.text == "" and clean.files == []
    assert sanitize_patch("").empty
    assert sanitize_patch("just some words\n").empty


def test_rename_out_of_tests_is_dropped_and_plain_rename_kept(make_diff: MakeDiff) -> None:
    moved = make_diff({"tests/test_visible.py": None, "mulcheck.py": "from calc import mul\n"
                       "\n\ndef test_mul():\n    assert mul(2, 3) == 6\n"})
    clean = sanitize_patch(moved)
    assert "rename from tests/test_visible.py" in moved
    assert clean.empty and clean.dropped[0].path == "tests/test_visible.py"
    renamed = make_diff({"calc.py": None, "arith.py": CALC})
    kept = sanitize_patch(renamed)
    assert kept.files == ["arith.py"] and "rename to arith.py" in kept.text


def test_crlf_patch_is_normalised_and_applies(repo: Path, make_diff: MakeDiff,
                                              tmp_path: Path) -> None:
    diff = make_diff({"calc.py": FIXED_ADD})
    clean = sanitize_patch(diff.replace("\n", "\r\n"))
    assert "crlf" in clean.normalized and "\r" not in clean.text
    tree = clone_tree(base_repo(repo), tmp_path / "t")
    assert apply_patch(tree, clean.text).strategy == "git-apply"
    assert (tree / "calc.py").read_text() == FIXED_ADD


def test_crlf_file_content_is_kept(repo: Path, tmp_path: Path) -> None:
    write(repo, {"win.txt": "one\r\ntwo\r\n"})
    run_git(repo, "add", "-A")
    run_git(repo, "commit", "-q", "-m", "crlf file")
    base = run_git(repo, "rev-parse", "HEAD").strip()
    write(repo, {"win.txt": "one\r\nTWO\r\n"})
    clean = sanitize_patch(extract_patch(repo, base))
    assert clean.normalized == [] and "+TWO\r" in clean.text
    tree = clone_tree(base_repo(repo, base), tmp_path / "t")
    assert apply_patch(tree, clean.text).applied
    assert (tree / "win.txt").read_bytes() == b"one\r\nTWO\r\n"


def test_missing_final_newline_added(make_diff: MakeDiff) -> None:
    diff = make_diff({"calc.py": FIXED_ADD}).rstrip("\n")
    clean = sanitize_patch(diff)
    assert clean.normalized == ["final-newline"] and clean.text.endswith("\n")
    assert sanitize_patch(diff + "\n\n\n").text == clean.text


def test_no_newline_at_end_of_file_marker_survives(repo: Path, make_diff: MakeDiff,
                                                   tmp_path: Path) -> None:
    diff = make_diff({"calc.py": FIXED_ADD.rstrip("\n")})
    assert "\\ No newline at end of file" in diff
    clean = sanitize_patch(diff)
    tree = clone_tree(base_repo(repo), tmp_path / "t")
    assert apply_patch(tree, clean.text).applied
    assert (tree / "calc.py").read_text() == FIXED_ADD.rstrip("\n")


def test_binary_hunk_is_kept_and_applies(repo: Path, make_diff: MakeDiff, tmp_path: Path) -> None:
    blob = bytes(range(256)) * 4
    diff = make_diff({"assets/logo.png": blob, "tests/data.bin": b"\x00\x01"})
    clean = sanitize_patch(diff)
    assert clean.files == ["assets/logo.png"] and "GIT binary patch" in clean.text
    assert [d.path for d in clean.dropped] == ["tests/data.bin"]
    tree = clone_tree(base_repo(repo), tmp_path / "t")
    assert apply_patch(tree, clean.text).strategy == "git-apply"
    assert (tree / "assets/logo.png").read_bytes() == blob


def test_plain_unified_diff_without_git_headers(tmp_path: Path) -> None:
    plain = ("--- a/calc.py\n+++ b/calc.py\n@@ -1,2 +1,2 @@\n def add(a, b):\n-    return a - b\n"
             "+    return a + b\n--- a/tests/test_calc.py\n+++ b/tests/test_calc.py\n"
             "@@ -1 +1 @@\n-x\n+y\n")
    clean = sanitize_patch(plain)
    assert clean.files == ["calc.py"] and [d.path for d in clean.dropped] == ["tests/test_calc.py"]


def test_text_before_the_first_diff_is_dropped(make_diff: MakeDiff) -> None:
    diff = "From 123 Mon Sep 17 00:00:00 2001\nSubject: fix\n\n" + make_diff({"calc.py": FIXED_ADD})
    assert sanitize_patch(diff).text.startswith("diff --git a/calc.py b/calc.py")


def test_a_large_file_section_is_sanitised_from_its_header() -> None:
    # Paths come from the section's header only: unidiff parsing every hunk line of a large
    # file took 8.7 s for this 500,000-line section (17.5 s and 378 MiB for 1,000,000 lines,
    # minutes and gigabytes beyond); now about 1.7 s, the time of splitting the text.
    size = 500_000
    patch = (f"diff --git a/big.txt b/big.txt\nnew file mode 100644\n--- /dev/null\n"
             f"+++ b/big.txt\n@@ -0,0 +1,{size} @@\n"
             + "".join(f"+line {i}\n" for i in range(size))
             + "diff --git a/tests/t.py b/tests/t.py\n--- a/tests/t.py\n+++ b/tests/t.py\n"
             "@@ -1 +1 @@\n-x\n+y\n")
    start = time.monotonic()
    clean = sanitize_patch(patch)
    assert clean.files == ["big.txt"] and [d.path for d in clean.dropped] == ["tests/t.py"]
    assert time.monotonic() - start < 6.0


def _sections(count: int, lines: int = 1, text: str = "x") -> str:
    return "".join(f"diff --git a/gen/f{i}.py b/gen/f{i}.py\nnew file mode 100644\n"
                   f"--- /dev/null\n+++ b/gen/f{i}.py\n@@ -0,0 +1,{lines} @@\n"
                   + f"+{text}\n" * lines for i in range(count))


def test_a_patch_beyond_the_size_bound_is_not_read() -> None:
    """A patch of several hundred MiB took seconds and gigabytes to evaluate (370 MiB: 12 s,
    2 GiB): beyond `MAX_PATCH_BYTES` it is returned empty, unread, and says why."""
    from copeca_action.evaluate._patch import MAX_PATCH_BYTES

    big = _sections(2, lines=(MAX_PATCH_BYTES // 2) // 61 + 1, text="y" * 59)
    assert len(big) > MAX_PATCH_BYTES
    clean = sanitize_patch(big)
    assert clean.too_large is not None and clean.empty and clean.text == "" and not clean.files
    assert "MiB (the bound is 32 MiB)" in clean.too_large and "files" not in clean.too_large
    at_bound = _sections(1, lines=(MAX_PATCH_BYTES - 200) // 61, text="y" * 59)
    assert len(at_bound) <= MAX_PATCH_BYTES
    assert sanitize_patch(at_bound).too_large is None  # within it: read as before


def test_the_size_bound_counts_bytes_not_characters() -> None:
    from copeca_action.evaluate._patch import MAX_PATCH_BYTES, oversize

    wide = _sections(1, lines=(MAX_PATCH_BYTES // 3) // 40, text="\U0001f600" * 39)
    assert len(wide) < MAX_PATCH_BYTES < len(wide.encode())  # 4 bytes per character
    assert "MiB" in (oversize(wide) or "")


def test_a_patch_beyond_the_file_bound_is_not_read() -> None:
    from copeca_action.evaluate._patch import MAX_PATCH_FILES

    clean = sanitize_patch(_sections(MAX_PATCH_FILES + 1))
    assert clean.too_large == (f"the patch is too large to evaluate: {MAX_PATCH_FILES + 1} "
                               f"files (the bound is {MAX_PATCH_FILES})")
    assert clean.empty and not clean.files
    assert len(sanitize_patch(_sections(MAX_PATCH_FILES)).files) == MAX_PATCH_FILES
    plain = "".join(f"--- a/f{i}.py\n+++ b/f{i}.py\n@@ -1 +1 @@\n-a\n+b\n"
                    for i in range(MAX_PATCH_FILES + 1))  # a plain diff is counted too
    assert "files" in (sanitize_patch(plain).too_large or "")
