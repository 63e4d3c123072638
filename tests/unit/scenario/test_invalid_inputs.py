"""Every malformed file under tests/data/invalid/ is refused with file:line: field and a
specific message. Each file states what it expects in its first two comment lines."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from copeca_action.cli import main
from copeca_action.scenario import validate_paths

INVALID = Path(__file__).resolve().parents[2] / "data" / "invalid"
FILES = sorted(INVALID.glob("*.yaml"))


def expectation(path: Path) -> tuple[str, int]:
    head = path.read_bytes()[:400].decode("utf-8", "replace")
    message = re.search(r"^# expect: (.+)$", head, re.M)
    line = re.search(r"^# line: (\d+)$", head, re.M)
    assert message and line, f"{path.name} must start with '# expect:' and '# line:'"
    return message.group(1), int(line.group(1))


def test_there_are_at_least_30_distinct_cases() -> None:
    assert len(FILES) >= 30
    assert len({expectation(f)[0] for f in FILES}) >= 30


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_invalid_file_is_refused_with_location(path: Path) -> None:
    message, line = expectation(path)
    result = validate_paths([path])
    assert not result.ok
    shown = [str(p) for p in result.errors]
    assert any(message in s and s.startswith(f"{path}:{line}:") for s in shown), shown


@pytest.mark.parametrize("path", FILES[:5], ids=lambda p: p.stem)
def test_cli_exits_non_zero_without_traceback(path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["validate", str(path)]) == 1
    out = capsys.readouterr()
    assert "Traceback" not in out.err + out.out
    assert f"{path}:" in out.err
    assert out.out.startswith("invalid: 1 files")


def test_a_50_mb_file_is_refused_unread(tmp_path: Path) -> None:
    big = tmp_path / "huge-task.yaml"
    with big.open("wb") as handle:
        handle.truncate(50 * 1024 * 1024)
    result = validate_paths([big])
    assert [str(p) for p in result.errors] == [
        f"{big}: file is 52,428,800 bytes; inputs are limited to 2,097,152 bytes"]


def test_a_missing_path_is_an_error(tmp_path: Path) -> None:
    result = validate_paths([tmp_path / "nope.yaml"])
    assert str(result.errors[0]).endswith("no such file or folder")


def test_duplicate_ids_across_two_new_files_name_both(tmp_path: Path) -> None:
    task = (INVALID / "task-duplicate-id.yaml").read_text().replace(
        "fastapi/locate-unique-id", "fastapi/brand-new")
    (tmp_path / "a.yaml").write_text(task)
    (tmp_path / "b.yaml").write_text(task)
    result = validate_paths([tmp_path], corpus_root=INVALID.parents[2] / "corpus")
    dupes = [str(p) for p in result.errors if "duplicate task id" in str(p)]
    assert len(dupes) == 1 and str(tmp_path / "a.yaml") in dupes[0]


@pytest.mark.parametrize("url", ["https://x-access-token:ghp_SECRET@github.com/o/r",
                                 "https://ghp_SECRET@github.com/o/r",
                                 "HTTP://ghp_SECRET@example.com/o/r.git",
                                 "ssh://git:ghp_SECRET@github.com/o/r"])
def test_a_git_url_with_credentials_is_refused_without_quoting_them(
        tmp_path: Path, url: str) -> None:
    """A token in a repository's URL would be kept in the snapshot cache's mirror (its git
    config, which agents can read) and quoted by errors: refused, the credentials shown as
    *** and never echoed."""
    repos = tmp_path / "repos.yaml"
    repos.write_text(f"repos:\n  r:\n    language: go\n    git:\n      url: {url}\n"
                     f"      commit: {'a' * 40}\n")
    shown = [str(p) for p in validate_paths([repos]).errors]
    assert len(shown) == 1 and shown[0].startswith(f"{repos}:5: repos.r.git.url: ")
    assert "credentials" in shown[0] and "***@" in shown[0] and "SECRET" not in shown[0]


@pytest.mark.parametrize("url", ["ssh://git@github.com/o/r", "git@github.com:o/r",
                                 "https://github.com/o/r@v1", "file:///srv/git/r"])
def test_a_git_url_with_a_user_name_alone_over_ssh_is_accepted(tmp_path: Path,
                                                               url: str) -> None:
    repos = tmp_path / "repos.yaml"
    repos.write_text(f"repos:\n  r:\n    language: go\n    git:\n      url: {url}\n"
                     f"      commit: {'a' * 40}\n")
    assert validate_paths([repos]).ok
