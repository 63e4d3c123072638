"""Viewed context from transcripts the real CLIs wrote (tests/fixtures/transcripts, recorded
from the pinned Claude Code and Codex): the parser and the extraction agree on what the agent
saw, step by step, in the worktree the CLI ran in."""

from __future__ import annotations

from pathlib import Path

import pytest

from copeca_action.retrieval import Repo, viewed_from_transcript
from copeca_action.transcript import parse_transcript

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "transcripts"
HELLO = 'def greet(name):\n    return f"hi {name}"\n'


@pytest.fixture
def worktree(tmp_path: Path) -> Path:
    (tmp_path / "hello.py").write_text(HELLO)
    return tmp_path


def test_claude_read_then_grep(worktree: Path) -> None:
    transcript = parse_transcript("stream_json", FIXTURES / "claude_ok.jsonl")
    viewed = viewed_from_transcript(transcript, Repo(worktree, aliases=["/tmp/stub/c_ok/wd"]))
    by_step = {(v.step, v.file): v for v in viewed.items}
    assert sorted(by_step) == [(0, "hello.py"), (1, "hello.py")]
    assert by_step[(0, "hello.py")].shows_content  # Read: the file's lines were shown
    assert by_step[(1, "hello.py")].lines == (1, 1)  # grep -n: the one matching line
    assert viewed.dropped == []


def test_codex_cat_then_grep(worktree: Path) -> None:
    transcript = parse_transcript("codex_json", FIXTURES / "codex_ok" / "stdout.jsonl",
                                  FIXTURES / "codex_ok" / "codex_home")
    viewed = viewed_from_transcript(transcript, Repo(worktree))
    by_step = {(v.step, v.file): v for v in viewed.items}
    assert sorted(by_step) == [(0, "hello.py"), (1, "hello.py")]
    assert by_step[(0, "hello.py")].whole  # cat: the whole file
    assert by_step[(1, "hello.py")].lines == (1, 1)


def test_paths_outside_the_worktree_are_dropped_not_invented(tmp_path: Path) -> None:
    transcript = parse_transcript("stream_json", FIXTURES / "claude_edit.jsonl")
    viewed = viewed_from_transcript(transcript, Repo(tmp_path))  # no alias, no hello.py
    assert viewed.items == []
    assert viewed.dropped == ["/tmp/stub/c_edit/wd/hello.py"]
