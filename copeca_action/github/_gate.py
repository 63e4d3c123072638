"""Whether this event may run the benchmark at all, decided before any code runs.

Two rules keep secrets away from untrusted code:
- a fork PR under `pull_request` gets no secrets: the run is `skipped` (exit 0) and the
  comment says why, instead of a red job the contributor cannot fix;
- `pull_request_target` runs with the base repository's secrets, so running the PR head
  there hands them to whoever opened the PR: refused unless `allow-pull-request-target`;
- so does `workflow_run` after a fork's run: there only `merge:` (the fork-safe part 2) runs,
  unless `allow-pull-request-target`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from copeca_action.errors import ConfigError, Problem
from copeca_action.github._approval import how_to_approve
from copeca_action.github._event import EventContext
from copeca_action.github._inputs import SOURCE, ActionInputs

Decision = Literal["run", "skip"]

FORK_NO_SECRETS = (
    "This pull request comes from a fork ({head}), and GitHub does not give secrets to "
    "workflows triggered by fork pull requests, so no model API key reached this job. "
    "Nothing was run and nothing was charged. {approve}")
NO_SECRETS = (
    "No model API key reached this job (`anthropic-api-key` and `openai-api-key` are empty), "
    "so nothing was run. Pass a key from the repository's secrets, or set `dry-run: true` to "
    "run against the scripted model.")
PR_TARGET_REFUSED = (
    "refusing to run on `pull_request_target`: this event runs with the base repository's "
    "secrets, and the benchmark executes the pull request's code (its tool, its modes), which "
    "would hand those secrets to whoever opened the pull request. Use the `pull_request` + "
    "`workflow_run` pattern (docs/action.md), or set `allow-pull-request-target: true` only if "
    "every PR author is trusted")
WORKFLOW_RUN_FORK = (
    "refusing to run a scenario on `workflow_run` after a run of a fork ({head}): this event "
    "runs with the base repository's secrets and a write token, so running the checked-out "
    "code hands them to the fork's author when it is the fork's head, and posts the base's "
    "numbers as the pull request's when it is not. The fork-safe part 2 only combines part "
    "1's bundles (`merge:`, docs/action.md); to run a fork's code with the key, a maintainer "
    "approves one commit (`/copeca run SHA`). Set `allow-pull-request-target: true` only if "
    "every PR author is trusted")


@dataclass(frozen=True)
class Gate:
    decision: Decision
    reason: str = ""


def check_gate(event: EventContext, inputs: ActionInputs) -> Gate:
    """Run, or skip with a reason; raise when the configuration itself is unsafe."""
    if event.name == "pull_request_target" and not inputs.allow_pull_request_target:
        raise ConfigError(Problem(SOURCE, PR_TARGET_REFUSED, field="allow-pull-request-target"))
    if (event.name == "workflow_run" and event.is_fork and not inputs.merge
            and not inputs.allow_pull_request_target):
        raise ConfigError(Problem(SOURCE, WORKFLOW_RUN_FORK.format(head=event.head_repository),
                                  field="merge"))
    if inputs.dry_run or inputs.merge:
        return Gate("run")
    if not inputs.has_model_secrets:
        if event.is_fork:
            return Gate("skip", FORK_NO_SECRETS.format(head=event.head_repository,
                                                       approve=how_to_approve(event)))
        return Gate("skip", NO_SECRETS)
    return Gate("run")
