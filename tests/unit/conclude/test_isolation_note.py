"""The report warns when test gradings ran the agent's code without network isolation."""

from __future__ import annotations

from copeca_action.conclude._report import isolation_note
from copeca_action.records import RunRecord


def _rec(run_id: str, grading: dict[str, object]) -> RunRecord:
    return RunRecord(run_id=run_id, scenario="s", task_id="r/t", task_hash="h", arm="baseline",
                     model="m", runner="claude", repetition=0, outcome="ok", grading=grading)


def test_unconfined_test_gradings_are_counted() -> None:
    records = [
        _rec("a", {"kind": "test", "isolation": ["bwrap", "netns", "pidns", "ro-host"]}),
        _rec("b", {"kind": "test", "isolation": ["pids-cgroup(1024)"]}),
        _rec("c", {"kind": "test", "isolation": []}),
        _rec("d", {"kind": "answer"}),
        _rec("e", {"kind": "test"}),  # recorded before the grader was sandboxed: not judged
    ]
    note = isolation_note(records)
    assert note is not None and note.startswith("2 of 3 test grading(s)")


def test_no_note_when_every_grading_was_confined() -> None:
    records = [_rec("a", {"kind": "test", "isolation": ["bwrap", "netns", "pidns", "ro-host",
                                                        "private-hidden", "keys-hidden"]}),
               _rec("b", {"kind": "answer"})]
    assert isolation_note(records) is None


def test_the_unshare_fallback_is_named_as_without_file_system_isolation() -> None:
    records = [_rec("a", {"kind": "test", "isolation": ["netns", "pidns", "no-fs-isolation"]}),
               _rec("b", {"kind": "answer"})]
    note = isolation_note(records)
    assert note is not None and "network" not in note.split(";")[0]
    assert note.startswith("1 of 1 test grading(s) ran the agent's code without file-system "
                           "isolation")


def test_agents_sharing_the_harness_pid_namespace_are_counted() -> None:
    shared = _rec("a", {"kind": "answer"}).model_copy(update={"flags": ["agent_not_isolated"]})
    note = isolation_note([shared, _rec("b", {"kind": "answer"})])
    assert note is not None and "1 of 2 agent run(s) shared the harness's pid namespace" in note


def test_agents_whose_view_hid_no_file_are_counted() -> None:
    """Under the `unshare` fallback an agent has its own pid namespace but reads every file
    the harness can: the report says so rather than letting the pid namespace stand for
    isolation."""
    seen = _rec("a", {"kind": "answer"}).model_copy(update={"flags": ["agent_files_visible"]})
    note = isolation_note([seen, _rec("b", {"kind": "answer"})])
    assert note is not None
    assert "1 of 2 agent run(s) could read the harness's files" in note
    assert "other runs' transcripts" in note and "signing-key file" in note
