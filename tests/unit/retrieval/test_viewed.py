"""Viewed context from realistic Claude Code and Codex tool calls."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from copeca_action.retrieval import (
    Repo,
    Viewed,
    extract_viewed,
    from_viewed_spans,
    to_viewed_spans,
    viewed_from_transcript,
)
from copeca_action.transcript._model import ToolCall, Transcript, Turn

MakeRepo = Callable[[dict[str, str]], Path]

# a.py has 30 lines, b.py 5, docs/notes.md 3
A = "".join(f"line {n}\n" for n in range(1, 31))
FILES = {"pkg/a.py": A, "pkg/b.py": "".join(f"b{n}\n" for n in range(1, 6)),
         "docs/notes.md": "x\ny\nz\n", "pkg/sub/c.go": "package sub\n"}


@pytest.fixture
def repo(make_repo: MakeRepo) -> Repo:
    return Repo(make_repo(FILES), aliases=["/tmp/copeca-run-7/worktree"])


def view(repo: Repo, name: str, data: dict[str, Any], result: str | None = None,
         is_error: bool = False) -> list[tuple[str, tuple[int, int] | None, bool]]:
    ctx = extract_viewed([ToolCall(step=3, name=name, input=data, result=result,
                                   is_error=is_error)], repo)
    assert all(item.step == 3 for item in ctx.items)
    return [(i.file, i.lines, i.whole) for i in ctx.items]


# --- Claude Code -------------------------------------------------------------------------


def test_read_whole_file_absolute_path(repo: Repo) -> None:
    path = str(repo.root / "pkg/a.py")
    assert view(repo, "Read", {"file_path": path}) == [("pkg/a.py", None, True)]


def test_read_offset_limit(repo: Repo) -> None:
    assert view(repo, "Read", {"file_path": str(repo.root / "pkg/a.py"), "offset": 10,
                               "limit": 5}) == [("pkg/a.py", (10, 14), False)]


def test_read_offset_only_runs_to_the_end_and_limit_past_the_end_clamps(repo: Repo) -> None:
    assert view(repo, "Read", {"file_path": "pkg/a.py", "offset": 25}) == [
        ("pkg/a.py", (25, 30), False)]
    assert view(repo, "Read", {"file_path": "pkg/a.py", "offset": 1, "limit": 2000}) == [
        ("pkg/a.py", None, True)]


def test_read_lines_from_the_result(repo: Repo) -> None:
    result = "    10→line 10\n    11→line 11\n    12→line 12\n"
    assert view(repo, "Read", {"file_path": "pkg/a.py", "offset": 9, "limit": 3}, result) == [
        ("pkg/a.py", (10, 12), False)]
    tabbed = "     1\tb1\n     2\tb2\n     3\tb3\n     4\tb4\n     5\tb5\n"
    assert view(repo, "Read", {"file_path": "pkg/b.py"}, tabbed) == [("pkg/b.py", None, True)]


def test_read_under_the_run_worktree_alias(repo: Repo) -> None:
    assert view(repo, "Read", {"file_path": "/tmp/copeca-run-7/worktree/pkg/b.py"}) == [
        ("pkg/b.py", None, True)]


def test_read_outside_repo_or_missing_is_dropped(repo: Repo) -> None:
    ctx = extract_viewed([
        ToolCall(step=0, name="Read", input={"file_path": "/etc/passwd"}),
        ToolCall(step=0, name="Read", input={"file_path": "pkg/nope.py"}),
        ToolCall(step=0, name="Read", input={"file_path": "../outside.py"}),
        ToolCall(step=0, name="Read", input={"file_path": "pkg"}),  # a directory
    ], repo)
    assert ctx.items == []
    assert ctx.dropped == ["/etc/passwd", "pkg/nope.py", "../outside.py", "pkg"]


def test_failed_call_views_nothing(repo: Repo) -> None:
    assert view(repo, "Read", {"file_path": "pkg/a.py"}, "File does not exist.",
                is_error=True) == []


def test_grep_files_with_matches(repo: Repo) -> None:
    result = f"Found 2 files\n{repo.root}/pkg/a.py\n{repo.root}/pkg/b.py"
    assert view(repo, "Grep", {"pattern": "line", "path": str(repo.root),
                               "output_mode": "files_with_matches"}, result) == [
        ("pkg/a.py", None, False), ("pkg/b.py", None, False)]


def test_grep_content_mode_is_files_only(repo: Repo) -> None:
    result = "pkg/a.py:3:line 3\npkg/a.py:4:line 4\npkg/b.py:1:b1"
    assert view(repo, "Grep", {"pattern": "line|b1", "glob": "*.py", "output_mode": "content",
                               "-n": True}, result) == [
        ("pkg/a.py", None, False), ("pkg/b.py", None, False)]


def test_grep_on_one_file(repo: Repo) -> None:
    assert view(repo, "Grep", {"pattern": "x", "path": "docs/notes.md",
                               "output_mode": "content"}, "1:x") == [
        ("docs/notes.md", None, False)]


def test_glob(repo: Repo) -> None:
    result = f"{repo.root}/pkg/a.py\n{repo.root}/pkg/b.py"
    assert view(repo, "Glob", {"pattern": "**/*.py"}, result) == [
        ("pkg/a.py", None, False), ("pkg/b.py", None, False)]


def test_bash_cat_sed_head_tail_nl(repo: Repo) -> None:
    assert view(repo, "Bash", {"command": "cat pkg/b.py"}) == [("pkg/b.py", None, True)]
    assert view(repo, "Bash", {"command": "sed -n '10,20p' pkg/a.py"}) == [
        ("pkg/a.py", (10, 20), False)]
    assert view(repo, "Bash", {"command": "sed -n 7p pkg/a.py"}) == [("pkg/a.py", (7, 7), False)]
    assert view(repo, "Bash", {"command": "sed -n '28,$p' pkg/a.py"}) == [
        ("pkg/a.py", (28, 30), False)]
    assert view(repo, "Bash", {"command": "head -n 5 pkg/a.py"}) == [("pkg/a.py", (1, 5), False)]
    assert view(repo, "Bash", {"command": "head -3 pkg/a.py"}) == [("pkg/a.py", (1, 3), False)]
    assert view(repo, "Bash", {"command": "head pkg/a.py"}) == [("pkg/a.py", (1, 10), False)]
    assert view(repo, "Bash", {"command": "tail -n 4 pkg/a.py"}) == [
        ("pkg/a.py", (27, 30), False)]
    assert view(repo, "Bash", {"command": "tail -n +29 pkg/a.py"}) == [
        ("pkg/a.py", (29, 30), False)]
    assert view(repo, "Bash", {"command": "nl -ba pkg/b.py"}) == [("pkg/b.py", None, True)]


def test_sed_patterns_and_awk(repo: Repo) -> None:
    assert view(repo, "Bash", {"command": "sed -n '/line 3/,/line 5/p' pkg/a.py"}) == [
        ("pkg/a.py", None, False)]
    assert view(repo, "Bash", {"command": "awk 'NR>=5 && NR<=8' pkg/a.py"}) == [
        ("pkg/a.py", (5, 8), False)]
    assert view(repo, "Bash", {"command": "awk 'NR>4 && NR<8 {print}' pkg/a.py"}) == [
        ("pkg/a.py", (5, 7), False)]
    assert view(repo, "Bash", {"command": "awk 'NR==3,NR==6' pkg/a.py"}) == [
        ("pkg/a.py", (3, 6), False)]
    assert view(repo, "Bash", {"command": "awk -F: '{print $1}' pkg/b.py"}) == [
        ("pkg/b.py", None, False)]


def test_head_tail_counts(repo: Repo) -> None:
    assert view(repo, "Bash", {"command": "head -n -25 pkg/a.py"}) == [("pkg/a.py", (1, 5), False)]
    assert view(repo, "Bash", {"command": "tail -n -3 pkg/a.py"}) == [
        ("pkg/a.py", (28, 30), False)]
    assert view(repo, "Bash", {"command": "tail -n 0 pkg/a.py"}) == [("pkg/a.py", None, False)]
    assert view(repo, "Bash", {"command": "head -n abc pkg/a.py"}) == []  # a failed command
    assert view(repo, "Bash", {"command": "cat pkg/a.py | head -n q"}) == [
        ("pkg/a.py", None, True)]


def test_bash_pipelines_narrow_the_window(repo: Repo) -> None:
    assert view(repo, "Bash", {"command": "nl -ba pkg/a.py | sed -n '12,15p'"}) == [
        ("pkg/a.py", (12, 15), False)]
    assert view(repo, "Bash", {"command": "cat -n pkg/a.py | head -n 4"}) == [
        ("pkg/a.py", (1, 4), False)]
    assert view(repo, "Bash", {"command": "sed -n '10,20p' pkg/a.py | head -3"}) == [
        ("pkg/a.py", (10, 12), False)]
    assert view(repo, "Bash", {"command": "cat pkg/a.py | sort | uniq"}) == [
        ("pkg/a.py", None, True)]


def test_bash_filters_that_hide_or_select(repo: Repo) -> None:
    assert view(repo, "Bash", {"command": "cat pkg/a.py | wc -l"}) == [("pkg/a.py", None, False)]
    assert view(repo, "Bash", {"command": "cat pkg/a.py | grep -c line"}) == [
        ("pkg/a.py", None, False)]
    assert view(repo, "Bash", {"command": "cat pkg/a.py | grep 'line 2'"}, "line 2\n") == [
        ("pkg/a.py", None, False)]
    got = view(repo, "Bash", {"command": "sed -n '10,30p' pkg/a.py | grep -n 'line 2'"},
               "11:line 20\n12:line 21\n20:line 29\n")
    assert got == [("pkg/a.py", (20, 21), False), ("pkg/a.py", (29, 29), False)]


def test_bash_redirections(repo: Repo) -> None:
    assert view(repo, "Bash", {"command": "cat pkg/a.py > /tmp/copy.py"}) == []
    assert view(repo, "Bash", {"command": "cat pkg/a.py >> pkg/b.py"}) == []
    assert view(repo, "Bash", {"command": "head -n 3 pkg/a.py 2>/dev/null"}) == [
        ("pkg/a.py", (1, 3), False)]
    assert view(repo, "Bash", {"command": "cat pkg/b.py 2>&1 | head -n 2"}) == [
        ("pkg/b.py", (1, 2), False)]
    assert view(repo, "Bash", {"command": "sed -n '4,6p' < pkg/a.py"}) == [
        ("pkg/a.py", (4, 6), False)]


def test_bash_chains_cd_and_multiple_files(repo: Repo) -> None:
    got = view(repo, "Bash", {"command": f"cd {repo.root}/pkg && cat a.py b.py; ls"})
    assert got == [("pkg/a.py", None, True), ("pkg/b.py", None, True)]
    assert view(repo, "Bash", {"command": "cd pkg\nsed -n '1,2p' b.py 2>/dev/null"}) == [
        ("pkg/b.py", (1, 2), False)]
    assert view(repo, "Bash", {"command": "cd /tmp/copeca-run-7/worktree/pkg && head -1 b.py"}
                ) == [("pkg/b.py", (1, 1), False)]


def test_bash_non_printing_commands_view_nothing(repo: Repo) -> None:
    assert view(repo, "Bash", {"command": "sed -i 's/a/b/' pkg/a.py"}) == []
    assert view(repo, "Bash", {"command": "python -m pytest -q"}) == []
    assert view(repo, "Bash", {"command": "ls pkg && wc -l pkg/a.py"}) == []
    assert view(repo, "Bash", {"command": "echo 'unterminated"}) == []


def test_bash_grep_n_uses_the_output(repo: Repo) -> None:
    got = view(repo, "Bash", {"command": "grep -n 'line 1' pkg/a.py"},
               "1:line 1\n10:line 10\n11:line 11\n12:line 12\n")
    assert got == [("pkg/a.py", (1, 1), False), ("pkg/a.py", (10, 12), False)]


def test_bash_grep_rn_several_files(repo: Repo) -> None:
    got = view(repo, "Bash", {"command": "grep -rn 'b2\\|line 3' pkg"},
               "pkg/a.py:3:line 3\npkg/a.py:30:line 30\npkg/b.py:2:b2\npkg/zz.py:1:gone\n")
    assert got == [("pkg/a.py", (3, 3), False), ("pkg/a.py", (30, 30), False),
                   ("pkg/b.py", (2, 2), False)]


def test_bash_grep_without_n_or_with_l_is_names(repo: Repo) -> None:
    assert view(repo, "Bash", {"command": "grep -rl line pkg"}, "pkg/a.py\n") == [
        ("pkg/a.py", None, False)]
    assert view(repo, "Bash", {"command": "grep line pkg/a.py pkg/b.py"},
                "pkg/a.py:line 1\n") == [("pkg/a.py", None, False)]
    assert view(repo, "Bash", {"command": "grep -n line pkg/a.py"}) == [
        ("pkg/a.py", None, False)]  # no output recorded: only the name is known


def test_git_grep_and_rg_files(repo: Repo) -> None:
    assert view(repo, "Bash", {"command": "git grep -n 'b3'"}, "pkg/b.py:3:b3\n") == [
        ("pkg/b.py", (3, 3), False)]
    assert view(repo, "Bash", {"command": "rg --files"}, "pkg/a.py\npkg/b.py\n") == []


# --- Codex -------------------------------------------------------------------------------


def test_codex_exec_command_argv(repo: Repo) -> None:
    assert view(repo, "exec_command", {"cmd": ["bash", "-lc", "sed -n '5,9p' pkg/a.py"]}) == [
        ("pkg/a.py", (5, 9), False)]


def test_codex_exec_command_workdir(repo: Repo) -> None:
    assert view(repo, "exec_command", {"cmd": "head -n 2 b.py",
                                       "workdir": str(repo.root / "pkg")}) == [
        ("pkg/b.py", (1, 2), False)]


def test_codex_exec_command_string(repo: Repo) -> None:
    assert view(repo, "exec_command", {"cmd": "nl -ba pkg/a.py | sed -n '20,25p'"}) == [
        ("pkg/a.py", (20, 25), False)]


def test_codex_command_execution_item(repo: Repo) -> None:
    command = f"/bin/bash -lc \"cd {repo.root} && head -n 2 pkg/b.py\""
    assert view(repo, "command_execution", {"command": command},
                "b1\nb2\n") == [("pkg/b.py", (1, 2), False)]


# --- code search (MCP) -------------------------------------------------------------------


def test_mcp_result_file_line_mentions(repo: Repo) -> None:
    result = ("Found 3 matches:\npkg/a.py:12: line 12\npkg/a.py:20-24 (function)\n"
              "elsewhere/x.py:3 ignored\nsee docs/notes.md#L2\n")
    got = view(repo, "mcp__codesearch__search", {"query": "line"}, result)
    assert got == [("pkg/a.py", (12, 12), False), ("pkg/a.py", (20, 24), False),
                   ("docs/notes.md", (2, 2), False)]


def test_unknown_tools_view_nothing(repo: Repo) -> None:
    assert view(repo, "Edit", {"file_path": "pkg/a.py", "old_string": "a",
                               "new_string": "b"}) == []
    assert view(repo, "TodoWrite", {"todos": []}) == []


def test_transcript_steps_in_order(repo: Repo) -> None:
    calls = [ToolCall(step=0, name="Glob", input={"pattern": "*.py"}, result="pkg/a.py"),
             ToolCall(step=2, name="Read", input={"file_path": "pkg/a.py", "limit": 3})]
    transcript = Transcript(parser="stream_json", turns=[
        Turn(index=0, tool_calls=calls[:1]), Turn(index=1), Turn(index=2, tool_calls=calls[1:])])
    ctx = viewed_from_transcript(transcript, repo)
    assert ctx.items == [Viewed(step=0, file="pkg/a.py"),
                         Viewed(step=2, file="pkg/a.py", lines=(1, 3))]
    assert ctx.steps() == [0, 2]


def test_symlink_out_of_the_tree_is_dropped(make_repo: MakeRepo, tmp_path: Path) -> None:
    root = make_repo({"a.py": "x\n"})
    (tmp_path / "secret.py").write_text("s\n")
    (root / "link.py").symlink_to(tmp_path / "secret.py")
    ctx = extract_viewed([ToolCall(step=0, name="Read", input={"file_path": "link.py"})],
                         Repo(root))
    assert ctx.items == [] and ctx.dropped == ["link.py"]


def test_record_round_trip(repo: Repo) -> None:
    ctx = extract_viewed([
        ToolCall(step=0, name="Read", input={"file_path": "pkg/b.py"}),
        ToolCall(step=1, name="Glob", input={"pattern": "*"}, result="pkg/a.py"),
        ToolCall(step=2, name="Bash", input={"command": "sed -n 3,4p pkg/a.py"})], repo)
    spans = to_viewed_spans(ctx, repo)
    assert [(s.step, s.file, s.lines) for s in spans] == [
        (0, "pkg/b.py", (1, 5)), (1, "pkg/a.py", None), (2, "pkg/a.py", (3, 4))]
    back = from_viewed_spans(spans)
    assert [(v.file, v.lines, v.shows_content) for v in back] == [
        ("pkg/b.py", (1, 5), True), ("pkg/a.py", None, False), ("pkg/a.py", (3, 4), True)]


WORDS = ["cat", "sed", "-n", "'1,3p'", "3p", "head", "tail", "-n", "+2", "abc", "-5", "nl",
         "-ba", "grep", "-rn", "x", "pkg/a.py", "pkg/b.py", "pkg", "/etc/passwd", "|", "&&",
         ";", ">", "2>", "<", "cd", "..", "bash", "-lc", "'", '"', "$p", "-e", "rg", "git"]


COMMANDS = st.builds(
    lambda program, options, count, files, tail: " ".join([program, *options, count, *files,
                                                          *tail]),
    st.sampled_from(["cat", "sed", "head", "tail", "nl", "grep", "rg", "git grep", "less"]),
    st.lists(st.sampled_from(["-n", "-ba", "-rn", "-c", "-e", "-l", "--lines", "-5", "-n+2"]),
             max_size=3),
    st.sampled_from(["", "3", "-3", "+4", "abc", "'2,$p'", "'1,3p;7p'", "0p", "'$p'", "x"]),
    st.lists(st.sampled_from(["pkg/a.py", "pkg/b.py", "pkg", ".", "/etc/passwd", "nope.py"]),
             max_size=2),
    st.lists(st.sampled_from(WORDS), max_size=4))


@settings(max_examples=400, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.one_of(COMMANDS, st.lists(st.sampled_from(WORDS), max_size=12).map(" ".join)),
       st.text(max_size=40))
def test_any_command_is_safe(repo: Repo, command: str, output: str) -> None:
    """Whatever the agent typed, extraction never raises, and every item is a real file with
    lines inside it."""
    calls = [ToolCall(step=0, name="Bash", input={"command": command}, result=output),
             ToolCall(step=1, name="Read", input={"file_path": command.split(" ")[-1],
                                                  "offset": output[:3], "limit": -4}),
             ToolCall(step=2, name="mcp__x__search", input={}, result=output)]
    for item in extract_viewed(calls, repo).items:
        source = repo.file(item.file)
        assert source is not None
        if item.lines is not None:
            assert 1 <= item.lines[0] <= item.lines[1] <= source.line_count


def test_superscript_digits_are_not_line_numbers() -> None:
    from copeca_action.retrieval._viewed import int_or_none

    assert int_or_none("²") is None
    assert int_or_none(" 12 ") == 12
    assert int_or_none("0\x1f") == 0  # found by hypothesis: strip() removes it, int() did not
