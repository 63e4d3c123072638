"""An optional Checks API run: the verdict as a named check on the head commit."""

from __future__ import annotations

from dataclasses import dataclass

from copeca_action.github._client import GitHubClient

CONCLUSIONS = {
    "improvement": "success",
    "inconclusive": "neutral",
    "regression": "failure",
    "invalid": "failure",
    "skipped": "skipped",
}
MAX_SUMMARY = 65_535


@dataclass(frozen=True)
class CheckRun:
    id: int
    html_url: str


def create_check_run(client: GitHubClient, owner: str, repo: str, head_sha: str,
                     verdict: str, title: str, summary: str, details_url: str | None = None,
                     name: str = "copeca-action") -> CheckRun:
    """A completed check run whose conclusion follows the verdict."""
    if len(summary) > MAX_SUMMARY:
        summary = summary[:MAX_SUMMARY - 40] + "\n\n*(truncated; see the bundle)*"
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
