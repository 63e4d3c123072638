"""A local fake of the GitHub REST API for issue comments and check runs.

Every request it receives and every response it sends is validated with openapi-core
against GitHub's published description (/work/shared/contracts or $COPECA_CONTRACTS);
violations are recorded and a test asserts there are none. Faults (403, 502, rate limits)
are injected per call. Binds to 127.0.0.1 only.
"""

from __future__ import annotations

import base64
import copy
import hashlib
import json
import os
import re
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

from openapi_core import OpenAPI
from openapi_core.testing import MockRequest, MockResponse
from openapi_schema_validator import OAS30Validator


def _contracts() -> Path:
    """$COPECA_CONTRACTS, else shared/contracts beside the checkout (as in CI)."""
    if os.environ.get("COPECA_CONTRACTS"):
        return Path(os.environ["COPECA_CONTRACTS"])
    checkout = Path(__file__).resolve().parents[3]
    for candidate in (checkout.parent / "shared" / "contracts",
                      checkout.parent.parent / "shared" / "contracts"):
        if candidate.is_dir():
            return candidate
    return checkout.parent / "shared" / "contracts"


CONTRACTS = _contracts()
SPEC_PATH = CONTRACTS / "github-rest-issue-comments.json"
EXTRA_SPEC = Path(__file__).resolve().parents[2] / "fixtures" / "github" / "github-rest-extra.json"
"""Operations beyond shared/contracts (collaborator permission, PATCH check-runs, PRs of a
commit, GET /user), extracted from @octokit/openapi 23.0.2 with the components they reach."""
CONTENTS_SPEC_PATH = Path(__file__).resolve().parent / "contracts" / "github-rest-contents.json"
"""Contents and git data operations (the history's data branch): see contracts/README.md."""
PAYLOADS = CONTRACTS / "webhook-payloads"
HOST = "https://api.github.com"  # the spec's server: validation needs this host

_LIST = re.compile(r"^/repos/([^/]+)/([^/]+)/issues/(\d+)/comments$")
_ONE = re.compile(r"^/repos/([^/]+)/([^/]+)/issues/comments/(\d+)$")
_CHECK = re.compile(r"^/repos/([^/]+)/([^/]+)/check-runs$")
_CHECK_ONE = re.compile(r"^/repos/([^/]+)/([^/]+)/check-runs/(\d+)$")
_PULL = re.compile(r"^/repos/([^/]+)/([^/]+)/pulls/(\d+)$")
_PERMISSION = re.compile(r"^/repos/([^/]+)/([^/]+)/collaborators/([^/]+)/permission$")
_CONTENTS = re.compile(r"^/repos/([^/]+)/([^/]+)/contents/(.+)$")
_GET_REF = re.compile(r"^/repos/([^/]+)/([^/]+)/git/ref/(.+)$")
_REFS = re.compile(r"^/repos/([^/]+)/([^/]+)/git/refs$")
_TREES = re.compile(r"^/repos/([^/]+)/([^/]+)/git/trees$")
_COMMITS = re.compile(r"^/repos/([^/]+)/([^/]+)/git/commits$")

WORKFLOW_TOKEN = "test-token-123"
PAT_TOKEN = "test-pat-456"
APP_TOKEN = "test-app-789"


@dataclass(frozen=True)
class Identity:
    """Whom a token acts as: its login, and the app when it is an installation token."""

    login: str
    user_id: int
    app_slug: str | None = None
    """The app of an installation token (GET /user refuses it; comments name the app)."""

    @property
    def is_app(self) -> bool:
        return self.app_slug is not None


IDENTITIES = {
    WORKFLOW_TOKEN: Identity("github-actions[bot]", 41898282, "github-actions"),
    PAT_TOKEN: Identity("maintainer", 583231),
    APP_TOKEN: Identity("copeca-app[bot]", 99000001, "copeca-app"),
}
"""The tokens the fake accepts. The workflow's GITHUB_TOKEN is the GitHub Actions app's
installation token, so comments it writes are github-actions[bot]'s."""
OTHER_BOT = Identity("echo-bot[bot]", 99000002, "echo-bot")
"""Another app on the repository, whose token the action never holds."""


@cache
def load_spec() -> tuple[OpenAPI, dict[str, Any]]:
    """The contract, minus upstream quirk 1 (README): the check-run request discriminator."""
    raw = json.loads(SPEC_PATH.read_text())
    extra = json.loads(EXTRA_SPEC.read_text())
    raw["paths"].update(extra["paths"])
    for kind, items in extra["components"].items():
        for name, value in items.items():
            raw["components"].setdefault(kind, {}).setdefault(name, value)
    body = raw["paths"]["/repos/{owner}/{repo}/check-runs"]["post"]["requestBody"]
    body["content"]["application/json"]["schema"].pop("discriminator", None)
    contents = json.loads(CONTENTS_SPEC_PATH.read_text())  # the same upstream: merge
    raw["paths"].update(contents["paths"])
    for kind, items in contents["components"].items():
        for name, item in items.items():
            raw["components"].setdefault(kind, {}).setdefault(name, item)
    return OpenAPI.from_dict(copy.deepcopy(raw)), raw


@dataclass
class Fault:
    method: str
    path: str  # regex on the path
    status: int
    body: dict[str, Any]
    headers: dict[str, str] = field(default_factory=dict)
    times: int = 1
    after_effect: bool = False
    """Do the request's work first, then answer with the fault (a lost response)."""


@dataclass
class Call:
    method: str
    path: str
    query: dict[str, list[str]]
    body: Any
    status: int
    authorization: str


class FakeGitHub:
    """State (comments per issue, check runs), injected faults, and the log of calls."""

    def __init__(self) -> None:
        self.openapi, raw = load_spec()
        self.raw = copy.deepcopy(raw)
        self.comments: dict[tuple[str, str, int], list[dict[str, Any]]] = {}
        self.check_runs: list[dict[str, Any]] = []
        self.check_outputs: dict[int, dict[str, Any]] = {}
        """The last `output` (title, summary) sent to each check run, by its id."""
        self.pulls: dict[int, dict[str, Any]] = {}
        """Pull requests by number (`add_pull`), for GET pulls/{n}."""
        self.permissions: dict[str, str] = {}
        """Collaborator permission per login (admin, maintain, write, triage, read)."""
        self.branches: dict[tuple[str, str, str], dict[str, bytes]] = {}
        """(owner, repo, branch) → path → file content: the data branch's files."""
        self.commits_made = 0
        self.faults: list[Fault] = []
        self.calls: list[Call] = []
        self.violations: list[str] = []
        self.before: list[tuple[str, str, Callable[[], None]]] = []
        """(method, path regex, action): the action runs once, just before the first
        matching request is handled (someone else acting between two of our calls)."""
        self.next_id = 1000
        self.lock = threading.Lock()
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.thread = threading.Thread(target=self.server.serve_forever, args=(0.02,),
                                       daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def __enter__(self) -> FakeGitHub:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()

    # ---------------------------------------------------------------- state helpers

    def example(self, name: str) -> dict[str, Any]:
        return copy.deepcopy(self.raw["components"]["examples"][name]["value"])

    def make_comment(self, owner: str, repo: str, number: int, body: str,
                     bot: bool = True, author: Identity | None = None) -> dict[str, Any]:
        """A comment from the contract's example: by `author`, else github-actions[bot]
        (`bot`), else the example's user (octocat, a person)."""
        self.next_id += 1
        cid = self.next_id
        c = self.example("issue-comment")
        c.update({
            "id": cid, "node_id": f"IC_{cid}", "body": body,
            "url": f"{HOST}/repos/{owner}/{repo}/issues/comments/{cid}",
            "html_url": f"https://github.com/{owner}/{repo}/pull/{number}#issuecomment-{cid}",
            "issue_url": f"{HOST}/repos/{owner}/{repo}/issues/{number}",
        })
        who = author or (IDENTITIES[WORKFLOW_TOKEN] if bot else None)
        if who is not None:
            c["user"].update({"login": who.login, "id": who.user_id,
                              "type": "Bot" if who.is_app else "User"})
            if who.is_app:
                app = self.example("check-run-example-of-completed-conclusion")["app"]
                app.update({"slug": who.app_slug, "name": who.app_slug})
                c["performed_via_github_app"] = app
        return c

    def add_pull(self, number: int, head_sha: str, head_repo: str,
                 state: str = "open") -> dict[str, Any]:
        """A pull request from the contract's example, with this head."""
        pr = self.example("pull-request")
        pr["number"] = number
        pr["state"] = state
        pr["head"]["sha"] = head_sha
        pr["head"]["repo"]["full_name"] = head_repo
        pr["head"]["repo"]["fork"] = head_repo != pr["base"]["repo"]["full_name"]
        for team in pr.get("requested_teams") or []:  # upstream quirk 3
            team.setdefault("type", "organization")
        self.pulls[number] = pr
        return pr

    def seed(self, owner: str, repo: str, number: int, bodies: list[str],
             bot: bool = False, author: Identity | None = None) -> None:
        key = (owner, repo, number)
        for body in bodies:
            self.comments.setdefault(key, []).append(self.make_comment(owner, repo, number,
                                                                       body, bot, author))

    def nonsense(self, method: str, path: str, status: int = 200, times: int = 1) -> None:
        """Answer with an HTML page (a captive portal, an outage page) instead of JSON."""
        self.faults.append(Fault(method, path, status, "<!DOCTYPE html><html><body>Unicorn! "
                                 "This page is taking too long to load.</body></html>",
                                 {}, times))  # type: ignore[arg-type]

    def fail(self, method: str, path: str, status: int, message: str,
             headers: dict[str, str] | None = None, times: int = 1,
             after_effect: bool = False) -> None:
        body = {"message": message,
                "documentation_url": "https://docs.github.com/rest/issues/comments",
                "status": str(status)}
        self.faults.append(Fault(method, path, status, body, headers or {}, times,
                                 after_effect))

    # ---------------------------------------------------------------- validation

    @staticmethod
    def _spec_path(path: str) -> str:
        """`{path}` and `{ref}` hold slashes (`copeca/x/history.json`, `heads/main`) that
        GitHub takes as they are; openapi-core matches one segment per parameter, so the
        slashes inside them are encoded for validation only."""
        for pattern in (_CONTENTS, _GET_REF):
            if (m := pattern.match(path)) is not None:
                return path[:m.start(3)] + m.group(3).replace("/", "%2F")
        return path

    def _validate_request(self, method: str, path: str, query: dict[str, list[str]],
                          data: bytes) -> bool:
        if path == "/graphql":  # GraphQL has no OpenAPI description: not validated
            return True
        path = self._spec_path(path)
        args = {k: v[-1] for k, v in query.items()}
        req = MockRequest(HOST, method.lower(), path, args=args, data=data or None)
        try:
            self.openapi.validate_request(req)
        except Exception as exc:
            self.violations.append(f"request {method} {path}: {exc!r}")
            return False
        return True

    def _validate_response(self, method: str, path: str, query: dict[str, list[str]],
                           data: bytes, status: int, body: bytes,
                           headers: dict[str, str]) -> None:
        if path == "/graphql":
            return
        path = self._spec_path(path)
        args = {k: v[-1] for k, v in query.items()}
        req = MockRequest(HOST, method.lower(), path, args=args, data=data or None)
        resp = MockResponse(body, status_code=status, headers=headers)
        if self._documented(method, path, status):
            try:
                self.openapi.validate_response(req, resp)
            except Exception as exc:
                self.violations.append(f"response {status} {method} {path}: {exc!r}")
        else:  # an injected fault GitHub sends but the operation does not list (e.g. 502)
            schema = self.raw["components"]["schemas"]["basic-error"]
            errors = list(OAS30Validator(schema).iter_errors(json.loads(body)))
            if errors:
                self.violations.append(f"fault {status} {method} {path}: {errors[0]}")

    def _documented(self, method: str, path: str, status: int) -> bool:
        if status == 409 and _CONTENTS.match(path):
            # upstream quirk: the 409 schema is oneOf basic-error / repository-rule-violation-
            # error, whose properties are all optional, so every body matches both and oneOf
            # rejects it; such an answer is checked against basic-error alone
            return False
        for pattern, template in (
                (_LIST, "/repos/{owner}/{repo}/issues/{issue_number}/comments"),
                (_ONE, "/repos/{owner}/{repo}/issues/comments/{comment_id}"),
                (_CHECK, "/repos/{owner}/{repo}/check-runs"),
                (_CHECK_ONE, "/repos/{owner}/{repo}/check-runs/{check_run_id}"),
                (_PULL, "/repos/{owner}/{repo}/pulls/{pull_number}"),
                (_PERMISSION, "/repos/{owner}/{repo}/collaborators/{username}/permission"),
                (_CONTENTS, "/repos/{owner}/{repo}/contents/{path}"),
                (_GET_REF, "/repos/{owner}/{repo}/git/ref/{ref}"),
                (_REFS, "/repos/{owner}/{repo}/git/refs"),
                (_TREES, "/repos/{owner}/{repo}/git/trees"),
                (_COMMITS, "/repos/{owner}/{repo}/git/commits"),
                (re.compile(r"^/user$"), "/user")):
            if pattern.match(path):
                op = self.raw["paths"][template].get(method.lower(), {})
                return str(status) in op.get("responses", {})
        return False

    # ---------------------------------------------------------------- routing

    def handle(self, method: str, path: str, query: dict[str, list[str]], data: bytes,
               auth: str) -> tuple[int, Any, dict[str, str]]:
        who = IDENTITIES.get(auth.removeprefix("Bearer "))
        if who is None:
            return 401, {"message": "Bad credentials"}, {}
        for hook in list(self.before):
            if hook[0] == method and re.search(hook[1], path):
                self.before.remove(hook)
                hook[2]()
        for fault in self.faults:
            if fault.times > 0 and fault.method == method and re.search(fault.path, path):
                fault.times -= 1
                if fault.after_effect:
                    self.route(method, path, query, data, who)
                return fault.status, fault.body, fault.headers
        return self.route(method, path, query, data, who)

    def route(self, method: str, path: str, query: dict[str, list[str]],
              data: bytes, who: Identity | None = None) -> tuple[int, Any, dict[str, str]]:
        body = json.loads(data) if data else None
        who = who or IDENTITIES[WORKFLOW_TOKEN]
        if path == "/user" and method == "GET":
            if who.is_app:  # not enabled for GitHub Apps (the operation's x-github)
                return 403, {"message": "Resource not accessible by integration",
                             "documentation_url": "https://docs.github.com/rest/users/users"
                             "#get-the-authenticated-user", "status": "403"}, {}
            user = self.example(
                "private-user-response-with-public-and-private-profile-information")
            # upstream's example lacks the discriminator its own schema requires (GitHub
            # sends it): set as for a token that sees its owner's private profile
            user.update(login=who.login, id=who.user_id, user_view_type="private")
            return 200, user, {}
        if path == "/graphql" and method == "POST":
            if "viewer" not in str((body or {}).get("query")):
                return 200, {"errors": [{"message": "the fake answers only viewer"}]}, {}
            return 200, {"data": {"viewer": {"login": who.login}}}, {}
        if (m := _LIST.match(path)) is not None:
            key = (m.group(1), m.group(2), int(m.group(3)))
            if method == "GET":
                return self._page(key, path, query)
            if method == "POST":
                comment = self.make_comment(*key, body["body"], author=who)
                self.comments.setdefault(key, []).append(comment)
                return 201, comment, {"Location": comment["url"]}
        if (m := _ONE.match(path)) is not None and method == "PATCH":
            for comments in self.comments.values():
                for c in comments:
                    if c["id"] == int(m.group(3)):
                        c["body"] = body["body"]
                        c["updated_at"] = "2026-11-21T21:00:00Z"
                        return 200, c, {}
            return 404, {"message": "Not Found"}, {}
        if _CHECK.match(path) and method == "POST":
            run = self.example("check-run-example-of-completed-conclusion")
            self.next_id += 1
            run.update({"id": self.next_id, "name": body["name"], "head_sha": body["head_sha"],
                        "conclusion": body.get("conclusion") or "neutral",
                        "status": body.get("status") or "completed", "history": [
                            body.get("status") or "completed"]})
            self.check_runs.append(run)
            return 201, {k: v for k, v in run.items() if k != "history"}, {}
        if (m := _CHECK_ONE.match(path)) is not None and method == "PATCH":
            for run in self.check_runs:
                if run["id"] == int(m.group(3)):
                    run.update({k: body[k] for k in ("status", "conclusion") if k in body})
                    if "output" in body:
                        self.check_outputs[run["id"]] = body["output"]
                    run["history"].append(body.get("status"))
                    return 200, {k: v for k, v in run.items() if k != "history"}, {}
            return 404, {"message": "Not Found"}, {}
        if (m := _PULL.match(path)) is not None and method == "GET":
            pr = self.pulls.get(int(m.group(3)))
            return (200, pr, {}) if pr else (404, {"message": "Not Found"}, {})
        if (m := _PERMISSION.match(path)) is not None and method == "GET":
            level = self.permissions.get(m.group(3), "none")
            data = self.example(
                "repository-collaborator-permission-response-if-user-has-admin-permissions")
            data["user"]["login"] = m.group(3)
            data["user"]["role_name"] = level
            # GitHub's legacy `permission` folds maintain into write and triage into read
            data.update(permission={"maintain": "write", "triage": "read"}.get(level, level),
                        role_name=level)
            return 200, data, {}
        git = self._git(method, path, query, body)
        if git is not None:
            return git
        return 404, {"message": "Not Found"}, {}

    # ---------------------------------------------------------------- contents, git data

    @staticmethod
    def blob_sha(content: bytes) -> str:
        return hashlib.sha1(b"blob %d\0" % len(content) + content).hexdigest()

    def _file(self, owner: str, repo: str, branch: str, path: str) -> dict[str, Any]:
        content = self.branches[(owner, repo, branch)][path]
        url = f"{HOST}/repos/{owner}/{repo}/contents/{path}?ref={branch}"
        sha = self.blob_sha(content)
        return {"type": "file", "encoding": "base64", "size": len(content),
                "name": path.rsplit("/", 1)[-1], "path": path,
                "content": base64.encodebytes(content).decode(), "sha": sha, "url": url,
                "git_url": f"{HOST}/repos/{owner}/{repo}/git/blobs/{sha}",
                "html_url": f"https://github.com/{owner}/{repo}/blob/{branch}/{path}",
                "download_url": f"https://raw.githubusercontent.com/{owner}/{repo}/{branch}/"
                                f"{path}",
                "_links": {"git": f"{HOST}/repos/{owner}/{repo}/git/blobs/{sha}",
                           "html": f"https://github.com/{owner}/{repo}/blob/{branch}/{path}",
                           "self": url}}

    def _sha(self) -> str:
        self.commits_made += 1
        return hashlib.sha1(b"commit %d" % self.commits_made).hexdigest()

    def _git(self, method: str, path: str, query: dict[str, list[str]],
             body: Any) -> tuple[int, Any, dict[str, str]] | None:
        not_found = (404, {"message": "Not Found",
                           "documentation_url": "https://docs.github.com/rest"}, {})
        if (m := _CONTENTS.match(path)) is not None:
            owner, repo, file = m.group(1), m.group(2), m.group(3)
            if method == "GET":
                branch = query.get("ref", ["main"])[-1]
                files = self.branches.get((owner, repo, branch))
                if files is None or file not in files:
                    return not_found
                return 200, self._file(owner, repo, branch, file), {}
            if method == "PUT":
                branch = body.get("branch", "main")
                files = self.branches.get((owner, repo, branch))
                if files is None:
                    return (404, {"message": f"Branch {branch} not found",
                                  "documentation_url": "https://docs.github.com/rest"}, {})
                old = files.get(file)
                if old is not None and body.get("sha") != self.blob_sha(old):
                    return (409, {"message": f"{file} does not match {body.get('sha')}",
                                  "documentation_url": "https://docs.github.com/rest"}, {})
                if old is None and body.get("sha"):
                    return (422, {"message": "sha given for a new file",
                                  "documentation_url": "https://docs.github.com/rest"}, {})
                files[file] = base64.b64decode(body["content"])
                answer = self.example("file-commit-example-for-creating-a-file")
                answer["content"] = {k: v for k, v in self._file(owner, repo, branch,
                                                                  file).items()
                                     if k not in ("content", "encoding")}
                return (201 if old is None else 200), answer, {}
        if (m := _GET_REF.match(path)) is not None and method == "GET":
            branch = m.group(3).removeprefix("heads/")
            if (m.group(1), m.group(2), branch) not in self.branches:
                return not_found
            ref = self.example("git-ref")
            ref["ref"] = f"refs/heads/{branch}"
            return 200, ref, {}
        if _TREES.match(path) and method == "POST":
            tree = self.example("git-tree")
            tree["sha"] = self._sha()
            self.trees = {**getattr(self, "trees", {}),
                          tree["sha"]: {e["path"]: e.get("content", "").encode()
                                        for e in body["tree"]}}
            return 201, tree, {"Location": tree["url"]}
        if _COMMITS.match(path) and method == "POST":
            commit = self.example("git-commit")
            commit["sha"] = self._sha()
            self.commit_trees = {**getattr(self, "commit_trees", {}),
                                 commit["sha"]: body["tree"]}
            return 201, commit, {"Location": commit["url"]}
        if (m := _REFS.match(path)) is not None and method == "POST":
            branch = body["ref"].removeprefix("refs/heads/")
            key = (m.group(1), m.group(2), branch)
            if key in self.branches:
                return (422, {"message": "Reference already exists",
                              "documentation_url": "https://docs.github.com/rest"}, {})
            tree = getattr(self, "commit_trees", {}).get(body["sha"])
            self.branches[key] = dict(getattr(self, "trees", {}).get(tree, {}))
            ref = self.example("git-ref")
            ref["ref"] = body["ref"]
            return 201, ref, {"Location": ref["url"]}
        return None

    def _page(self, key: tuple[str, str, int], path: str,
              query: dict[str, list[str]]) -> tuple[int, Any, dict[str, str]]:
        per_page = min(int(query.get("per_page", ["30"])[-1]), 100)
        page = int(query.get("page", ["1"])[-1])
        items = self.comments.get(key, [])
        last = max(1, -(-len(items) // per_page))
        chunk = items[(page - 1) * per_page: page * per_page]
        links = []
        if page < last:
            links.append(f'<{self.url}{path}?per_page={per_page}&page={page + 1}>; rel="next"')
            links.append(f'<{self.url}{path}?per_page={per_page}&page={last}>; rel="last"')
        return 200, chunk, {"Link": ", ".join(links)} if links else {}

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def _serve(self) -> None:
                split = urlsplit(self.path)
                query = parse_qs(split.query)
                length = int(self.headers.get("Content-Length") or 0)
                data = self.rfile.read(length) if length else b""
                with fake.lock:
                    if fake._validate_request(self.command, split.path, query, data):
                        try:
                            status, body, headers = fake.handle(
                                self.command, split.path, query, data,
                                self.headers.get("Authorization", ""))
                        except Exception as exc:
                            fake.violations.append(f"fake crashed on {split.path}: {exc!r}")
                            status, body, headers = 500, {"message": "fake crashed"}, {}
                    else:
                        status, headers = 422, {}
                        body = {"message": "Invalid request.", "documentation_url":
                                "https://docs.github.com/rest"}
                    html = isinstance(body, str)  # a proxy's or an outage page
                    raw = body.encode() if html else json.dumps(body).encode()
                    if status != 401 and not html:
                        fake._validate_response(self.command, split.path, query, data,
                                                status, raw, headers)
                    fake.calls.append(Call(self.command, split.path, query,
                                           json.loads(data) if data else None, status,
                                           self.headers.get("Authorization", "")))
                self.send_response(status)
                self.send_header("Content-Type", "text/html; charset=utf-8" if html
                                 else "application/json; charset=utf-8")
                self.send_header("Content-Length", str(len(raw)))
                for k, v in headers.items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(raw)

            do_GET = do_POST = do_PATCH = do_DELETE = do_PUT = _serve

            def log_message(self, format: str, *args: Any) -> None:
                return None

        return Handler
