"""The history on a data branch, through the contract-checked fake API: three pushes to the
default branch append three entries, publish a live badge (valid shields endpoint JSON) and a
trend page; a release is marked; a pull request's comment compares with the last runs; a
token without `contents: write` warns and the run still succeeds."""

from __future__ import annotations

import copy
import datetime as dt
import json
import sys
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from fake_github import FakeGitHub
from gh_support import parse_outputs, payload

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "render"))
from html_cases import records

from copeca_action.github import (
    BundleInfo,
    History,
    Outcome,
    RetryPolicy,
    comment_data,
    history_entry,
    main,
    records_history,
)
from copeca_action.github._event import parse_event
from copeca_action.report import Report, Settings, build_report

OWNER, REPO = "Codertocat", "Hello-World"
BRANCH = (OWNER, REPO, "copeca-data")
SHIELDS_ENDPOINT = {
    # the shields.io endpoint schema (services/endpoint-common.js, Joi) as JSON Schema
    "type": "object", "additionalProperties": False,
    "required": ["schemaVersion", "label", "message"],
    "properties": {
        "schemaVersion": {"const": 1}, "label": {"type": "string"},
        "message": {"type": "string", "minLength": 1}, "color": {"type": "string"},
        "labelColor": {"type": "string"}, "isError": {"type": "boolean"},
        "namedLogo": {"type": "string"}, "logoSvg": {"type": "string"},
        "logoColor": {"type": "string"}, "logoWidth": {"type": "number"},
        "logoPosition": {"type": "number"}, "style": {"type": "string"},
        "cacheSeconds": {"type": "integer", "minimum": 0}},
    "not": {"required": ["namedLogo", "logoSvg"]},
}


def _report(ratio: float, seed: int) -> Report:
    return build_report(records(8, 2, ratio=ratio, control=2, seed=seed),
                        Settings(resamples=300, breakdown_resamples=100))


def _engine(report: Report) -> Any:
    def run(ctx: Any) -> Outcome:
        data = comment_data(report, BundleInfo(None, None, None),
                            comment_id=ctx.inputs.comment_id, tasks={})
        entry = history_entry(report, commit=ctx.event.head_sha or "",
                              date=dt.datetime(2026, 11, 1, tzinfo=dt.UTC), ref=ctx.event.ref or "",
                              event=ctx.event.name, tag=ctx.event.tag, scenario_digest="ab" * 32,
                              bundle_sha256="cd" * 32, run_url=ctx.event.run_url)
        return Outcome(comment=data, report=report, history=entry)
    return run


def _push(sha: str) -> dict[str, Any]:
    data = copy.deepcopy(payload("push"))
    data["ref"] = f"refs/heads/{data['repository']['default_branch']}"
    data["after"] = sha
    return data


def _run(env: dict[str, str], report: Report) -> int:
    return main(env, _engine(report), policy=RetryPolicy(attempts=2, backoff_s=0.01),
                sleep=lambda _: None)


def test_three_pushes_and_a_release_build_the_history_badge_and_trend(
        fake_github: FakeGitHub, actions_env: Any) -> None:
    for i, ratio in enumerate((1.0, 0.9, 0.8)):
        env = actions_env("push", _push(f"{i + 1:x}" * 40), fake_github.url, fail_on="never")
        assert _run(env, _report(ratio, seed=i)) == 0
    release = payload("release.published")
    env = actions_env("release", release, fake_github.url, fail_on="never")
    assert _run(env, _report(0.7, seed=9)) == 0

    files = fake_github.branches[BRANCH]
    assert "README.md" in files  # an orphan branch, not a copy of the code
    history = History.model_validate_json(files["copeca/copeca/history.json"])
    assert [e.commit[:1] for e in history.entries[:3]] == ["1", "2", "3"]
    assert history.entries[-1].tag == release["release"]["tag_name"]
    assert all(e.bundle_sha256 == "cd" * 32 and e.scenario_digest for e in history.entries)
    first = history.entries[0]
    assert {a.arm for a in first.arms} == {"baseline", "codesearch"}
    assert all(a.cpc_usd and a.cpc_low and a.cpc_high for a in first.arms)

    badge = json.loads(files["copeca/copeca/badge.json"])
    jsonschema.validate(badge, SHIELDS_ENDPOINT)
    page = files["copeca/copeca/index.html"].decode()
    assert page.count('class="mark est') == 8 and 'class="band' in page
    assert 'class="ref release"' in page
    out = parse_outputs(Path(env["GITHUB_OUTPUT"]))
    assert (Path(out["artifact-path"]) / "history.html").read_text() == page
    puts = [c for c in fake_github.calls if c.method == "PUT"]
    assert {c.body["branch"] for c in puts} == {"copeca-data"}


def test_a_bad_badge_is_refused_by_the_schema() -> None:
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"schemaVersion": 1, "label": "x", "message": ""},
                            SHIELDS_ENDPOINT)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"schemaVersion": 2, "label": "x", "message": "y"},
                            SHIELDS_ENDPOINT)


def test_a_pull_request_compares_with_the_last_runs_on_main(
        fake_github: FakeGitHub, actions_env: Any) -> None:
    for i in range(3):
        env = actions_env("push", _push(f"{i + 1:x}" * 40), fake_github.url, fail_on="never")
        assert _run(env, _report(1.0, seed=i)) == 0
    env = actions_env("pull_request", payload("pull_request.opened"), fake_github.url,
                      fail_on="never")
    assert _run(env, _report(0.6, seed=5)) == 0
    body = fake_github.comments[(OWNER, REPO, 2)][0]["body"]
    assert "over the last 3 runs on" in body
    # a median of earlier runs has no interval: the line says it is a point comparison
    assert "over the last 3 runs on master (a point comparison: no interval)." in body
    assert not any(c.method == "PUT" for c in fake_github.calls[-3:])  # a PR only reads


def test_a_pull_request_into_another_branch_names_the_branch_the_history_is_of(
        fake_github: FakeGitHub, actions_env: Any) -> None:
    """The history holds runs of the default branch (master in the payload); a pull request
    into `release-1.x` said "the last 3 runs on release-1.x", naming numbers it never had."""
    for i in range(3):
        env = actions_env("push", _push(f"{i + 1:x}" * 40), fake_github.url, fail_on="never")
        assert _run(env, _report(1.0, seed=i)) == 0
    data = payload("pull_request.opened")
    data["pull_request"]["base"]["ref"] = "release-1.x"
    env = actions_env("pull_request", data, fake_github.url, fail_on="never")
    assert _run(env, _report(0.6, seed=5)) == 0
    body = fake_github.comments[(OWNER, REPO, 2)][0]["body"]
    assert "over the last 3 runs on master" in body
    assert "release-1.x" not in body


def test_without_contents_write_the_history_warns_and_the_run_succeeds(
        fake_github: FakeGitHub, actions_env: Any, capsys: pytest.CaptureFixture[str]) -> None:
    fake_github.fail("POST", r"/git/trees$", 403, "Resource not accessible by integration")
    env = actions_env("push", _push("a" * 40), fake_github.url, fail_on="never")
    assert _run(env, _report(1.0, seed=1)) == 0
    printed = capsys.readouterr().out
    assert "history not updated" in printed and "contents: write" in printed
    assert parse_outputs(Path(env["GITHUB_OUTPUT"]))["verdict"]


def test_which_events_record_history() -> None:
    env = {"GITHUB_REPOSITORY": f"{OWNER}/{REPO}"}
    assert records_history(parse_event("push", _push("a" * 40), env))
    tag_push = copy.deepcopy(payload("push"))  # refs/tags/…: not the default branch
    assert not records_history(parse_event("push", tag_push, env))
    assert records_history(parse_event("release", payload("release.published"), env))
    assert not records_history(parse_event("pull_request", payload("pull_request.opened"),
                                           env))


def test_a_conflicting_write_is_read_again_and_no_entry_is_lost(
        fake_github: FakeGitHub, actions_env: Any) -> None:
    env = actions_env("push", _push("1" * 40), fake_github.url, fail_on="never")
    assert _run(env, _report(1.0, seed=1)) == 0
    # another job writes history.json between this job's read and its write
    fake_github.fail("PUT", r"history\.json$", 409, "history.json does not match")
    env = actions_env("push", _push("2" * 40), fake_github.url, fail_on="never")
    assert _run(env, _report(0.9, seed=2)) == 0
    history = History.model_validate_json(fake_github.branches[BRANCH][
        "copeca/copeca/history.json"])
    assert [e.commit[:1] for e in history.entries] == ["1", "2"]
    puts = [c for c in fake_github.calls if c.method == "PUT" and
            c.path.endswith("history.json")]
    assert [c.status for c in puts] == [201, 409, 200]


def test_the_history_names_each_deltas_confidence_level() -> None:
    """The history page showed "delta [CI]" with no level, though a run under adaptive
    sampling has a wider level than 95%: each interval now says its level, an entry written
    before the level was kept says it is not recorded, and a delta without finite bounds says
    it is a point estimate."""
    from copeca_action.github._history import trend_runs
    from copeca_action.render import render_history_html

    report = _report(0.6, seed=3)
    c = report.headline_comparison
    assert c is not None and c.delta.level == 0.95
    when = dt.datetime(2026, 11, 1, tzinfo=dt.UTC)
    entry = history_entry(report, commit="1" * 40, date=when)
    assert entry.delta_level == 0.95 and entry.delta_low is not None
    adaptive = entry.model_copy(update={"commit": "2" * 40, "delta_level": 0.9944})
    old = History.model_validate({"entries": [{
        k: v for k, v in entry.model_copy(update={"commit": "3" * 40}).model_dump(
            mode="json").items() if k != "delta_level"}]}).entries[0]
    point = entry.model_copy(update={"commit": "4" * 40, "delta_low": None,
                                     "delta_high": None})
    page = render_history_html(trend_runs(History(entries=[entry, adaptive, old, point])))
    rows = {line[line.index("<code>") + 6:][:1]: line
            for line in page.split("<tr>") if "<code>" in line}
    assert "delta [CI, level]" in page
    assert "] 95% CI</td>" in rows["1"] and "] 99.44% CI</td>" in rows["2"]
    assert "] (CI level not recorded)</td>" in rows["3"]
    assert "(point estimate: no finite interval recorded)</td>" in rows["4"]
