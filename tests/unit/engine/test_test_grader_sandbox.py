"""The engine runs an edit task's test command (the agent's code) in the local sandbox."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from engine_helpers import config, fake, make_corpus, scenario

from copeca_action.conclude._report import isolation_note
from copeca_action.engine import EngineConfig, run_plan
from copeca_action.evaluate._local import BWRAP_PROBE, _works
from copeca_action.plan import build_plan
from copeca_action.records import read_records


def _graded(tmp_path: Path, test_cmd: list[str]) -> EngineConfig:
    """One edit task, run once, graded by `test_cmd` (one mutation it must catch)."""
    mutation = {"file": "app.py", "search": "return 42", "replace": "return 42 "}
    corpus = make_corpus(tmp_path, {"one": {
        "type": "edit", "category": "fix",
        "prompt": fake(edit=["app.py", "return 42 ", "return 42"], answer="done"),
        "grading": {"test": {"command": test_cmd, "mutations": [mutation]}}}})
    return config(tmp_path, corpus, scenario(repetitions=1))


@pytest.mark.skipif(not _works(BWRAP_PROBE), reason="bubblewrap does not work on this host")
def test_test_command_writes_only_its_tree_and_home(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    # passes only when the worktree and HOME are writable and the rest of the host is not
    test_cmd = ["sh", "-c", f'touch ok-in-tree && touch "$HOME/ok-in-home" && '
                f'! touch "{outside}/planted" 2>/dev/null && '
                "printf '# tests 1\\n# pass 1\\n# fail 0\\n'"]
    cfg = _graded(tmp_path, test_cmd)
    run_plan(cfg, build_plan(cfg.scenario, cfg.corpus.tasks), scenario_text="name: t\n")
    (record,) = read_records(cfg.out.results)
    assert record.correct, record.grading.get("output")
    assert "bwrap" in record.grading["isolation"]
    assert not (outside / "planted").exists()


def test_under_unshare_graded_code_cannot_write_the_harness_files_or_read_its_key(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Without bubblewrap, the test command (the agent's code) ran as the harness's user with
    the host writable: it read the signing key, wrote the output folder, the snapshot cache,
    the git views and the harness's interpreter, and read the harness's environment through
    the host's /proc. Under `unshare` its mount namespace now makes those read-only (its tree
    and HOME writable), the key file reads empty and /proc is its own."""
    from copeca_action._util import scrub
    from copeca_action.evaluate import _local
    from copeca_action.workspace._git import views_root

    if _local.unshare_prefix() is None:
        pytest.skip("unshare does not work here")
    monkeypatch.setattr(_local, "_works", lambda argv: argv[0] != "bwrap" and _works(argv))
    if not _local.graded_view_works():
        pytest.skip("unshare cannot mount here")
    key = tmp_path / "signing.key"
    key.write_text("PRIVATE KEY BYTES")
    monkeypatch.setattr(scrub, "_SECRET_FILES", {key.resolve()})
    venv = Path(sys.prefix).resolve()
    probe = venv / f".graded-probe-{os.getpid()}"
    cache, out = tmp_path / "cache", tmp_path / "out"
    # each line passes a test only when the harness is protected; the tree and HOME stay
    # writable (a test suite writes its own files)
    checks = {"key": f'[ ! -s "{key}" ]',
              "out": f'! touch "{out}/planted" 2>/dev/null',
              "cache": f'! touch "{cache}/planted" 2>/dev/null',
              "views": f'! touch "{views_root()}/planted" 2>/dev/null',
              "venv": f'! touch "{probe}" 2>/dev/null',
              "environ": f'! cat /proc/{os.getpid()}/environ >/dev/null 2>&1',
              "tree": "touch ok-in-tree", "home": 'touch "$HOME/ok-in-home"'}
    script = "".join(f"if {check}; then echo 'ok {i} - {name}'; p=$((p+1)); else echo "
                     f"'not ok {i} - {name}'; f=$((f+1)); fi\n"
                     for i, (name, check) in enumerate(checks.items(), 1))
    test_cmd = ["sh", "-c", f"p=0; f=0\n{script}printf '# tests {len(checks)}\\n# pass %d"
                "\\n# fail %d\\n' $p $f"]
    cfg = _graded(tmp_path, test_cmd)
    try:
        run_plan(cfg, build_plan(cfg.scenario, cfg.corpus.tasks), scenario_text="name: t\n")
        assert not probe.exists()
    finally:
        probe.unlink(missing_ok=True)
    (record,) = read_records(cfg.out.results)
    output = record.grading.get("output")
    assert "not ok" not in str(output), output
    assert record.correct, output
    assert record.grading["isolation"][:4] == ["netns", "pidns", "harness-ro", "keys-hidden"]
    assert not (out / "planted").exists() and not (cache / "planted").exists()
    assert "no-fs-isolation" not in record.grading["isolation"]
    note = isolation_note(read_records(cfg.out.results))  # still not `ro-host`: still said
    assert note is not None and "without file-system isolation" in note


def test_under_unshare_a_mount_that_fails_is_an_infra_error_before_the_tests_run(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The graded code's view cannot be made: the harness's failure, named, never the agent's
    wrong answer, and the test command never started (it would have run unprotected)."""
    from copeca_action.evaluate import _local

    if _local.unshare_prefix() is None:
        pytest.skip("unshare does not work here")
    monkeypatch.setattr(_local, "_works", lambda argv: argv[0] != "bwrap" and _works(argv))
    if not _local.graded_view_works():
        pytest.skip("unshare cannot mount here")
    guarded = tmp_path / "guarded"
    guarded.mkdir()
    monkeypatch.setattr(_local, "graded_view", lambda tree, home, writable: [
        "file", str(guarded), ""])  # /dev/null cannot cover a folder
    started = tmp_path / "started"
    mutation = {"file": "app.py", "search": "return 42", "replace": "return 42 "}
    corpus = make_corpus(tmp_path, {"one": {
        "type": "edit", "category": "fix",
        "prompt": fake(edit=["app.py", "return 42 ", "return 42"], answer="done"),
        "grading": {"test": {"command": ["sh", "-c", f"touch {started}; echo '# pass 1'"],
                             "mutations": [mutation]}}}})
    cfg = config(tmp_path, corpus, scenario(repetitions=1))
    run_plan(cfg, build_plan(cfg.scenario, cfg.corpus.tasks), scenario_text="name: t\n")
    records = read_records(cfg.out.results)  # an infra error is retried: each attempt
    assert records and all(r.outcome == "infra_error" and r.correct is not True
                           for r in records)
    for record in records:
        assert "sandbox" in (record.error or "") and "never ran" in (record.error or "")
        assert str(guarded) in (record.error or ""), record.error
    assert not started.exists()


def test_a_change_beyond_the_bounds_is_a_wrong_answer_not_an_infra_error(
        tmp_path: Path) -> None:
    """The agent fixed the bug and left 5,001 generated files: its change is not read (the
    time and memory of grading grow with it), graded incorrect once, the bound named; an
    infra error would drop the run from the denominator and pay for it again."""
    from copeca_action.evaluate._patch import MAX_PATCH_FILES

    mutation = {"file": "app.py", "search": "return 42", "replace": "return 42 "}
    dump = f"mkdir gen && cd gen && seq 1 {MAX_PATCH_FILES + 1} | while read i; do " \
        "echo $i > f$i.txt; done"
    corpus = make_corpus(tmp_path, {"one": {
        "type": "edit", "category": "fix",
        "prompt": fake(edit=["app.py", "return 42 ", "return 42"], shell=dump, answer="done"),
        "grading": {"test": {"command": ["sh", "-c", "printf '# pass 1\\n# fail 0\\n'"],
                             "mutations": [mutation]}}}})
    cfg = config(tmp_path, corpus, scenario(repetitions=1))
    run_plan(cfg, build_plan(cfg.scenario, cfg.corpus.tasks), scenario_text="name: t\n")
    (record,) = read_records(cfg.out.results)
    assert record.outcome == "ok" and record.correct is False
    assert record.grading["patch_too_large"] is True
    assert f"(the bound is {MAX_PATCH_FILES})" in record.grading["reason"]
