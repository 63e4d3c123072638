"""Which runs get the real model key, and how: behind the key forwarder (keyproxy/) the agent
holds a placeholder and only the harness the key; otherwise the agent holds the key itself
and its record says so (`key_in_agent_env`).

When the forwarder stands in front (`forwarder_wanted`): by default only for a job with a
`--base-url`, whose agents already talk to an endpoint that is not the vendor's. For the
vendor's own API it would change what is measured: a CLI pointed at another host than its
vendor's behaves otherwise (Claude Code turns its MCP tool search off for any
`ANTHROPIC_BASE_URL` that is not Anthropic's, since 2.1.70, so every MCP tool's schema
enters the context; Codex is moved from its built-in OpenAI provider to a custom one), so
it is there only when asked for (`COPECA_KEY_PROXY=on`)."""

from __future__ import annotations

from collections.abc import Mapping

from copeca_action.agent._invocation import CONFIG_URL_PARSERS
from copeca_action.errors import ConfigError, Problem
from copeca_action.keyproxy import FAMILIES, FAMILY_OF_PARSER, KeyForwarder, Route
from copeca_action.scenario import Runner

KEY_PROXY_ENV = "COPECA_KEY_PROXY"
"""`on` (or `1`, `true`, `yes`): the forwarder for every real run, the vendor's API too;
`off` (or `0`, `false`, `no`): for none; unset (or `auto`): for a `--base-url` job only.
A run whose agent holds the real key is flagged and the report warns."""
KEY_IN_AGENT_ENV = "key_in_agent_env"
"""Flag of a run whose agent held the harness's real model key in its environment."""


_ON = ("on", "1", "true", "yes")
_OFF = ("off", "0", "false", "no")


def check_key_proxy(env: Mapping[str, str]) -> None:
    """Refuses a value of COPECA_KEY_PROXY that is none of the above: a typo (`onn`,
    `enabled`) was taken as unset, so a job meant to keep the key from agents handed it to
    them (flagged after the runs, never refused before)."""
    value = env.get(KEY_PROXY_ENV, "").strip().lower()
    if value not in ("", "auto", *_ON, *_OFF):
        raise ConfigError(Problem(f"${KEY_PROXY_ENV}", f"unknown value {value[:40]!r}; "
                                  f"expected on, off or auto ({', '.join(_ON)}; "
                                  f"{', '.join(_OFF)}; unset)"))


def key_proxy_off(env: Mapping[str, str]) -> bool:
    check_key_proxy(env)
    return env.get(KEY_PROXY_ENV, "").strip().lower() in _OFF


def key_proxy_on(env: Mapping[str, str]) -> bool:
    check_key_proxy(env)
    return env.get(KEY_PROXY_ENV, "").strip().lower() in _ON


def forwarder_wanted(env: Mapping[str, str], base_url: str | None) -> bool:
    """The forwarder stands in front of this job's real runs (see the module's note)."""
    if key_proxy_off(env):
        return False
    return key_proxy_on(env) or base_url is not None


def real_key(runner: Runner, env: Mapping[str, str]) -> str | None:
    """The harness's key for `runner`: its first `credential_env` variable that is set."""
    return next((env[k] for k in runner.credential_env if env.get(k, "").strip()), None)


def forwardable(runner: Runner) -> bool:
    """The runner's CLI can be pointed at another endpoint and speaks a known family."""
    return runner.parser in FAMILY_OF_PARSER and bool(
        runner.base_url_env or runner.parser in CONFIG_URL_PARSERS)


def routes_for(runners: Mapping[str, Runner], env: Mapping[str, str],
               base_url: str | None) -> list[Route]:
    """A route per runner that has a real key and a CLI the forwarder can stand in front of:
    to `base_url` (the user's endpoint) or else the vendor's API."""
    routes = []
    for name, runner in sorted(runners.items()):
        key = real_key(runner, env)
        if key is None or not forwardable(runner):
            continue
        family = FAMILIES[FAMILY_OF_PARSER[runner.parser]]
        routes.append(Route(name=name, family=family,
                            upstream=base_url or family.default_upstream, key=key,
                            vendor=base_url is None))
    return routes


def start_forwarder(runners: Mapping[str, Runner], env: Mapping[str, str],
                    base_url: str | None) -> KeyForwarder | None:
    """The job's key forwarder (None: nothing to forward, or not wanted: `forwarder_wanted`).
    Only for a real endpoint: the scripted model needs no key at all."""
    if not forwarder_wanted(env, base_url):
        return None
    routes = routes_for(runners, env, base_url)
    return KeyForwarder(routes, env) if routes else None


def key_in_agent_env(agent_env: Mapping[str, str], runner: Runner,
                     host_env: Mapping[str, str]) -> bool:
    """The agent's environment holds the harness's real key for `runner`."""
    return any(host_env.get(k, "").strip() and agent_env.get(k) == host_env[k]
               for k in runner.credential_env)
