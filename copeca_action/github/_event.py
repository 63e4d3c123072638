"""What triggered the workflow: the event name and payload GitHub hands every step.

Only the few facts the action acts on are kept (repository, PR number, head and base
repositories, refs and SHAs), so the rest of the code never digs in raw webhook JSON.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from pydantic import Field

from copeca_action._util.model import RecordModel
from copeca_action.errors import ConfigError, Problem

EventName = Literal["pull_request", "pull_request_target", "push", "workflow_dispatch",
                    "release", "workflow_run", "schedule", "merge_group", "issue_comment"]
KNOWN_EVENTS: tuple[str, ...] = ("pull_request", "pull_request_target", "push",
                                 "workflow_dispatch", "release", "workflow_run", "schedule",
                                 "merge_group", "issue_comment")
MAX_EVENT_BYTES = 25 * 1024 * 1024
"""GitHub caps webhook payloads at 25 MB; a larger file is not an event payload."""


class EventContext(RecordModel):
    """The triggering event, reduced to what gating, checkout and commenting need."""

    name: EventName
    repository: str
    """`owner/name` of the repository the workflow runs in (the base for a PR)."""
    action: str | None = None
    """The payload's `action` (`opened`, `synchronize`, `published`, …)."""
    pr_number: int | None = None
    """The pull request the comment goes to; set for PR events and PR-triggered workflow_run."""
    head_repository: str | None = None
    """`owner/name` the PR's head branch lives in; differs from `repository` for forks."""
    head_sha: str | None = None
    head_ref: str | None = None
    base_ref: str | None = None
    base_sha: str | None = None
    ref: str | None = None
    """The git ref of push, dispatch and release events (`refs/heads/main`, a tag)."""
    tag: str | None = None
    """The release's tag name."""
    default_branch: str | None = None
    """The repository's default branch (from the payload), for the history."""
    workflow_run_event: str | None = None
    """For workflow_run: the event that triggered the upstream workflow."""
    server_url: str = "https://github.com"
    api_url: str = "https://api.github.com"
    run_id: str | None = None
    run_attempt: str | None = None
    extra: dict[str, str] = Field(default_factory=dict)
    """workflow_dispatch inputs (strings), kept for the report; `schedule` for schedule."""
    comment_body: str | None = None
    """issue_comment: the comment's text (a `/copeca run` command or anything else)."""
    comment_author: str | None = None
    """issue_comment: the login of whoever wrote the comment."""
    comment_author_association: str | None = None
    """issue_comment: OWNER, MEMBER, COLLABORATOR, CONTRIBUTOR, … (the API decides access)."""

    @property
    def owner(self) -> str:
        return self.repository.split("/", 1)[0]

    @property
    def repo(self) -> str:
        return self.repository.split("/", 1)[1]

    @property
    def is_pull_request(self) -> bool:
        return self.pr_number is not None

    @property
    def is_fork(self) -> bool:
        """A PR whose head lives in another repository: its code is untrusted."""
        return (self.head_repository is not None
                and self.head_repository.lower() != self.repository.lower())

    @property
    def run_url(self) -> str | None:
        if not self.run_id:
            return None
        url = f"{self.server_url}/{self.repository}/actions/runs/{self.run_id}"
        return url + (f"/attempts/{self.run_attempt}" if self.run_attempt else "")


def _problem(path: str, message: str, field: str | None = None) -> ConfigError:
    return ConfigError(Problem(path, message, field=field))


def _str_or_none(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _get(payload: Mapping[str, Any], *keys: str) -> Any:
    """payload[k1][k2]…, or None when any level is missing or not a mapping."""
    value: Any = payload
    for key in keys:
        if not isinstance(value, Mapping):
            return None
        value = value.get(key)
    return value


def _full_name(repo: Any) -> str | None:
    name = _get(repo, "full_name") if isinstance(repo, Mapping) else None
    return name if isinstance(name, str) else None


def load_payload(path: str) -> dict[str, Any]:
    """The JSON object at GITHUB_EVENT_PATH; errors name the file and what is wrong."""
    file = Path(path)
    if not file.is_file():
        raise _problem(path, "event payload file not found (GITHUB_EVENT_PATH)")
    if file.stat().st_size > MAX_EVENT_BYTES:
        raise _problem(path, "event payload is larger than GitHub's 25 MB webhook limit")
    try:
        data = json.loads(file.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise _problem(path, f"event payload is not JSON: {exc}") from exc
    if not isinstance(data, dict):
        raise _problem(path, "event payload must be a JSON object")
    return data


def _pr_fields(pr: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "pr_number": pr.get("number"),
        "head_repository": _full_name(_get(pr, "head", "repo")),
        "head_sha": _get(pr, "head", "sha"),
        "head_ref": _get(pr, "head", "ref"),
        "base_ref": _get(pr, "base", "ref"),
        "base_sha": _get(pr, "base", "sha"),
    }


def parse_event(name: str, payload: Mapping[str, Any], env: Mapping[str, str],
                source: str = "GITHUB_EVENT_PATH") -> EventContext:
    """Reduce a webhook payload to an EventContext; unknown events are refused by name."""
    if name not in KNOWN_EVENTS:
        raise _problem("GITHUB_EVENT_NAME", f"event {name!r} is not supported; use one of: "
                       + ", ".join(KNOWN_EVENTS))
    repository = _full_name(payload.get("repository")) or env.get("GITHUB_REPOSITORY")
    if not repository or "/" not in repository:
        raise _problem(source, "no repository.full_name in the payload and no "
                       "GITHUB_REPOSITORY in the environment", "repository.full_name")
    fields: dict[str, Any] = {
        "name": name, "repository": repository, "action": payload.get("action"),
        "server_url": env.get("GITHUB_SERVER_URL") or "https://github.com",
        "api_url": env.get("GITHUB_API_URL") or "https://api.github.com",
        "run_id": env.get("GITHUB_RUN_ID") or None,
        "run_attempt": env.get("GITHUB_RUN_ATTEMPT") or None,
        "default_branch": _str_or_none(_get(payload, "repository", "default_branch")),
    }
    if name in ("pull_request", "pull_request_target"):
        pr = payload.get("pull_request")
        if not isinstance(pr, Mapping) or not isinstance(pr.get("number"), int):
            raise _problem(source, f"a {name} payload needs pull_request.number",
                           "pull_request.number")
        fields.update(_pr_fields(pr))
    elif name == "workflow_run":
        run = payload.get("workflow_run")
        if not isinstance(run, Mapping):
            raise _problem(source, "a workflow_run payload needs workflow_run", "workflow_run")
        fields["workflow_run_event"] = run.get("event")
        fields["head_sha"] = run.get("head_sha")
        fields["head_ref"] = run.get("head_branch")
        fields["head_repository"] = _full_name(run.get("head_repository"))
        prs = run.get("pull_requests")
        if isinstance(prs, list) and prs and isinstance(prs[0], Mapping):
            fields["pr_number"] = prs[0].get("number")
            fields["base_ref"] = _get(prs[0], "base", "ref")
            fields["base_sha"] = _get(prs[0], "base", "sha")
    elif name == "merge_group":  # the queue's temporary branch: head = the merged result
        group = payload.get("merge_group")
        if not isinstance(group, Mapping) or not group.get("head_sha"):
            raise _problem(source, "a merge_group payload needs merge_group.head_sha",
                           "merge_group.head_sha")
        fields["head_sha"] = group.get("head_sha")
        fields["ref"] = fields["head_ref"] = group.get("head_ref")
        fields["base_sha"] = group.get("base_sha")
        base = group.get("base_ref")
        fields["base_ref"] = base.removeprefix("refs/heads/") if isinstance(base, str) else None
    elif name == "issue_comment":
        issue = payload.get("issue")
        comment = payload.get("comment")
        if not isinstance(issue, Mapping) or not isinstance(comment, Mapping):
            raise _problem(source, "an issue_comment payload needs issue and comment",
                           "comment")
        if issue.get("pull_request") is not None:  # a comment on a PR, not on an issue
            fields["pr_number"] = issue.get("number")
        fields["comment_body"] = comment.get("body") or ""
        fields["comment_author"] = _get(comment, "user", "login")
        fields["comment_author_association"] = comment.get("author_association")
        fields["ref"] = env.get("GITHUB_REF")  # the default branch: PR facts come from the API
    else:
        fields["ref"] = payload.get("ref") or env.get("GITHUB_REF")
        fields["head_sha"] = (payload.get("after") if name == "push" else None) \
            or env.get("GITHUB_SHA")
        if name == "release":
            fields["tag"] = _get(payload, "release", "tag_name")
        if name == "workflow_dispatch" and isinstance(payload.get("inputs"), Mapping):
            fields["extra"] = {str(k): str(v) for k, v in payload["inputs"].items()}
        if name == "schedule" and isinstance(payload.get("schedule"), str):
            fields["extra"] = {"schedule": payload["schedule"]}
    return EventContext.model_validate(fields)


def read_event(env: Mapping[str, str]) -> EventContext:
    """The event of this workflow run, from GITHUB_EVENT_NAME and GITHUB_EVENT_PATH."""
    name = env.get("GITHUB_EVENT_NAME", "")
    if not name:
        raise _problem("GITHUB_EVENT_NAME", "not set: the action must run inside a GitHub "
                       "Actions workflow (or set GITHUB_EVENT_NAME and GITHUB_EVENT_PATH)")
    path = env.get("GITHUB_EVENT_PATH", "")
    if not path:
        raise _problem("GITHUB_EVENT_PATH", "not set: GitHub sets it to the event payload file")
    return parse_event(name, load_payload(path), env, path)
