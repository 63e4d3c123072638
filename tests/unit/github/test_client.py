"""The REST client and the comment upsert against the contract-checking fake API."""

from __future__ import annotations

import pytest
from fake_github import FakeGitHub
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

FAST = RetryPolicy(attempts=3, backoff_s=0.5, max_wait_s=30)


def client(fake: FakeGitHub, sleeps: list[float] | None = None) -> GitHubClient:
    log = sleeps if sleeps is not None else []
    return GitHubClient(TOKEN, fake.url, policy=FAST, sleep=log.append)


def test_create_then_update_never_a_second_comment(fake_github: FakeGitHub) -> None:
    c = client(fake_github)
    first = upsert_comment(c, "o", "r", 5, "copeca", "one")
    second = upsert_comment(c, "o", "r", 5, "copeca", "two")
    assert (first.action, second.action) == ("created", "updated")
    assert first.id == second.id
    comments = fake_github.comments[("o", "r", 5)]
    assert len(comments) == 1 and comments[0]["body"] == marker("copeca") + "\ntwo"
    assert upsert_comment(c, "o", "r", 5, "copeca", "two").action == "unchanged"


def test_comment_ids_keep_separate_comments(fake_github: FakeGitHub) -> None:
    c = client(fake_github)
    upsert_comment(c, "o", "r", 5, "shard-a", "a")
    upsert_comment(c, "o", "r", 5, "shard-b", "b")
    upsert_comment(c, "o", "r", 5, "shard-a", "a2")
    assert [x["body"].split("\n")[1] for x in fake_github.comments[("o", "r", 5)]] == ["a2", "b"]


def test_finds_our_comment_on_the_last_of_many_pages(fake_github: FakeGitHub) -> None:
    fake_github.seed("o", "r", 5, [f"chatter {i}" for i in range(250)])
    fake_github.seed("o", "r", 5, [marker("copeca") + "\nold"], bot=True)
    found = find_comment(client(fake_github), "o", "r", 5, "copeca")
    assert found is not None and found["body"].endswith("old")
    pages = [call.query.get("page", ["1"])[0] for call in fake_github.calls]
    assert pages == ["1", "2", "3"]


def test_a_users_copy_of_the_marker_loses_to_the_bot_comment(fake_github: FakeGitHub) -> None:
    fake_github.seed("o", "r", 5, [f"{marker('copeca')} copied by a user"], bot=False)
    fake_github.seed("o", "r", 5, [marker("copeca") + "\nours"], bot=True)
    found = find_comment(client(fake_github), "o", "r", 5, "copeca")
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
    assert find_comment(client(fake_github), "o", "r", 5, "copeca") is None
    result = upsert_comment(client(fake_github), "o", "r", 5, "copeca",
                            f"{marker('copeca')}\n<!-- copeca-action:state=0123456789abcdef -->"
                            "\n### ⚪ copeca-action: inconclusive", only_on_change=True)
    assert result.action == "created"
    first, ours = fake_github.comments[("o", "r", 5)]
    assert first["body"] == planted and "inconclusive" in ours["body"]


@pytest.mark.parametrize("association", ["MEMBER", "COLLABORATOR"])
def test_a_marked_comment_by_a_reader_is_never_ours(fake_github: FakeGitHub,
                                                    association: str) -> None:
    """`author_association` says MEMBER for anyone in the owning organization and
    COLLABORATOR for an invited reader: neither means write access. Such a reader plants the
    marker; the action must not write its verdict into their comment (they could then edit
    it). Only the API's permission (write, maintain, admin) makes a person's comment ours."""
    planted = f"{marker('copeca')}\n### 🟢 copeca-action: improvement"
    fake_github.seed("o", "r", 5, [planted], bot=False)
    fake_github.comments[("o", "r", 5)][0]["author_association"] = association
    fake_github.permissions["octocat"] = "read"
    assert find_comment(client(fake_github), "o", "r", 5, "copeca") is None
    result = upsert_comment(client(fake_github), "o", "r", 5, "copeca", "inconclusive")
    assert result.action == "created"
    assert [c["body"] for c in fake_github.comments[("o", "r", 5)]] == [
        planted, marker("copeca") + "\ninconclusive"]


@pytest.mark.parametrize("level", ["write", "maintain", "admin"])
def test_a_personal_tokens_comment_is_found_by_its_authors_write_access(
        fake_github: FakeGitHub, level: str) -> None:
    """With a personal token the action's comment is written by that person: the API says
    they may write, so a rerun edits that comment rather than posting a second one."""
    fake_github.seed("o", "r", 5, [marker("copeca") + "\nold"], bot=False)
    fake_github.permissions["octocat"] = level
    result = upsert_comment(client(fake_github), "o", "r", 5, "copeca", "new")
    assert result.action == "updated" and len(fake_github.comments[("o", "r", 5)]) == 1


def test_502_then_success_is_retried_with_backoff(fake_github: FakeGitHub) -> None:
    fake_github.fail("GET", r"/comments$", 502, "Server Error")
    sleeps: list[float] = []
    result = upsert_comment(client(fake_github, sleeps), "o", "r", 5, "copeca", "body")
    assert result.action == "created"
    assert sleeps == [0.5]
    assert [c.status for c in fake_github.calls] == [502, 200, 201]


def test_a_failed_post_is_not_repeated_blindly(fake_github: FakeGitHub) -> None:
    """GitHub may create the comment and still answer 502: look again before posting."""
    fake_github.fail("POST", r"/comments$", 502, "Bad Gateway", after_effect=True)
    result = upsert_comment(client(fake_github), "o", "r", 5, "copeca", "body")
    assert result.action == "unchanged"
    assert len(fake_github.comments[("o", "r", 5)]) == 1
    assert [(c.method, c.status) for c in fake_github.calls] == [
        ("GET", 200), ("POST", 502), ("GET", 200)]


def test_secondary_rate_limit_honours_retry_after(fake_github: FakeGitHub) -> None:
    fake_github.fail("POST", r"/comments$", 403, "You have exceeded a secondary rate limit.",
                     headers={"Retry-After": "7"})
    sleeps: list[float] = []
    result = upsert_comment(client(fake_github, sleeps), "o", "r", 5, "copeca", "x")
    assert result.action == "created" and sleeps == [7.0]


def test_an_exhausted_primary_limit_waits_until_its_reset(fake_github: FakeGitHub) -> None:
    """403 with x-ratelimit-remaining 0: wait until x-ratelimit-reset (epoch seconds)."""
    import time

    reset = int(time.time()) + 20
    fake_github.fail("GET", r"/comments$", 403, "API rate limit exceeded for installation.",
                     headers={"x-ratelimit-remaining": "0", "x-ratelimit-reset": str(reset)})
    sleeps: list[float] = []
    assert upsert_comment(client(fake_github, sleeps), "o", "r", 5, "copeca", "x").action \
        == "created"
    assert len(sleeps) == 1 and 15 <= sleeps[0] <= 22


def test_a_429_without_headers_or_words_is_a_rate_limit(fake_github: FakeGitHub) -> None:
    """429 Too Many Requests is a rate limit whatever its body says: retried after GitHub's
    one minute (it failed the job at once, as an unknown error)."""
    fake_github.fail("POST", r"/comments$", 429, "Too Many Requests")
    sleeps: list[float] = []
    c = GitHubClient(TOKEN, fake_github.url, policy=RetryPolicy(), sleep=sleeps.append)
    assert upsert_comment(c, "o", "r", 5, "copeca", "x").action == "created"
    assert sleeps == [60.0]


def test_a_wait_longer_than_the_cap_fails_and_names_it(fake_github: FakeGitHub) -> None:
    fake_github.fail("POST", r"/comments$", 403, "secondary rate limit",
                     headers={"Retry-After": "3600"})
    with pytest.raises(GitHubError, match="wait 3600 s"):
        upsert_comment(client(fake_github), "o", "r", 5, "copeca", "x")


def test_bounded_retries_then_a_clear_error(fake_github: FakeGitHub) -> None:
    fake_github.fail("GET", r"/comments$", 502, "Server Error", times=10)
    sleeps: list[float] = []
    with pytest.raises(GitHubError, match="failed after 3 attempts"):
        upsert_comment(client(fake_github, sleeps), "o", "r", 5, "copeca", "x")
    assert sleeps == [0.5, 1.0]


def test_403_names_the_missing_permission_and_hides_the_token(fake_github: FakeGitHub
                                                              ) -> None:
    fake_github.fail("POST", r"/comments$", 403,
                     f"Resource not accessible by integration {TOKEN}")
    with pytest.raises(GitHubError) as info:
        upsert_comment(client(fake_github), "o", "r", 5, "copeca", "x")
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
        upsert_comment(client(fake_github), "o", "r", 5, "copeca", "x" * 70_000)
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
        find_comment(bad, "o", "r", 5, "copeca")
    assert "wrong-token" not in str(info.value)


def test_network_errors_are_retried_then_reported() -> None:
    import socket

    with socket.socket() as sock:  # a port with nothing listening
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    sleeps: list[float] = []
    c = GitHubClient(TOKEN, f"http://127.0.0.1:{port}", policy=FAST, sleep=sleeps.append)
    with pytest.raises(GitHubError, match=r"failed after 3 attempts \(network error"):
        find_comment(c, "o", "r", 5, "copeca")
    assert sleeps == [0.5, 1.0]


def test_a_quoted_marker_is_not_our_comment(fake_github: FakeGitHub) -> None:
    fake_github.seed("o", "r", 5, [f"> {marker('copeca')}\n> quoted reply"], bot=True)
    assert upsert_comment(client(fake_github), "o", "r", 5, "copeca", "x").action == "created"
    assert len(fake_github.comments[("o", "r", 5)]) == 2


def test_a_comment_deleted_between_find_and_edit_is_posted_again(
        fake_github: FakeGitHub) -> None:
    """Someone deletes the comment after the list was read: the edit gets 404, and the
    verdict is posted as a new comment instead of failing the job."""
    c = client(fake_github)
    first = upsert_comment(c, "o", "r", 5, "copeca", "one")
    fake_github.before.append(("PATCH", r"/issues/comments/\d+$",
                               fake_github.comments[("o", "r", 5)].clear))
    result = upsert_comment(c, "o", "r", 5, "copeca", "two")
    assert result.action == "created" and result.id != first.id
    assert [x["body"] for x in fake_github.comments[("o", "r", 5)]] == [
        marker("copeca") + "\ntwo"]
    assert [(x.method, x.status) for x in fake_github.calls][-4:] == [
        ("GET", 200), ("PATCH", 404), ("GET", 200), ("POST", 201)]
