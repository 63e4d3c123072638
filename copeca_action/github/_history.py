"""The history: one summary per run on the default branch, a release or a schedule, kept in
the user's repository on a data branch, with a live badge and a trend page beside it.

Written through the contents API (the job needs `permissions: contents: write`); read by a
pull request's job to say how its run compares with the last runs on the default branch. A
Report never reads the history: this module builds an entry from a finished Report, and the
renderers take the history as their own input (render/_trend.py).

On the data branch, per `comment-id`:
  copeca/<id>/history.json   every entry, oldest first (at most MAX_ENTRIES)
  copeca/<id>/badge.json     the latest run's badge as a shields.io endpoint JSON
  copeca/<id>/index.html     the trend chart and the table of runs
"""

from __future__ import annotations

import base64
import datetime as dt
import json
import statistics
from typing import Any, Literal

from pydantic import ValidationError

from copeca_action._util.model import RecordModel
from copeca_action.errors import GitHubError
from copeca_action.github._badge import badge_endpoint, badge_input
from copeca_action.github._client import GitHubClient
from copeca_action.github._comment_data import HistoryLine
from copeca_action.github._event import EventContext
from copeca_action.render import TrendArm, TrendRun, render_history_html
from copeca_action.report import Report

DATA_BRANCH = "copeca-data"
MAX_ENTRIES = 1000
"""Older entries are dropped so history.json stays small (about 1 kB an entry)."""
COMPARE_LAST = 10
"""A pull request's comment compares with this many last runs on the default branch."""
CONFLICT_RETRIES = 3
"""Another job wrote the same file between our read and write: read again, append again."""
README = (b"# copeca-action data\n\nWritten by copeca-action: per comment-id, history.json "
          b"(one summary per run on the default branch, releases and schedules), badge.json "
          b"(a shields.io endpoint) and index.html (the trend). Not code: do not merge.\n")
Trigger = Literal["push", "release", "schedule", "workflow_dispatch"]


class ArmPoint(RecordModel):
    """One arm's numbers on the headline population (the report's `overall` line)."""

    arm: str
    cpc_usd: float | None
    """None when unknown; a cost per correct with nothing correct is None with `correct` 0."""
    cpc_low: float | None = None
    cpc_high: float | None = None
    accuracy: float | None = None
    spend_usd: float | None = None
    runs: int = 0
    correct: int | None = None


class HistoryEntry(RecordModel):
    """One run's summary, as published: the numbers of its report and comment."""

    commit: str
    date: dt.datetime
    ref: str = ""
    event: str = ""
    tag: str | None = None
    """The release's tag (marked on the trend)."""
    verdict: str
    tool: str = ""
    base: str = ""
    delta: float | None = None
    delta_low: float | None = None
    delta_high: float | None = None
    delta_level: float | None = None
    """The confidence level of [delta_low, delta_high] (0.95, or an adaptive look's or a
    split alpha's); None in entries written before it was kept, which say so."""
    arms: list[ArmPoint] = []
    spend_usd: float
    """All arms and tasks (control included): what the run cost."""
    scenario: str = ""
    scenario_digest: str = ""
    """sha256 of the scenario file the run used."""
    bundle_sha256: str | None = None
    simulated: bool = False
    run_url: str | None = None


class History(RecordModel):
    schema_version: Literal[1] = 1
    entries: list[HistoryEntry] = []


def _num(v: float | None) -> float | None:
    """JSON has no ∞ or NaN: an unbounded or undefined value is stored as null."""
    return None if v is None or v != v or v in (float("inf"), float("-inf")) else v


def history_entry(report: Report, *, commit: str, date: dt.datetime, ref: str = "",
                  event: str = "", tag: str | None = None, scenario_digest: str = "",
                  bundle_sha256: str | None = None, run_url: str | None = None
                  ) -> HistoryEntry:
    """The entry of a finished Report: its headline comparison's delta and, per arm, the
    `overall` line (the population the comment's table shows)."""
    c = report.headline_comparison
    arms: list[ArmPoint] = []
    if c is not None and c.overall is not None:
        o = c.overall
        for arm, cpc, i, acc, spend, runs, correct in (
                (c.base, o.cpc_base, o.interval_base, o.accuracy_base, o.spend_base,
                 o.runs_base, o.correct_base),
                (c.tool, o.cpc_tool, o.interval_tool, o.accuracy_tool, o.spend_tool,
                 o.runs_tool, o.correct_tool)):
            arms.append(ArmPoint(arm=arm, cpc_usd=_num(cpc),
                                 cpc_low=_num(i.cpc_low) if i else None,
                                 cpc_high=_num(i.cpc_high) if i else None, accuracy=acc,
                                 spend_usd=spend, runs=runs, correct=correct))
    return HistoryEntry(
        commit=commit, date=date, ref=ref, event=event, tag=tag, verdict=report.verdict,
        tool=c.tool if c else "", base=c.base if c else "",
        delta=_num(c.delta.estimate) if c else None, delta_low=_num(c.delta.low) if c else None,
        delta_high=_num(c.delta.high) if c else None,
        delta_level=c.delta.level if c else None, arms=arms,
        spend_usd=(report.spend.total_usd if report.spend is not None
                   else sum(a.spend_usd for a in report.arms)), scenario=report.scenario,
        scenario_digest=scenario_digest, bundle_sha256=bundle_sha256,
        simulated=report.simulated, run_url=run_url)


def records_history(event: EventContext) -> bool:
    """Runs that join the history: pushes to the default branch, releases, schedules (and a
    manual dispatch on the default branch). Pull requests only read it."""
    default = f"refs/heads/{event.default_branch}" if event.default_branch else None
    if event.name == "release":
        return True
    if event.name in ("push", "workflow_dispatch"):
        return default is not None and event.ref == default
    return str(event.name) == "schedule"  # once the action accepts scheduled runs


def trend_runs(history: History) -> list[TrendRun]:
    return [TrendRun(commit=e.commit, date=e.date.isoformat(), verdict=e.verdict,
                     arms=[TrendArm(a.arm, a.cpc_usd, a.cpc_low, a.cpc_high) for a in e.arms],
                     release=e.tag, delta=e.delta, delta_low=e.delta_low,
                     delta_high=e.delta_high, delta_level=e.delta_level,
                     accuracy={a.arm: a.accuracy for a in e.arms},
                     spend_usd=e.spend_usd, simulated=e.simulated, run_url=e.run_url,
                     bundle_sha256=e.bundle_sha256, scenario_digest=e.scenario_digest)
            for e in history.entries]


def history_line(history: History, cpc_tool: float | None, tool: str, branch: str,
                 last: int = COMPARE_LAST) -> HistoryLine | None:
    """This run's tool cost per correct against the median of the last runs (of the same
    tool arm, measured, not simulated) on the default branch; None without any."""
    values = [a.cpc_usd for e in history.entries if not e.simulated for a in e.arms
              if a.arm == tool and a.cpc_usd is not None][-last:]
    if not values:
        return None
    return HistoryLine(runs=len(values), branch=branch,
                       median_cpc_tool=float(statistics.median(values)),
                       cpc_tool=_num(cpc_tool))


# ---------------------------------------------------------------- the contents API


def _path(comment_id: str, name: str) -> str:
    return f"copeca/{comment_id}/{name}"


def read_file(client: GitHubClient, owner: str, repo: str, branch: str,
              path: str) -> tuple[bytes | None, str | None]:
    """The file's bytes and blob sha on `branch`; (None, None) when it (or the branch) does
    not exist."""
    resp = client.request("GET", f"/repos/{owner}/{repo}/contents/{path}",
                          params={"ref": branch}, what=f"read {path} on {branch}",
                          permission="read", allow=(404,))
    if resp.status_code == 404:
        return None, None
    body = resp.json()
    if not isinstance(body, dict) or body.get("type") != "file":
        raise GitHubError(f"{path} on {branch} is not a file")
    return base64.b64decode(body.get("content") or ""), str(body["sha"])


def ensure_branch(client: GitHubClient, owner: str, repo: str, branch: str) -> None:
    """Create `branch` as an orphan (one commit holding a README) unless it exists: the
    data never mixes with the code's history."""
    resp = client.request("GET", f"/repos/{owner}/{repo}/git/ref/heads/{branch}",
                          what=f"look up branch {branch}", permission="read", allow=(404,))
    if resp.status_code != 404:
        return
    tree = client.request("POST", f"/repos/{owner}/{repo}/git/trees", json={"tree": [
        {"path": "README.md", "mode": "100644", "type": "blob",
         "content": README.decode()}]}, what="create the data branch's tree",
        permission="contents").json()
    commit = client.request("POST", f"/repos/{owner}/{repo}/git/commits", json={
        "message": "copeca-action: start the data branch", "tree": tree["sha"],
        "parents": []}, what="create the data branch's first commit",
        permission="contents").json()
    made = client.request("POST", f"/repos/{owner}/{repo}/git/refs", json={
        "ref": f"refs/heads/{branch}", "sha": commit["sha"]},
        what=f"create branch {branch}", permission="contents", allow=(422,))
    if made.status_code == 422:  # another job created it meanwhile: fine
        return


def write_file(client: GitHubClient, owner: str, repo: str, branch: str, path: str,
               content: bytes, message: str, sha: str | None) -> bool:
    """Create or update; False on a conflict (the file changed since `sha` was read)."""
    body: dict[str, Any] = {"message": message, "branch": branch,
                            "content": base64.b64encode(content).decode()}
    if sha:
        body["sha"] = sha
    resp = client.request("PUT", f"/repos/{owner}/{repo}/contents/{path}", json=body,
                          what=f"write {path} on {branch}", permission="contents",
                          allow=(409,))
    return resp.status_code != 409


def read_history(client: GitHubClient, owner: str, repo: str, comment_id: str,
                 branch: str = DATA_BRANCH) -> tuple[History, str | None]:
    raw, sha = read_file(client, owner, repo, branch, _path(comment_id, "history.json"))
    if raw is None:
        return History(), None
    try:
        return History.model_validate_json(raw), sha
    except ValidationError as exc:
        raise GitHubError(f"{_path(comment_id, 'history.json')} on {branch} is not a history "
                          f"copeca-action wrote ({exc.errors()[0]['msg']}); move it away and "
                          "the next run starts a new one") from exc


def publish_history(client: GitHubClient, owner: str, repo: str, comment_id: str,
                    entry: HistoryEntry, report: Report, *, branch: str = DATA_BRANCH,
                    title: str = "") -> History:
    """Append `entry` to history.json (again from a fresh read when another job wrote in
    between), then write the live badge and the trend page; returns the history written."""
    ensure_branch(client, owner, repo, branch)
    path = _path(comment_id, "history.json")
    for _attempt in range(CONFLICT_RETRIES):
        history, sha = read_history(client, owner, repo, comment_id, branch)
        entries = [e for e in history.entries
                   if not (e.commit == entry.commit and e.run_url == entry.run_url)]
        history = History(entries=[*entries, entry][-MAX_ENTRIES:])
        text = history.model_dump_json(indent=1).encode() + b"\n"
        if write_file(client, owner, repo, branch, path, text,
                      f"copeca-action: {entry.verdict} at {entry.commit[:12]}", sha):
            break
    else:
        raise GitHubError(f"write {path} on {branch}: it kept changing under this job "
                          f"({CONFLICT_RETRIES} attempts); re-run the job")
    badge = json.dumps(badge_endpoint(badge_input(report)), ensure_ascii=False,
                       indent=2).encode() + b"\n"
    page = render_history_html(trend_runs(history), title=title or f"{owner}/{repo}: "
                               f"{comment_id}").encode()
    for name, content in (("badge.json", badge), ("index.html", page)):
        file = _path(comment_id, name)
        for _attempt in range(CONFLICT_RETRIES):
            _old, sha = read_file(client, owner, repo, branch, file)
            if write_file(client, owner, repo, branch, file, content,
                          f"copeca-action: {name} at {entry.commit[:12]}", sha):
                break
    return history


def badge_url(owner: str, repo: str, comment_id: str, branch: str = DATA_BRANCH) -> str:
    """The README badge: shields.io's endpoint badge over the raw badge.json."""
    raw = (f"https://raw.githubusercontent.com/{owner}/{repo}/{branch}/"
           f"{_path(comment_id, 'badge.json')}")
    return f"https://img.shields.io/endpoint?url={raw}"
