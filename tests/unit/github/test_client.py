"""The REST client and the comment upsert against the contract-checking fake API."""

from __future__ import annotations

import pytest
from fake_github import APP_TOKEN, IDENTITIES, OTHER_BOT, PAT_TOKEN, FakeGitHub
from gh_support import TOKEN

from copeca_action.errors import GitHubError
from copeca_action.github import (
    GitHubClient,
    RetryPolicy,
    create_check_run,
    find_comment,
    marker,
    upsert_comment,
)
from copeca_action.github._identity import graphql_url, token_login

FAST = RetryPolicy(attempts=3, backoff_s=0.5, max_wait_s=30)
BOT = "github-actions[bot]"
"""The login the workflow's token (TOKEN) writes comments as."""


def client(fake: FakeGitHub, sleeps: list[float] | None = None) -> GitHubClient:
    log = sleeps if sleeps is not None else []
    return GitHubClient(TOKEN, fake.url, policy=FAST, sleep=log.append)


def test_create_then_update_never_a_second_comment(fake_github: FakeGitHub) -> None:
    c = client(fake_github)
    first = upsert_comment(c, "o", "r", 5, "copeca", "one", author=BOT)
    second = upsert_comment(c, "o", "r", 5, "copeca", "two", author=BOT)
    assert (first.action, second.action) == ("created", "updated")
    assert first.id == second.id
    comments = fake_github.comments[("o", "r", 5)]
    assert len(comments) == 1 and comments[0]["body"] == marker("copeca") + "\ntwo"
    assert upsert_comment(c, "o", "r", 5, "copeca", "two", author=BOT).action == "unchanged"


def test_comment_ids_keep_separate_comments(fake_github: FakeGitHub) -> None:
    c = client(fake_github)
    upsert_comment(c, "o", "r", 5, "shard-a", "a", author=BOT)
    upsert_comment(c, "o", "r", 5, "shard-b", "b", author=BOT)
    upsert_comment(c, "o", "r", 5, "shard-a", "a2", author=BOT)
    assert [x["body"].split("\n")[1] for x in fake_github.comments[("o", "r", 5)]] == ["a2", "b"]


def test_finds_our_comment_on_the_last_of_many_pages(fake_github: FakeGitHub) -> None:
    fake_github.seed("o", "r", 5, [f"chatter {i}" for i in range(250)])
    fake_github.seed("o", "r", 5, [marker("copeca") + "\nold"], bot=True)
    found = find_comment(client(fake_github), "o", "r", 5, "copeca", BOT)
    assert found is not None and found["body"].endswith("old")
    pages = [call.query.get("page", ["1"])[0] for call in fake_github.calls]
    assert pages == ["1", "2", "3"]


def test_a_users_copy_of_the_marker_loses_to_the_bot_comment(fake_github: FakeGitHub) -> None:
    fake_github.seed("o", "r", 5, [f"{marker('copeca')} copied by a user"], bot=False)
    fake_github.seed("o", "r", 5, [marker("copeca") + "\nours"], bot=True)
    found = find_comment(client(fake_github), "o", "r", 5, "copeca", BOT)
    assert found is not None and found["body"].endswith("ours")


@pytest.mark.parametrize("association", ["CONTRIBUTOR", "FIRST_TIME_CONTRIBUTOR", "NONE"])
def test_a_marked_comment_by_an_outsider_is_never_ours(fake_github: FakeGitHub,
                                                        association: str) -> None:
    """A fork's author plants the marker (and a state marker) before the first run: the
    action posts its own comment instead of writing the verdict into theirs, where they could
    edit it and `on-change` would leave the edit standing."""
    planted = (f"{marker('copeca')}\n<!-- copeca-action:state=0123456789abcdef -->\n"
               "### 🟢 copeca-action: improvement")
    fake_github.seed("o", "r", 5, [planted], bot=False)
    fake_github.comments[("o", "r", 5)][0]["author_association"] = association
    assert find_comment(client(fake_github), "o", "r", 5, "copeca", BOT) is None
    result = upsert_comment(client(fake_github), "o", "r", 5, "copeca",
                            f"{marker('copeca')}\n<!-- copeca-action:state=0123456789abcdef -->"
                            "\n### ⚪ copeca-action: inconclusive", author=BOT,
                            only_on_change=True)
    assert result.action == "created"
    first, ours = fake_github.comments[("o", "r", 5)]
    assert first["body"] == planted and "inconclusive" in ours["body"]


@pytest.mark.parametrize("association", ["MEMBER", "COLLABORATOR", "OWNER"])
def test_a_marked_comment_by_a_person_is_never_the_bots(fake_github: FakeGitHub,
                                                        association: str) -> None:
    """Whatever their standing (a reader, a member, even the owner), a person's marked
    comment is not the comment the workflow's token wrote: it is never edited."""
    planted = f"{marker('copeca')}\n### 🟢 copeca-action: improvement"
    fake_github.seed("o", "r", 5, [planted], bot=False)
    fake_github.comments[("o", "r", 5)][0]["author_association"] = association
    assert find_comment(client(fake_github), "o", "r", 5, "copeca", BOT) is None
    result = upsert_comment(client(fake_github), "o", "r", 5, "copeca", "inconclusive",
                            author=BOT)
    assert result.action == "created"
    assert [c["body"] for c in fake_github.comments[("o", "r", 5)]] == [
        planted, marker("copeca") + "\ninconclusive"]


def test_another_bots_marked_comment_is_never_ours(fake_github: FakeGitHub) -> None:
    """Another app on the repository posts a body that opens with our marker (an echo bot
    repeating our comment, state marker and all): it is a Bot's comment, but not ours. The
    action neither edits it (GitHub would answer 403) nor, with `on-change`, takes it for
    its own unchanged comment and stays silent."""
    body = (f"{marker('copeca')}\n<!-- copeca-action:state=0123456789abcdef -->\n"
            "### ⚪ copeca-action: inconclusive")
    fake_github.seed("o", "r", 5, [body], author=OTHER_BOT)
    assert fake_github.comments[("o", "r", 5)][0]["user"]["type"] == "Bot"
    result = upsert_comment(client(fake_github), "o", "r", 5, "copeca", body, author=BOT,
                            only_on_change=True)
    assert result.action == "created"
    echo, ours = fake_github.comments[("o", "r", 5)]
    assert echo["user"]["login"] == OTHER_BOT.login and ours["user"]["login"] == BOT
    assert [c.method for c in fake_github.calls if c.method != "GET"] == ["POST"]


def test_the_oldest_of_our_marked_comments_is_edited(fake_github: FakeGitHub) -> None:
    """Two comments of ours (a POST that failed yet was created, on an earlier run): the
    oldest is edited, whatever order the list gives; the other bot's older one is left."""
    fake_github.seed("o", "r", 5, [marker("copeca") + "\necho"], author=OTHER_BOT)
    fake_github.seed("o", "r", 5, [marker("copeca") + "\nnewer", marker("copeca") + "\nolder"],
                     bot=True)
    echo, newer, older = fake_github.comments[("o", "r", 5)]
    echo["created_at"] = "2026-01-01T00:00:00Z"
    newer["created_at"], older["created_at"] = "2026-03-01T00:00:00Z", "2026-02-01T00:00:00Z"
    result = upsert_comment(client(fake_github), "o", "r", 5, "copeca", "new", author=BOT)
    assert result.action == "updated" and result.id == older["id"]
    assert [c["body"].split("\n")[1] for c in (echo, newer, older)] == ["echo", "newer", "new"]


@pytest.mark.parametrize(("token", "login"), [(PAT_TOKEN, "maintainer"),
                                              (APP_TOKEN, "copeca-app[bot]")])
def test_a_personal_or_app_token_edits_its_own_comment_only(
        fake_github: FakeGitHub, token: str, login: str) -> None:
    """A personal token writes as its owner, an app's installation token as the app's bot:
    `token_login` names them (GET /user; GraphQL's viewer where GET /user is refused), the
    second run edits the first run's comment, and the workflow bot's marked comment on the
    same PR (another job's, with the default token) is left alone."""
    fake_github.seed("o", "r", 5, [marker("copeca") + "\nthe workflow bot's"], bot=True)
    c = GitHubClient(token, fake_github.url, policy=FAST, sleep=lambda s: None)
    assert token_login(c) == login
    first = upsert_comment(c, "o", "r", 5, "copeca", "one", author=login)
    second = upsert_comment(c, "o", "r", 5, "copeca", "two", author=login)
    assert (first.action, second.action) == ("created", "updated") and first.id == second.id
    bodies = [(x["user"]["login"], x["body"]) for x in fake_github.comments[("o", "r", 5)]]
    assert bodies == [(BOT, marker("copeca") + "\nthe workflow bot's"),
                      (login, marker("copeca") + "\ntwo")]


def test_the_workflow_token_is_the_actions_bot(fake_github: FakeGitHub) -> None:
    """The workflow's GITHUB_TOKEN is the Actions app's installation token: GET /user is
    refused and GraphQL's viewer names github-actions[bot]; told it is the workflow's token
    (action.yml's COPECA_WORKFLOW_TOKEN), no call is made at all."""
    assert IDENTITIES[TOKEN].login == BOT
    assert token_login(client(fake_github)) == BOT
    assert [(x.method, x.path, x.status) for x in fake_github.calls] == [
        ("GET", "/user", 403), ("POST", "/graphql", 200)]
    assert token_login(client(fake_github), workflow_token=True) == BOT
    assert len(fake_github.calls) == 2


def test_an_identity_that_cannot_be_learned_is_a_named_error(fake_github: FakeGitHub) -> None:
    fake_github.fail("POST", r"^/graphql$", 200, "Resource not accessible by integration")
    with pytest.raises(GitHubError, match=r"whose token github-token is.*cannot tell"):
        token_login(client(fake_github))


@pytest.mark.parametrize(("api", "graphql"), [
    ("https://api.github.com", "https://api.github.com/graphql"),
    ("https://ghe.example.com/api/v3/", "https://ghe.example.com/api/graphql")])
def test_graphql_sits_beside_the_rest_root(api: str, graphql: str) -> None:
    assert graphql_url(GitHubClient(TOKEN, api).api_url) == graphql


def test_502_then_success_is_retried_with_backoff(fake_github: FakeGitHub) -> None:
    fake_github.fail("GET", r"/comments$", 502, "Server Error")
    sleeps: list[float] = []
    result = upsert_comment(client(fake_github, sleeps), "o", "r", 5, "copeca", "body", author=BOT)
    assert result.action == "created"
    assert sleeps == [0.5]
    assert [c.status for c in fake_github.calls] == [502, 200, 201]


def test_a_failed_post_is_not_repeated_blindly(fake_github: FakeGitHub) -> None:
    """GitHub may create the comment and still answer 502: look again before posting."""
    fake_github.fail("POST", r"/comments$", 502, "Bad Gateway", after_effect=True)
    result = upsert_comment(client(fake_github), "o", "r", 5, "copeca", "body", author=BOT)
    assert result.action == "unchanged"
    assert len(fake_github.comments[("o", "r", 5)]) == 1
    assert [(c.method, c.status) for c in fake_github.calls] == [
        ("GET", 200), ("POST", 502), ("GET", 200)]


def test_secondary_rate_limit_honours_retry_after(fake_github: FakeGitHub) -> None:
    fake_github.fail("POST", r"/comments$", 403, "You have exceeded a secondary rate limit.",
                     headers={"Retry-After": "7"})
    sleeps: list[float] = []
    result = upsert_comment(client(fake_github, sleeps), "o", "r", 5, "copeca", "x", author=BOT)
    assert result.action == "created" and sleeps == [7.0]


def test_an_exhausted_primary_limit_waits_until_its_reset(fake_github: FakeGitHub) -> None:
    """403 with x-ratelimit-remaining 0: wait until x-ratelimit-reset (epoch seconds)."""
    import time

    reset = int(time.time()) + 20
    fake_github.fail("GET", r"/comments$", 403, "API rate limit exceeded for installation.",
                     headers={"x-ratelimit-remaining": "0", "x-ratelimit-reset": str(reset)})
    sleeps: list[float] = []
    result = upsert_comment(client(fake_github, sleeps), "o", "r", 5, "copeca", "x", author=BOT)
    assert result.action == "created"
    assert len(sleeps) == 1 and 15 <= sleeps[0] <= 22


def test_a_429_without_headers_or_words_is_a_rate_limit(fake_github: FakeGitHub) -> None:
    """429 Too Many Requests is a rate limit whatever its body says: retried after GitHub's
    one minute (it failed the job at once, as an unknown error)."""
    fake_github.fail("POST", r"/comments$", 429, "Too Many Requests")
    sleeps: list[float] = []
    c = GitHubClient(TOKEN, fake_github.url, policy=RetryPolicy(), sleep=sleeps.append)
    assert upsert_comment(c, "o", "r", 5, "copeca", "x", author=BOT).action == "created"
    assert sleeps == [60.0]


def test_a_wait_longer_than_the_cap_fails_and_names_it(fake_github: FakeGitHub) -> None:
    fake_github.fail("POST", r"/comments$", 403, "secondary rate limit",
                     headers={"Retry-After": "3600"})
    with pytest.raises(GitHubError, match="wait 3600 s"):
        upsert_comment(client(fake_github), "o", "r", 5, "copeca", "x", author=BOT)


def test_bounded_retries_then_a_clear_error(fake_github: FakeGitHub) -> None:
    fake_github.fail("GET", r"/comments$", 502, "Server Error", times=10)
    sleeps: list[float] = []
    with pytest.raises(GitHubError, match="failed after 3 attempts"):
        upsert_comment(client(fake_github, sleeps), "o", "r", 5, "copeca", "x", author=BOT)
    assert sleeps == [0.5, 1.0]


def test_403_names_the_missing_permission_and_hides_the_token(fake_github: FakeGitHub
                                                              ) -> None:
    fake_github.fail("POST", r"/comments$", 403,
                     f"Resource not accessible by integration {TOKEN}")
    with pytest.raises(GitHubError) as info:
        upsert_comment(client(fake_github), "o", "r", 5, "copeca", "x", author=BOT)
    text = str(info.value)
    assert "pull-requests: write" in text and "Resource not accessible" in text
    assert TOKEN not in text
    assert TOKEN not in repr(client(fake_github))


def test_the_token_never_goes_to_another_host(fake_github: FakeGitHub) -> None:
    c = client(fake_github)
    with pytest.raises(GitHubError, match="refusing to send the token"):
        c.request("GET", "https://evil.example/repos/o/r/issues/1/comments")
    assert fake_github.calls == []


def test_body_over_the_limit_is_refused_before_any_call(fake_github: FakeGitHub) -> None:
    with pytest.raises(GitHubError, match="65536"):
        upsert_comment(client(fake_github), "o", "r", 5, "copeca", "x" * 70_000, author=BOT)
    assert fake_github.calls == []


def test_check_run_conclusion_follows_the_verdict(fake_github: FakeGitHub) -> None:
    run = create_check_run(client(fake_github), "o", "r", "a" * 40, "regression",
                           "regression", "summary " * 10_000)
    assert run.id
    sent = fake_github.calls[-1].body
    assert sent["conclusion"] == "failure" and len(sent["output"]["summary"]) <= 65_535


def test_a_check_run_summary_is_cut_at_a_line_with_its_fold_closed(
        fake_github: FakeGitHub) -> None:
    """The comment may hold 65,536 characters, a check run's summary 65,535: the cut drops
    whole lines and closes the folded block it leaves open (a raw slice left `<details>`
    open, the note folded inside it, and could split a table row or an entity)."""
    body = ("### ⚪ copeca-action: inconclusive\n\n<details><summary>Tasks</summary>\n\n"
            + "| task &#64;&#8203;x | 1 |\n" * 3000)
    body += "x" * (65_536 - len(body))
    create_check_run(client(fake_github), "o", "r", "a" * 40, "inconclusive", "t", body)
    summary = fake_github.calls[-1].body["output"]["summary"]
    assert len(summary) <= 65_535
    lines = summary.split("\n")
    assert all(line.startswith("| task &#64;&#8203;x | 1 |") for line in lines
               if line.startswith("| task"))
    assert summary.count("</details>") == 1
    assert summary.index("</details>") < summary.index("truncated")


def test_no_token_is_a_clear_error() -> None:
    with pytest.raises(GitHubError, match="github-token"):
        GitHubClient("  ")


def test_a_bad_token_gets_a_401_message(fake_github: FakeGitHub) -> None:
    bad = GitHubClient("wrong-token", fake_github.url, policy=FAST, sleep=lambda s: None)
    with pytest.raises(GitHubError, match="401 Unauthorized") as info:
        find_comment(bad, "o", "r", 5, "copeca", BOT)
    assert "wrong-token" not in str(info.value)


def test_network_errors_are_retried_then_reported() -> None:
    import socket

    with socket.socket() as sock:  # a port with nothing listening
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    sleeps: list[float] = []
    c = GitHubClient(TOKEN, f"http://127.0.0.1:{port}", policy=FAST, sleep=sleeps.append)
    with pytest.raises(GitHubError, match=r"failed after 3 attempts \(network error"):
        find_comment(c, "o", "r", 5, "copeca", BOT)
    assert sleeps == [0.5, 1.0]


def test_a_quoted_marker_is_not_our_comment(fake_github: FakeGitHub) -> None:
    fake_github.seed("o", "r", 5, [f"> {marker('copeca')}\n> quoted reply"], bot=True)
    result = upsert_comment(client(fake_github), "o", "r", 5, "copeca", "x", author=BOT)
    assert result.action == "created" and len(fake_github.comments[("o", "r", 5)]) == 2


def test_a_comment_deleted_between_find_and_edit_is_posted_again(
        fake_github: FakeGitHub) -> None:
    """Someone deletes the comment after the list was read: the edit gets 404, and the
    verdict is posted as a new comment instead of failing the job."""
    c = client(fake_github)
    first = upsert_comment(c, "o", "r", 5, "copeca", "one", author=BOT)
    fake_github.before.append(("PATCH", r"/issues/comments/\d+$",
                               fake_github.comments[("o", "r", 5)].clear))
    result = upsert_comment(c, "o", "r", 5, "copeca", "two", author=BOT)
    assert result.action == "created" and result.id != first.id
    assert [x["body"] for x in fake_github.comments[("o", "r", 5)]] == [
        marker("copeca") + "\ntwo"]
    assert [(x.method, x.status) for x in fake_github.calls][-4:] == [
        ("GET", 200), ("PATCH", 404), ("GET", 200), ("POST", 201)]
