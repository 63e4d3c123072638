"""An optional Checks API run: the verdict as a named check on the head commit, created
`in_progress` when the job starts and completed with the verdict at the end. Its name carries
the `comment-id`, so matrix jobs keep one check each (a merge queue can require each)."""

from __future__ import annotations

from dataclasses import dataclass

from copeca_action.github._client import GitHubClient
from copeca_action.github._markdown import cut_markdown

CONCLUSIONS = {
    "improvement": "success",
    "inconclusive": "neutral",
    "regression": "failure",
    "invalid": "failure",
    "skipped": "skipped",
}
MAX_SUMMARY = 65_535
"""A check run's output.summary, one character below the comment's limit."""


def fit_summary(summary: str) -> str:
    """The summary within MAX_SUMMARY, cut at a line with what it leaves open closed."""
    return cut_markdown(summary, MAX_SUMMARY, "*(truncated: the full report is in the bundle)*")


@dataclass(frozen=True)
class CheckRun:
    id: int
    html_url: str


def check_name(comment_id: str) -> str:
    return "copeca-action" if comment_id == "copeca" else f"copeca-action ({comment_id})"


def start_check_run(client: GitHubClient, owner: str, repo: str, head_sha: str, name: str,
                    details_url: str | None = None) -> CheckRun:
    """An `in_progress` check run, shown on the commit while the benchmark runs."""
    payload: dict[str, object] = {"name": name, "head_sha": head_sha, "status": "in_progress",
                                  "output": {"title": "running",
                                             "summary": "copeca-action is running the plan."}}
    if details_url:
        payload["details_url"] = details_url
    resp = client.request("POST", f"repos/{owner}/{repo}/check-runs", json=payload,
                          what="create the check run", permission="check")
    data = resp.json()
    return CheckRun(int(data["id"]), str(data.get("html_url") or ""))


def complete_check_run(client: GitHubClient, owner: str, repo: str, run_id: int,
                       verdict: str, title: str, summary: str) -> CheckRun:
    """The started check run, completed with the verdict's conclusion."""
    summary = fit_summary(summary)
    payload: dict[str, object] = {"status": "completed",
                                  "conclusion": CONCLUSIONS.get(verdict, "neutral"),
                                  "output": {"title": title[:255], "summary": summary}}
    resp = client.request("PATCH", f"repos/{owner}/{repo}/check-runs/{run_id}", json=payload,
                          what="complete the check run", permission="check")
    data = resp.json()
    return CheckRun(int(data["id"]), str(data.get("html_url") or ""))


def create_check_run(client: GitHubClient, owner: str, repo: str, head_sha: str,
                     verdict: str, title: str, summary: str, details_url: str | None = None,
                     name: str = "copeca-action") -> CheckRun:
    """A completed check run whose conclusion follows the verdict."""
    summary = fit_summary(summary)
    payload: dict[str, object] = {
        "name": name, "head_sha": head_sha, "status": "completed",
        "conclusion": CONCLUSIONS.get(verdict, "neutral"),
        "output": {"title": title[:255], "summary": summary},
    }
    if details_url:
        payload["details_url"] = details_url
    resp = client.request("POST", f"repos/{owner}/{repo}/check-runs", json=payload,
                          what="create the check run", permission="check")
    data = resp.json()
    return CheckRun(int(data["id"]), str(data.get("html_url") or ""))
