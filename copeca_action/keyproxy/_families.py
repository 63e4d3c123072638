"""How each vendor family carries its API key, and where its API lives by default.

The key forwarder (`_forwarder.py`) swaps the placeholder an agent holds for the real key in
exactly the places its family sends a key, and refuses any other credential. Pure functions:
no sockets here, so the rules are tested on their own.

Facts (the vendors' API references): Anthropic takes `x-api-key` (an
`Authorization: Bearer` token when a CLI is given one instead); OpenAI-style APIs take
`Authorization: Bearer`; the Gemini API takes `x-goog-api-key` or the `key` query parameter.
"""

from __future__ import annotations

import urllib.parse
from collections.abc import Sequence
from dataclasses import dataclass

CREDENTIAL_HEADERS = ("authorization", "x-api-key", "x-goog-api-key", "api-key",
                      "proxy-authorization")
"""Request headers that carry a credential in any family: each is either the placeholder in a
place the family sends its key (then it gets the real key) or a refusal."""
CREDENTIAL_QUERY = ("key", "api_key", "api-key")
"""Query parameters that carry a credential (the Gemini API's `?key=`)."""


@dataclass(frozen=True)
class Family:
    """One vendor API's way of carrying a key."""

    name: str
    headers: tuple[str, ...]
    """Lower-case headers the key goes in (`authorization` as `Bearer <key>`)."""
    query: tuple[str, ...]
    """Query parameters the key goes in."""
    default_upstream: str
    """The vendor's API root as the family's CLIs address it without a base URL: the agent's
    base URL is the forwarder's origin plus this path."""


FAMILIES: dict[str, Family] = {
    "anthropic": Family("anthropic", ("x-api-key", "authorization"), (),
                        "https://api.anthropic.com"),
    "openai": Family("openai", ("authorization",), (), "https://api.openai.com/v1"),
    "gemini": Family("gemini", ("x-goog-api-key",), ("key",),
                     "https://generativelanguage.googleapis.com"),
}
FAMILY_OF_PARSER = {"stream_json": "anthropic", "opencode_json": "anthropic",
                    "codex_json": "openai", "qwen_json": "openai", "gemini_json": "gemini"}
"""A runner's family, by the parser its YAML names (Claude Code and OpenCode speak Anthropic
Messages; Codex the Responses API, Qwen Code Chat Completions, both with OpenAI's bearer key;
Gemini CLI the Gemini API)."""


class Refused(Exception):
    """A request the forwarder will not send on: `status` and a reason for the client."""

    def __init__(self, status: int, reason: str) -> None:
        super().__init__(reason)
        self.status = status
        self.reason = reason


def _bearer(value: str) -> str | None:
    scheme, _, token = value.strip().partition(" ")
    return token.strip() if scheme.lower() == "bearer" else None


def swap_headers(family: Family, headers: Sequence[tuple[str, str]], placeholder: str,
                 key: str) -> tuple[list[tuple[str, str]], bool]:
    """The headers with the placeholder replaced by `key` where `family` sends its key, and
    whether any was replaced. Raises Refused (401) for any other credential: a foreign key, a
    placeholder in a header the family does not use, a non-bearer Authorization."""
    out: list[tuple[str, str]] = []
    swapped = False
    for name, value in headers:
        low = name.lower()
        if low not in CREDENTIAL_HEADERS:
            out.append((name, value))
            continue
        held = _bearer(value) if low in ("authorization", "proxy-authorization") \
            else value.strip()
        if held != placeholder:
            raise Refused(401, f"the request carries a credential in {low} that is not this "
                               "job's placeholder; the key forwarder sends only its own key")
        if low not in family.headers:
            raise Refused(401, f"{family.name} keys do not go in {low}")
        out.append((name, f"Bearer {key}" if low == "authorization" else key))
        swapped = True
    return out, swapped


def swap_query(family: Family, query: str, placeholder: str, key: str) -> tuple[str, bool]:
    """The query string with the placeholder replaced by `key` where `family` takes a key in
    it (every other byte as it was), and whether any was replaced. Raises Refused as
    `swap_headers` does."""
    if not query:
        return query, False
    parts = query.split("&")
    swapped = False
    for i, part in enumerate(parts):
        name, eq, value = part.partition("=")
        low = urllib.parse.unquote_plus(name).lower()
        if not eq or low not in CREDENTIAL_QUERY:
            continue
        if urllib.parse.unquote_plus(value) != placeholder:
            raise Refused(401, f"the request carries a credential in ?{low}= that is not this "
                               "job's placeholder; the key forwarder sends only its own key")
        if low not in family.query:
            raise Refused(401, f"{family.name} keys do not go in ?{low}=")
        parts[i] = f"{name}={urllib.parse.quote(key, safe='')}"
        swapped = True
    return "&".join(parts), swapped
