"""Who may spend the model key on a pull request's code, and on which commit.

- `/copeca run [SHA]` in a pull request's comments (`issue_comment`): runs only when the API
  says the commenter has write access (admin, maintain or write) to this repository; the pull
  request's head is read from the API (never from the comment), must still start with the SHA
  the maintainer named, and must be what the workspace has checked out.
- The privileged half of the fork pattern (`workflow_run`): a PR number from an artifact is
  untrusted; it is used only when the API says that pull request's head is the commit the
  upstream run ran on (`workflow_run.head_sha`), so a fork cannot redirect the comment.
"""

from __future__ import annotations

import re
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from copeca_action import __version__
from copeca_action._util.text import one_line
from copeca_action.errors import ConfigError, GitHubError, Problem
from copeca_action.github._client import GitHubClient
from copeca_action.github._comments import WRITE_ACCESS
from copeca_action.github._event import EventContext
from copeca_action.github._inputs import SOURCE

COMMAND = "/copeca run"
DOCS_URL = (f"https://github.com/copeca-action/copeca-action/blob/v{__version__}/docs/"
            "action.md#pull-requests-from-forks")
_SHA = re.compile(r"^[0-9a-f]{7,40}\Z")


@dataclass(frozen=True)
class Approval:
    event: EventContext | None
    """The event with the pull request's facts from the API; None: do not run."""
    reason: str = ""
    """Why not (printed, never posted: anyone can write a comment)."""


def how_to_approve(event: EventContext) -> str:
    """The exact steps a maintainer takes to run the benchmark on this pull request."""
    sha = (event.head_sha or "")[:12] or "HEAD-SHA"
    where = (f"{event.server_url}/{event.repository}/pull/{event.pr_number}"
             if event.pr_number else f"{event.server_url}/{event.repository}/pulls")
    return (f"To run it, a maintainer with write access reviews the code and comments "
            f"`{COMMAND} {sha}` on {where} (the `copeca-approve` workflow then runs the "
            f"benchmark on exactly that commit with the repository's key; setup: {DOCS_URL}).")


def parse_command(body: str) -> tuple[bool, str | None]:
    """(is `/copeca run`, the SHA it pins or None) from the comment's first line."""
    first = body.strip().splitlines()[0].strip() if body.strip() else ""
    if first != COMMAND and not first.startswith(COMMAND + " "):
        return False, None
    rest = first[len(COMMAND):].split()
    return True, (rest[0].lower() if rest else None)


def _pull(client: GitHubClient, event: EventContext, number: int) -> dict[str, Any]:
    resp = client.request("GET", f"repos/{event.owner}/{event.repo}/pulls/{number}",
                          what=f"read pull request #{number}")
    data = resp.json()
    if not isinstance(data, dict):
        raise GitHubError(f"read pull request #{number}: the API answered no object")
    return data


def approve_comment(client: GitHubClient, event: EventContext) -> Approval:
    """An `issue_comment` event as a run on the pull request's head, or why not."""
    if event.pr_number is None:
        return Approval(None, "the comment is on an issue, not a pull request")
    is_command, pin = parse_command(event.comment_body or "")
    if not is_command:
        return Approval(None, f"the comment is not a `{COMMAND}` command")
    if pin is not None and not _SHA.match(pin):
        return Approval(None, f"`{COMMAND} {one_line(pin, 48)}`: expected a commit SHA (7 "
                        "to 40 hex digits)")  # anyone's text: cut (escaped where shown)
    user = event.comment_author or ""
    resp = client.request("GET", f"repos/{event.owner}/{event.repo}/collaborators/"
                          f"{user}/permission", what=f"read {user}'s permission")
    data = resp.json()
    level = str(data.get("permission") or "none")  # admin, write, read, none (maintain: write)
    role = str(data.get("role_name") or level)
    if level not in WRITE_ACCESS:
        return Approval(None, f"{user} has {role} access to {event.repository}; "
                        f"`{COMMAND}` needs write access")
    pr = _pull(client, event, event.pr_number)
    if pr.get("state") != "open":
        return Approval(None, f"pull request #{event.pr_number} is {pr.get('state')}")
    head = str(pr["head"]["sha"])
    if pin is not None and not head.startswith(pin):
        return Approval(None, f"the pull request's head moved to {head[:12]} after "
                        f"{user} approved {pin}; review it and comment `{COMMAND} "
                        f"{head[:12]}`")
    head_repo = (pr["head"].get("repo") or {}).get("full_name")
    approved = event.model_copy(update={
        "head_sha": head, "head_ref": pr["head"].get("ref"), "head_repository": head_repo,
        "base_ref": pr["base"].get("ref"), "base_sha": pr["base"].get("sha")})
    print(f"copeca-action: {user} ({role}) approved a run of #{event.pr_number} at "
          f"{head[:12]} ({head_repo})", flush=True)
    return Approval(approved)


def check_checkout(tool_dir: Path, head_sha: str) -> None:
    """The tool checkout is the approved commit (the workflow checks out the PR head)."""
    done = subprocess.run(["git", "-C", str(tool_dir), "rev-parse", "HEAD"],
                          capture_output=True, text=True, check=False)
    found = done.stdout.strip()
    if done.returncode != 0 or found != head_sha:
        raise ConfigError(Problem(SOURCE, f"tool-dir {tool_dir} has {found or 'no commit'} "
                                  f"checked out, but the approved pull request head is "
                                  f"{head_sha}: check out `refs/pull/N/head` (or the approved "
                                  "SHA) before this step", field="tool-dir"))


def verify_pull_request(client: GitHubClient, event: EventContext, number: int) -> None:
    """A PR number that came from an artifact (untrusted) names the pull request whose head
    is the commit the upstream run ran on; else the comment would go to someone else's PR."""
    if not event.head_sha:
        raise ConfigError(Problem(SOURCE, "pull-request is given but the event names no head "
                                  "commit to check it against", field="pull-request"))
    pr = _pull(client, event, number)
    head = str(pr["head"]["sha"])
    head_repo = (pr["head"].get("repo") or {}).get("full_name")
    if head != event.head_sha or (event.head_repository and head_repo
                                  and head_repo.lower() != event.head_repository.lower()):
        raise ConfigError(Problem(
            SOURCE, f"refusing to comment on pull request #{number}: its head is {head[:12]} "
            f"({head_repo}), but the run that uploaded the artifact ran on "
            f"{event.head_sha[:12]} ({event.head_repository}). The PR number in an artifact "
            "is untrusted: a fork can write any number there (or the PR moved on; the newer "
            "run comments)", field="pull-request"))
