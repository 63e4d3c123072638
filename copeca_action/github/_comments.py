"""One PR comment per `comment-id`, updated in place on every run.

The comment carries a hidden marker naming its `comment-id`, so matrix jobs with different
ids keep separate comments and a re-run finds and edits its own. All pages of the PR's
comments are read (a busy PR has more than one page). A POST that fails with a 5xx may still
have created the comment, so before posting again the list is read once more; so it is when
the comment found was deleted before the edit reached it (404), and a new one is posted.

Anyone who can comment can copy the marker, and another bot on the repository (or one that
echoes comments) can post a body that starts with it. A comment is ours only when the identity
our token acts as wrote it (`token_login`: github-actions[bot] for the workflow's token, the
person for a personal token, `<app>[bot]` for an app's installation token) and the marker opens
its body (a quote of it is not ours). Anyone else's marked comment is never edited, nor read as
"already posted" by `comment: on-change`: a fork's author could otherwise plant a marked
comment, have the action write the verdict into it, then edit the verdict under the action's
marker. When several comments of ours carry the marker (a POST that failed yet was created),
the oldest is the one edited.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Literal

from copeca_action.errors import GitHubError
from copeca_action.github._client import GitHubClient

MARKER_PREFIX = "<!-- copeca-action:comment-id="
MAX_COMMENT_CHARS = 65_536
WRITE_ACCESS = frozenset({"admin", "maintain", "write"})
"""Collaborator permissions that may edit the repository (github/_approval.py)."""
_STATE = re.compile(r"<!-- copeca-action:state=([0-9a-f]{8,64}) -->")


def marker(comment_id: str) -> str:
    """The hidden first line that identifies our comment for this `comment-id`."""
    return f"{MARKER_PREFIX}{comment_id} -->"


def state_marker(state: str) -> str:
    return f"<!-- copeca-action:state={state} -->"


def state_of(body: str) -> str | None:
    match = _STATE.search(body)
    return match.group(1) if match else None


@dataclass(frozen=True)
class CommentResult:
    action: Literal["created", "updated", "unchanged"]
    id: int
    html_url: str


def _is_ours(comment: Any, mark: str) -> bool:
    body = comment.get("body") if isinstance(comment, dict) else None
    return isinstance(body, str) and body.lstrip().startswith(mark)  # not a quote of it


def _login(comment: dict[str, Any]) -> str | None:
    user = comment.get("user")
    login = user.get("login") if isinstance(user, dict) else None
    return login if isinstance(login, str) else None


def _oldest(comment: dict[str, Any]) -> tuple[str, int]:
    """Creation time, then id (ISO 8601 UTC times sort as text)."""
    created = comment.get("created_at")
    cid = comment.get("id")
    return (created if isinstance(created, str) else "", cid if isinstance(cid, int) else 0)


def find_comment(client: GitHubClient, owner: str, repo: str, number: int,
                 comment_id: str, author: str) -> dict[str, Any] | None:
    """Our comment on the PR, if any: the oldest whose body opens with the marker and whose
    author is `author` (the login our token acts as, `token_login`); a marked comment by
    anyone else, bot or person, is not ours."""
    mark = marker(comment_id)
    who = author.lower()  # GitHub logins are case-insensitive
    found = [c for c in client.paginate(f"repos/{owner}/{repo}/issues/{number}/comments",
                                        what="list pull request comments")
             if _is_ours(c, mark) and (_login(c) or "").lower() == who]
    return min(found, key=_oldest) if found else None


def upsert_comment(client: GitHubClient, owner: str, repo: str, number: int,
                   comment_id: str, body: str, *, author: str, only_on_change: bool = False,
                   post_attempts: int = 3) -> CommentResult:
    """Edit our comment (by `author`, the login our token acts as) if it exists, create it
    otherwise; never a second one, never someone else's."""
    mark = marker(comment_id)
    if not body.startswith(mark):
        body = f"{mark}\n{body}"
    if len(body) > MAX_COMMENT_CHARS:
        raise GitHubError(f"comment body is {len(body)} characters; GitHub's limit is "
                          f"{MAX_COMMENT_CHARS} (render it with a size limit)")
    why = "a server error; GitHub may be having trouble"
    for attempt in range(1, post_attempts + 1):
        existing = find_comment(client, owner, repo, number, comment_id, author)
        if existing is not None:
            updated = _update(client, owner, repo, existing, body, only_on_change)
            if updated is not None:
                return updated
            print(f"copeca-action: comment {existing['id']} was deleted while this job "
                  "edited it; posting a new one", flush=True)
            why = "the comment found was gone (404) each time it was edited"
            continue  # read the list again: post only when no comment of ours is left
        resp = client.request("POST", f"repos/{owner}/{repo}/issues/{number}/comments",
                              json={"body": body}, what="create the pull request comment",
                              permission="comment", retry_5xx=False)
        if resp.status_code < 500:
            data = resp.json()
            if (_login(data) or "").lower() != author.lower():
                print(f"copeca-action: warning: the comment was written as {_login(data)}, "
                      f"not {author} as expected: the next run will not find it to edit",
                      flush=True)
            return CommentResult("created", int(data["id"]), str(data["html_url"]))
        print(f"copeca-action: creating the comment got HTTP {resp.status_code}; checking "
              "whether it was created anyway", flush=True)
        why = "a server error; GitHub may be having trouble"
        client.backoff(attempt)
    raise GitHubError(f"create the pull request comment: failed {post_attempts} times: {why}")


def _update(client: GitHubClient, owner: str, repo: str, existing: dict[str, Any],
            body: str, only_on_change: bool) -> CommentResult | None:
    """The edit, or None when the comment is gone (404: deleted after the list was read)."""
    cid, url = int(existing["id"]), str(existing["html_url"])
    old = str(existing.get("body") or "")
    if old == body or (only_on_change and state_of(old) and state_of(old) == state_of(body)):
        return CommentResult("unchanged", cid, url)
    resp = client.request("PATCH", f"repos/{owner}/{repo}/issues/comments/{cid}",
                          json={"body": body}, what="update the pull request comment",
                          permission="comment", allow=(404,))
    if resp.status_code == 404:
        return None
    data = resp.json()
    return CommentResult("updated", int(data["id"]), str(data["html_url"]))
