from __future__ import annotations

import json
from pathlib import Path

import pytest
from gh_support import fork_payload, payload

from copeca_action.errors import ConfigError
from copeca_action.github import parse_event, read_event


def test_pull_request_payload_gives_pr_head_and_base() -> None:
    event = parse_event("pull_request", payload("pull_request.opened"), {"GITHUB_RUN_ID": "9"})
    assert event.pr_number == 2
    assert event.repository == "Codertocat/Hello-World"
    assert event.head_sha == "ec26c3e57ca3a959ca5aad62de7213c562f8c821"
    assert (event.head_ref, event.base_ref) == ("changes", "master")
    assert not event.is_fork
    assert event.run_url == "https://github.com/Codertocat/Hello-World/actions/runs/9"


def test_fork_is_detected_from_head_repository() -> None:
    event = parse_event("pull_request", fork_payload(), {})
    assert event.is_fork
    assert event.head_repository == "mallory/Hello-World"


def test_synchronize_push_release_dispatch() -> None:
    sync = parse_event("pull_request", payload("pull_request.synchronize"), {})
    assert sync.action == "synchronize" and sync.pr_number is not None
    push = parse_event("push", payload("push"), {})
    assert push.ref == "refs/tags/simple-tag" and push.pr_number is None
    release = parse_event("release", payload("release.published"), {})
    assert release.tag == "0.0.1"
    dispatch = parse_event("workflow_dispatch", payload("workflow_dispatch"), {})
    assert dispatch.ref == "refs/heads/master"
    assert dispatch.extra == {"name": "Mona the Octocat"}


def test_workflow_run_takes_pr_from_the_run() -> None:
    data = {"action": "completed", "repository": {"full_name": "o/r"},
            "workflow_run": {"event": "pull_request", "head_sha": "a" * 40,
                             "head_branch": "feature",
                             "head_repository": {"full_name": "someone/r"},
                             "pull_requests": [{"number": 7, "base": {"ref": "main",
                                                                      "sha": "b" * 40}}]}}
    event = parse_event("workflow_run", data, {})
    assert (event.pr_number, event.workflow_run_event, event.base_ref) == (7, "pull_request",
                                                                          "main")
    assert event.is_fork


def test_unknown_event_and_bad_payload_are_named(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="event 'issues' is not supported"):
        parse_event("issues", payload("push"), {})
    with pytest.raises(ConfigError, match=r"pull_request\.number"):
        parse_event("pull_request", {"repository": {"full_name": "o/r"}}, {})
    bad = tmp_path / "e.json"
    bad.write_text("{not json")
    with pytest.raises(ConfigError, match="not JSON"):
        read_event({"GITHUB_EVENT_NAME": "push", "GITHUB_EVENT_PATH": str(bad)})
    with pytest.raises(ConfigError, match="GITHUB_EVENT_NAME"):
        read_event({})
    missing = tmp_path / "missing.json"
    with pytest.raises(ConfigError, match="not found"):
        read_event({"GITHUB_EVENT_NAME": "push", "GITHUB_EVENT_PATH": str(missing)})


def test_read_event_from_env(tmp_path: Path) -> None:
    path = tmp_path / "event.json"
    path.write_text(json.dumps(payload("pull_request.opened")))
    event = read_event({"GITHUB_EVENT_NAME": "pull_request_target",
                        "GITHUB_EVENT_PATH": str(path)})
    assert event.name == "pull_request_target" and event.pr_number == 2
