"""Secret scrubbing for everything that leaves the process: bundles, logs, comments.

Two kinds of rule: the *values* of secret environment variables (provider keys, tokens, any
variable the user names), and *token patterns* that are secrets whatever variable they came
from. A redaction reads `[REDACTED:<rule>]`; only counts per rule are kept, never values.
Works on bytes, in streamed chunks, so a 1 GB transcript is never held in memory.
"""

from __future__ import annotations

import json
import os
import re
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field

PROVIDER_KEY_VARS: tuple[str, ...] = (
    "ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN",
    "OPENAI_API_KEY", "CODEX_API_KEY", "AZURE_OPENAI_API_KEY",
    "GOOGLE_API_KEY", "GEMINI_API_KEY",
    "GITHUB_TOKEN", "GH_TOKEN", "INPUT_GITHUB-TOKEN", "INPUT_GITHUB_TOKEN",
    "INPUT_ANTHROPIC-API-KEY", "INPUT_ANTHROPIC_API_KEY",
    "INPUT_OPENAI-API-KEY", "INPUT_OPENAI_API_KEY",
    "INPUT_SIGNING-KEY", "INPUT_SIGNING_KEY",
    "ACTIONS_RUNTIME_TOKEN", "ACTIONS_ID_TOKEN_REQUEST_TOKEN",
    "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN",
    "COPECA_SIGNING_KEY",
)
"""Variables whose values are always secret."""

EXTRA_VARS_ENV = "COPECA_SCRUB_VARS"
"""Comma- or space-separated names of more variables whose values must never be published."""

MIN_VALUE_LEN = 8
"""Shorter values are not scrubbed: `ANTHROPIC_API_KEY=x` for a local server would otherwise
redact every `x`. Real keys are far longer."""

_PEM = rb"-----BEGIN[ A-Z0-9]{0,40}PRIVATE KEY(?: BLOCK)?-----"


@dataclass(frozen=True)
class _Pattern:
    name: str
    prefilter: re.Pattern[bytes] | tuple[bytes, ...]
    """A cheap search every match implies (a regex, or literals tested with `in`, which is
    faster for long ones); most chunks fail it and skip the full regex."""
    regex: re.Pattern[bytes]


def _re(pattern: bytes, flags: int = 0) -> re.Pattern[bytes]:
    return re.compile(pattern, flags)


_SK = _re(rb"sk-")
PATTERNS: tuple[_Pattern, ...] = (
    _Pattern("private_key", (b"PRIVATE KEY",),
             _re(_PEM + rb".*?(?:-----END[ A-Z0-9]{0,40}PRIVATE KEY(?: BLOCK)?-----|\Z)",
                 re.DOTALL)),
    _Pattern("anthropic_key", _SK, _re(rb"sk-ant-[A-Za-z0-9_\-]{20,}")),
    _Pattern("openai_key", _SK,
             _re(rb"(?<![A-Za-z0-9_\-])sk-(?!ant-)(?:proj-|svcacct-|admin-)?"
                 rb"[A-Za-z0-9_\-]{32,}")),
    _Pattern("github_token", _re(rb"gh[pousr]_"), _re(rb"gh[pousr]_[A-Za-z0-9]{36,255}")),
    _Pattern("github_pat", (b"github_pat_",), _re(rb"github_pat_[A-Za-z0-9_]{50,255}")),
    _Pattern("aws_access_key", _re(rb"A(?:KI|SI|BI|CC)A"),
             _re(rb"(?<![A-Z0-9])(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}(?![A-Z0-9])")),
    _Pattern("aws_secret_key", (b"ws_secret_access_key", b"WS_SECRET_ACCESS_KEY"),
             _re(rb"(?i)aws_secret_access_key[\"']?\s*[:=]\s*[\"']?[A-Za-z0-9/+=]{40}")),
)
"""Token shapes that are secrets wherever they appear (documented in docs/security.md)."""

_SAFE_CUT = (b"\n", b" ", b'"', b",")
"""Bytes no token contains: a chunk may end after one without splitting a match."""
_MAX_CARRY = 1 << 20
_END = re.compile(rb"-----END[ A-Z0-9]{0,40}-----")


def redaction(rule: str) -> bytes:
    return f"[REDACTED:{rule}]".encode()


def env_secrets(env: Mapping[str, str] | None = None,
                extra_vars: Iterable[str] = ()) -> dict[str, str]:
    """Secret values by variable name: the provider variables, `COPECA_SCRUB_VARS` and
    `extra_vars`, when set to something long enough to be a secret."""
    env = os.environ if env is None else env
    names = set(PROVIDER_KEY_VARS) | set(extra_vars)
    names |= {n for n in re.split(r"[,\s]+", env.get(EXTRA_VARS_ENV, "")) if n}
    return {n: env[n] for n in sorted(names) if len(env.get(n, "")) >= MIN_VALUE_LEN}


def _literals(secrets: Mapping[str, str]) -> list[tuple[bytes, bytes]]:
    """(needle, replacement) pairs: each value as is, JSON-escaped, and line by line, longest
    first so a value is never half-replaced by one of its own lines."""
    pairs: dict[bytes, bytes] = {}
    for name, value in secrets.items():
        variants = {value, json.dumps(value)[1:-1]}
        variants |= {line for line in value.splitlines() if len(line) >= MIN_VALUE_LEN}
        for variant in variants:
            if len(variant) >= MIN_VALUE_LEN:
                pairs.setdefault(variant.encode(), redaction(f"env:{name}"))
    return sorted(pairs.items(), key=lambda kv: -len(kv[0]))


@dataclass
class Scrubber:
    """Redacts secret values and token patterns; `counts` accumulates over every call."""

    secrets: Mapping[str, str] = field(default_factory=dict)
    counts: Counter[str] = field(default_factory=Counter)

    def __post_init__(self) -> None:
        self._literals = _literals(self.secrets)

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None,
                 extra_vars: Iterable[str] = ()) -> Scrubber:
        return cls(env_secrets(env, extra_vars))

    def scrub(self, data: bytes) -> bytes:
        """One complete buffer (the whole file, or a chunk cut at a safe place)."""
        for needle, replacement in self._literals:
            if needle in data:
                self.counts[replacement[10:-1].decode()] += data.count(needle)
                data = data.replace(needle, replacement)
        seen: dict[object, bool] = {}
        for pattern in PATTERNS:
            if pattern.prefilter not in seen:
                seen[pattern.prefilter] = _passes(pattern.prefilter, data)
            if seen[pattern.prefilter]:
                data, n = pattern.regex.subn(redaction(pattern.name), data)
                if n:
                    self.counts[pattern.name] += n
        return data

    def scrub_text(self, text: str) -> str:
        """For log lines and error messages."""
        return self.scrub(text.encode()).decode(errors="replace")

    def scrub_stream(self, chunks: Iterable[bytes]) -> Iterator[bytes]:
        """Scrub a stream; each piece is cut after a byte no token contains, and an open
        private-key block is carried into the next piece (up to 1 MiB)."""
        carry = b""
        for chunk in chunks:
            buffer = carry + chunk
            cut = _cut_point(buffer)
            carry = buffer[cut:]
            if cut:
                yield self.scrub(buffer[:cut])
        if carry:
            yield self.scrub(carry)


def _passes(prefilter: re.Pattern[bytes] | tuple[bytes, ...], data: bytes) -> bool:
    if isinstance(prefilter, tuple):
        return any(literal in data for literal in prefilter)
    return prefilter.search(data) is not None


def _cut_point(buffer: bytes) -> int:
    """Where to end the piece to scrub now: after the last safe byte, but before an open
    `-----BEGIN` block or an AWS secret assignment that may continue in the next chunk;
    0 means wait for more (unless the carry grew too large). A secret *value* holding a
    space, comma, quote or newline may still be split across chunks (its lines are also
    scrubbed one by one)."""
    cut = max(buffer.rfind(b) for b in _SAFE_CUT) + 1
    if cut <= 0:
        return len(buffer) if len(buffer) > _MAX_CARRY else 0
    begin = buffer.rfind(b"-----BEGIN", 0, cut)
    if begin >= 0:
        end = _END.search(buffer, begin)
        if end is None and len(buffer) - begin <= _MAX_CARRY:
            cut = begin
        elif end is not None and end.end() > cut:
            cut = end.end()  # never split the END line
    for marker in (b"ws_secret_access_key", b"WS_SECRET_ACCESS_KEY"):
        at = buffer.rfind(marker, max(0, cut - 120), cut)
        if at >= 0:
            cut = max(at - 1, 0)
    return cut
