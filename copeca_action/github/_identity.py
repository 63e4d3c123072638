"""Whose token this is: the login the PR comment is written as, so the action edits only
comments that it wrote (github/_comments.py).

- The workflow's own token (`github-token` left at `${{ github.token }}`; action.yml says so
  in COPECA_WORKFLOW_TOKEN) acts as `github-actions[bot]`: no call is needed.
- A personal access token acts as its owner: `GET /user` names them.
- An app's installation token is refused by `GET /user` (403, "Resource not accessible by
  integration": the operation is not enabled for GitHub Apps). GraphQL's `viewer` answers
  for it with the app's bot login, `<app slug>[bot]`, the `user.login` of every comment the
  app writes (its `performed_via_github_app` is that app).

Anything else is an error that names what was asked and what came back: without knowing who
we are, no comment can be told apart from another bot's copy of ours.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit, urlunsplit

from copeca_action.errors import GitHubError
from copeca_action.github._client import GitHubClient

WORKFLOW_BOT = "github-actions[bot]"
"""The login of comments written with the workflow's GITHUB_TOKEN."""
VIEWER_QUERY = "query { viewer { login } }"


def graphql_url(api_url: str) -> str:
    """The GraphQL endpoint beside a REST root: api.github.com/graphql, or on GitHub
    Enterprise Server https://HOST/api/graphql for https://HOST/api/v3."""
    parts = urlsplit(api_url)
    path = parts.path.rstrip("/")
    path = path[: -len("/v3")] if path.endswith("/api/v3") else path
    return urlunsplit((parts.scheme, parts.netloc, f"{path}/graphql", "", ""))


def _login_of(data: Any) -> str | None:
    login = data.get("login") if isinstance(data, dict) else None
    return login if isinstance(login, str) and login else None


def token_login(client: GitHubClient, *, workflow_token: bool = False) -> str:
    """The login our token writes comments as (see the module's docstring)."""
    if workflow_token:
        return WORKFLOW_BOT
    resp = client.request("GET", "user", what="ask GitHub whose token github-token is",
                          allow=(403,))
    if resp.status_code == 200:
        if (login := _login_of(resp.json())) is None:
            raise GitHubError("ask GitHub whose token github-token is: GET /user answered "
                              "without a login")
        return login
    # 403: an installation token (an app's); GraphQL's viewer is its bot user
    resp = client.request("POST", graphql_url(client.api_url), json={"query": VIEWER_QUERY},
                          what="ask GitHub which app github-token belongs to (GraphQL viewer)",
                          allow=(403,))
    try:
        data = resp.json()
    except ValueError:
        data = None
    viewer = data.get("data", {}).get("viewer") if isinstance(data, dict) and isinstance(
        data.get("data"), dict) else None
    if (login := _login_of(viewer)) is None:
        errors = (data.get("errors") or data.get("message")) if isinstance(data, dict) else None
        said = (f"HTTP {resp.status_code} " if resp.status_code != 200 else "") + (
            client.scrub(str(errors)[:300]) if errors else "no viewer login")
        raise GitHubError("ask GitHub whose token github-token is: GET /user is refused (an "
                          f"app's installation token) and GraphQL's viewer gave {said}; "
                          "without the token's login the action cannot tell its comment "
                          "from another's copy of it")
    return login
