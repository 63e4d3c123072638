"""A small GitHub REST client: token auth, bounded retries, errors a user can act on.

Retries cover what GitHub documents as transient: 5xx answers and rate limits (every 429,
a 403 with `Retry-After`, a primary limit at zero with `x-ratelimit-reset`, or a 403 whose
message says rate limit). The wait
honours `Retry-After`, is capped, and the number of attempts is bounded. The token is only
ever put in the Authorization header; messages are scrubbed of it, and pagination refuses to
follow a `Link` to another host (which would carry the token there).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any
from urllib.parse import urljoin, urlsplit

import requests

from copeca_action import __version__
from copeca_action.errors import GitHubError

API_VERSION = "2022-11-28"
RETRY_STATUSES = frozenset({500, 502, 503, 504})
MISSING_PERMISSION = {
    "comment": "pull-requests: write",
    "check": "checks: write",
    "read": "contents: read",
    "contents": "contents: write",
}
PERMISSION_HELP = (
    "GitHub answered 403 Forbidden to {what}: the token lacks the `{permission}` permission. "
    "Add\n  permissions:\n    {permission}\nto the job (or workflow) that runs copeca-action. "
    "Fork pull requests never get write permission under `pull_request`; see the fork-safe "
    "pattern in docs/action.md.")


class GitHubForbidden(GitHubError):
    """GitHub answered 403 (not a rate limit): the token lacks a permission."""


@dataclass(frozen=True)
class RetryPolicy:
    """How hard to try before a call fails: attempts in all, waits capped."""

    attempts: int = 4
    backoff_s: float = 1.0
    """First wait after a 5xx; doubled each time."""
    max_wait_s: float = 60.0
    """A Retry-After longer than this is not waited for: the call fails with the wait named."""


class GitHubClient:
    """Calls api.github.com (or GITHUB_API_URL) with a token; one instance per job."""

    def __init__(self, token: str, api_url: str = "https://api.github.com",
                 policy: RetryPolicy | None = None,
                 sleep: Callable[[float], None] = time.sleep,
                 session: requests.Session | None = None, timeout_s: float = 30.0) -> None:
        if not token.strip():
            raise GitHubError("no GitHub token: pass `github-token: ${{ github.token }}` "
                              "(the default) to comment on pull requests")
        self._token = token.strip()
        self.api_url = api_url.rstrip("/") + "/"
        self.policy = policy or RetryPolicy()
        self._sleep = sleep
        self._timeout = timeout_s
        self._session = session or requests.Session()
        self._session.headers.update({
            "Accept": "application/vnd.github+json",
            "Authorization": f"Bearer {self._token}",
            "X-GitHub-Api-Version": API_VERSION,
            "User-Agent": f"copeca-action/{__version__}",
        })

    def __repr__(self) -> str:  # never show the token, even in a traceback
        return f"GitHubClient(api_url={self.api_url!r})"

    def scrub(self, text: str) -> str:
        return text.replace(self._token, "***") if self._token else text

    def url(self, path: str) -> str:
        return urljoin(self.api_url, path.lstrip("/"))

    def _same_host(self, url: str) -> bool:
        a, b = urlsplit(url), urlsplit(self.api_url)
        return (a.scheme, a.netloc) == (b.scheme, b.netloc)

    def request(self, method: str, path_or_url: str, *, json: Any = None,
                params: dict[str, Any] | None = None, what: str = "",
                permission: str = "read", retry_5xx: bool = True,
                allow: tuple[int, ...] = ()) -> requests.Response:
        """One API call with retries; raises GitHubError with the cause and the fix.
        Statuses in `allow` (e.g. 404 for "not there yet") are returned, not raised."""
        url = path_or_url if path_or_url.startswith(("http://", "https://")) \
            else self.url(path_or_url)
        if not self._same_host(url):
            raise GitHubError(f"refusing to send the token to {urlsplit(url).netloc}: "
                              f"not the API host {urlsplit(self.api_url).netloc}")
        label = what or f"{method} {urlsplit(url).path}"
        last = ""
        for attempt in range(1, self.policy.attempts + 1):
            try:
                resp = self._session.request(method, url, json=json, params=params,
                                             timeout=self._timeout)
            except requests.RequestException as exc:
                last = f"network error: {type(exc).__name__}"
                wait = self.policy.backoff_s * 2 ** (attempt - 1)
            else:
                wait_or_none = self._retry_wait(resp, attempt, retry_5xx)
                if wait_or_none is None:
                    if resp.status_code in RETRY_STATUSES and not retry_5xx:
                        return resp  # the caller decides (a POST may have succeeded)
                    if resp.status_code in allow:
                        return resp
                    return self._check(resp, label, permission)
                wait, last = wait_or_none, f"HTTP {resp.status_code}"
                if wait > self.policy.max_wait_s:
                    raise GitHubError(f"{label}: GitHub asks to wait {wait:.0f} s "
                                      f"(rate limit), more than the {self.policy.max_wait_s:.0f}"
                                      " s this job waits; re-run the job later")
            if attempt < self.policy.attempts:
                print(f"copeca-action: {label}: {last}; retry {attempt}/"
                      f"{self.policy.attempts - 1} in {wait:.1f} s", flush=True)
                self._sleep(wait)
        raise GitHubError(f"{label}: failed after {self.policy.attempts} attempts ({last}); "
                          "GitHub may be having trouble, see https://www.githubstatus.com")

    def backoff(self, attempt: int) -> None:
        """Wait as a retry would (for callers that retry by themselves)."""
        self._sleep(self.policy.backoff_s * 2 ** (attempt - 1))

    def _retry_wait(self, resp: requests.Response, attempt: int,
                    retry_5xx: bool) -> float | None:
        """Seconds to wait before retrying this response, or None when it is final."""
        status = resp.status_code
        if status in RETRY_STATUSES:
            return self.policy.backoff_s * 2 ** (attempt - 1) if retry_5xx else None
        if status in (403, 429) and _is_rate_limited(resp):
            return _rate_limit_wait(resp, self.policy.backoff_s * 2 ** (attempt - 1))
        return None

    def _check(self, resp: requests.Response, label: str,
               permission: str) -> requests.Response:
        if resp.status_code < 400:
            if resp.content and resp.status_code != 204:
                try:
                    resp.json()
                except ValueError:
                    kind = resp.headers.get("content-type", "no content type")
                    head = self.scrub(resp.text[:80]).replace("\n", " ")
                    raise GitHubError(f"{label}: GitHub answered HTTP {resp.status_code} with "
                                      f"a body that is not JSON ({kind}: {head!r}…): a proxy "
                                      "or an outage page? See https://www.githubstatus.com"
                                      ) from None
            return resp
        message = self.scrub(_error_message(resp))
        if resp.status_code == 401:
            raise GitHubError(f"{label}: 401 Unauthorized ({message}): the token is invalid "
                              "or expired; pass `github-token: ${{ github.token }}`")
        if resp.status_code == 403:
            perm = MISSING_PERMISSION.get(permission, permission)
            raise GitHubForbidden(PERMISSION_HELP.format(what=label, permission=perm)
                                  + f" GitHub said: {message}")
        if resp.status_code == 404:
            raise GitHubError(f"{label}: 404 Not Found ({message}): the repository, pull "
                              "request or comment does not exist or the token cannot see it")
        raise GitHubError(f"{label}: HTTP {resp.status_code}: {message}")

    def paginate(self, path: str, *, params: dict[str, Any] | None = None,
                 what: str = "", max_pages: int = 1000) -> Iterator[Any]:
        """Every item of a list endpoint, following `Link: rel="next"` to the end."""
        url: str | None = self.url(path)
        query: dict[str, Any] | None = {"per_page": 100, **(params or {})}
        for _ in range(max_pages):
            if url is None:
                return
            resp = self.request("GET", url, params=query, what=what)
            items = resp.json()
            if not isinstance(items, list):
                raise GitHubError(f"{what or path}: expected a JSON list from GitHub")
            yield from items
            url = resp.links.get("next", {}).get("url")
            query = None  # the next link carries its own query
        raise GitHubError(f"{what or path}: more than {max_pages} pages; stopped")


def _is_rate_limited(resp: requests.Response) -> bool:
    if resp.status_code == 429 or "retry-after" in resp.headers:
        return True
    if resp.headers.get("x-ratelimit-remaining") == "0":
        return True
    return "rate limit" in _error_message(resp).lower()


def _rate_limit_wait(resp: requests.Response, fallback: float) -> float:
    retry_after = resp.headers.get("retry-after", "")
    if retry_after.strip().isdigit():
        return float(retry_after)
    reset = resp.headers.get("x-ratelimit-reset", "")
    if reset.strip().isdigit():
        return max(0.0, float(reset) - time.time()) + 1.0
    return max(fallback, 60.0)  # GitHub: without headers, wait at least a minute


def _error_message(resp: requests.Response) -> str:
    try:
        data = resp.json()
    except ValueError:
        return resp.text[:200] or resp.reason or ""
    if isinstance(data, dict) and isinstance(data.get("message"), str):
        return str(data["message"])[:500]
    return resp.reason or ""
