"""Contracts for the scenario, the modes (the one variable), runners and repository pins."""

from __future__ import annotations

import datetime as dt
import math
import re
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BeforeValidator,
    Field,
    ValidationInfo,
    field_validator,
    model_validator,
)

from copeca_action._util.model import InputModel
from copeca_action.scenario._settings import Adaptive as Adaptive
from copeca_action.scenario._settings import Thresholds as Thresholds
from copeca_action.scenario._task import COMMIT_RE, NonEmpty, relative_path

NAME_RE = r"^[a-z0-9][a-z0-9._-]*$"
Name = Annotated[str, Field(pattern=NAME_RE, max_length=64)]
Argv = Annotated[list[NonEmpty], Field(min_length=1)]
EnvName = Annotated[str, Field(pattern=r"^[A-Za-z_][A-Za-z0-9_]*$")]
"""An environment variable's name (`A=B` or an empty name fails only when a run starts)."""

_MODEL_ID = re.compile(r"[^\s\x00-\x1f\x7f-][^\s\x00-\x1f\x7f]{0,199}")


def check_model_id(value: str) -> str:
    """A model id as a vendor names it: no spaces or control characters (a trailing space
    never matches a price or the served model), and no leading `-` (it goes into the CLI's
    argv after `--model`, where it would read as an option)."""
    if not _MODEL_ID.fullmatch(value):
        raise ValueError(f"{value!r} is not a model id: expected at most 200 characters "
                         "without spaces or control characters, not starting with '-'")
    return value


ModelId = Annotated[str, Field(min_length=1), AfterValidator(check_model_id)]

TEMPLATE_FIELDS: tuple[str, ...] = ("prompt", "model", "max_turns", "workdir", "config_dir",
                                    "tool_dir", "budget_usd", "mcp_config", "mcp_tools")
"""The `{name}`s a runner's argument lists may use; any other `{name}` is passed on as
written (a prompt's own braces survive), so a typo would reach the CLI verbatim."""
_TEMPLATE_FIELD = re.compile(r"\{([a-z_]+)\}")

KNOWN_PARSERS: tuple[str, ...] = ("stream_json", "codex_json", "gemini_json", "qwen_json",
                                  "opencode_json")
"""Transcript parsers a runner may name; transcript/ registers one implementation each."""

_GLOB_CHARS = re.compile(r"^[A-Za-z0-9._/*?\[\]!-]+\Z")


def check_glob(value: str) -> str:
    """A task-id glob: fnmatch syntax over ids; brackets must balance."""
    if not value:
        raise ValueError("a glob cannot be empty")
    if not _GLOB_CHARS.match(value):
        raise ValueError(f"glob {value!r} has characters a task id never has "
                         "(allowed: letters, digits, . _ / - and * ? [ ] !)")
    depth = 0
    for ch in value:
        depth += ch == "["
        depth -= ch == "]"
        if depth not in (0, 1):
            raise ValueError(f"glob {value!r} has unbalanced brackets")
    if depth:
        raise ValueError(f"glob {value!r} has an unclosed '['")
    return value


# ---------------------------------------------------------------- scenario


class TaskSelection(InputModel):
    """Which tasks run: ids matching any `include` glob and no `exclude` glob."""

    include: Annotated[list[str], Field(min_length=1)]
    exclude: list[str] = []

    @field_validator("include", "exclude")
    @classmethod
    def _globs(cls, values: list[str]) -> list[str]:
        return [check_glob(v) for v in values]


class Scenario(InputModel):
    """One experiment: tasks × modes (arms) × models × repetitions."""

    name: Name
    description: str = ""
    tasks: TaskSelection
    modes: Annotated[list[Name], Field(min_length=1)]
    """Arms to run; names of corpus/modes/*.yaml. Include `baseline` for a delta."""
    models: Annotated[list[ModelId], Field(min_length=1)]
    model_runner_map: dict[ModelId, Name]
    """Which runner (runners/<name>.yaml) drives each model."""
    repetitions: Annotated[int, Field(ge=1, le=1000)] = 3
    budget_usd: Annotated[float, Field(gt=0)] | None = None
    """Whole-scenario spend cap: no run starts that would pass it."""
    run_budget_usd: Annotated[float, Field(ge=0.0001)] | None = None
    """Per-run cap passed to CLIs that support one, in dollars to 4 decimals (at least
    0.0001: a smaller cap was passed as `0.0000`)."""
    timeout_s: Annotated[float, Field(gt=0, le=86400)] = 900
    """Wall-clock limit per agent run; the process group is killed after it."""
    max_turns: Annotated[int, Field(ge=1, le=1000)] = 40
    workers: Annotated[int, Field(ge=1, le=256)] = 2
    seed: Annotated[int, Field(ge=0)] = 0
    """Seeds the bootstrap and any sampling, so reports are reproducible."""
    resamples: Annotated[int, Field(ge=100, le=1_000_000)] = 10_000
    thresholds: Thresholds = Thresholds()
    adaptive: Adaptive | None = None
    model_endpoint: Literal["vendor", "scripted"] = "vendor"
    """`scripted`: the CLIs talk to the local scripted model server (demo, dry runs)."""
    scripts: str | None = None
    """Directory of scripted-model scripts, relative to the scenario file, inside the
    benchmark (the corpus folder, or the scenario's own folder), e.g. `../scripts`."""

    @field_validator("modes", "models")
    @classmethod
    def _unique(cls, values: list[str]) -> list[str]:
        dupes = sorted({v for v in values if values.count(v) > 1})
        if dupes:
            raise ValueError(f"listed more than once: {', '.join(dupes)}")
        return values

    @model_validator(mode="after")
    def _every_model_has_a_runner(self) -> Scenario:
        missing = [m for m in self.models if m not in self.model_runner_map]
        if missing:
            raise ValueError("model_runner_map has no runner for: " + ", ".join(missing))
        return self


# ---------------------------------------------------------------- mode


class Validity(InputModel):
    """How a run proves the tool under test was really used."""

    kind: Literal["tool_call_prefix", "marker_file", "proxy_requests"]
    prefix: NonEmpty | None = None
    """tool_call_prefix: a tool call whose name starts with this (e.g. `mcp__codesearch__`)."""
    path: NonEmpty | None = None
    """marker_file: a file (worktree-relative or absolute) the tool writes when used."""
    min_requests: Annotated[int, Field(ge=1)] = 1
    """proxy_requests: at least this many requests counted in `path` (a counter file)."""

    @model_validator(mode="after")
    def _needs(self) -> Validity:
        if self.kind == "tool_call_prefix" and not self.prefix:
            raise ValueError("validity kind tool_call_prefix needs `prefix`")
        if self.kind in ("marker_file", "proxy_requests") and not self.path:
            raise ValueError(f"validity kind {self.kind} needs `path`")
        return self


def _json_value(value: Any, where: str) -> None:
    """Refuse what a JSON settings file (or Codex's TOML) cannot hold: YAML dates, binary,
    non-finite numbers, non-string keys. Found here, not when the first run writes the file."""
    if value is None or isinstance(value, bool | int | str):
        return
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"{where}: {value} is not a finite number")
        return
    if isinstance(value, list):
        for i, item in enumerate(value):
            _json_value(item, f"{where}[{i}]")
        return
    if isinstance(value, dict):
        for key, item in value.items():
            if not isinstance(key, str):
                raise ValueError(f"{where}: key {key!r} is not a string; quote it")
            _json_value(item, f"{where}.{key}")
        return
    raise ValueError(f"{where}: {value!r} ({type(value).__name__}) is not a JSON value; "
                     "quote it")


def _check_servers(config: dict[str, Any]) -> None:
    """`mcpServers` as every CLI reads it: a non-empty mapping of server name → `{command,
    args, env}` or `{url}`. Anything else crashed or silently dropped the server when a run
    wrote the CLI's config (after the baseline's runs were paid for)."""
    servers = config.get("mcpServers")
    if not isinstance(servers, dict) or not servers:
        raise ValueError("mcp_config.mcpServers must map each server's name to its "
                         "`command` (with `args`, `env`) or `url`; got "
                         + ("an empty mapping" if isinstance(servers, dict)
                            else repr(servers)))
    for name, spec in servers.items():
        where = f"mcp_config.mcpServers.{name}"
        if not re.fullmatch(r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,63}", name):
            raise ValueError(f"{where}: a server name is letters, digits, '_', '.' or '-' "
                             "(it becomes part of the tool names, mcp__<server>__<tool>)")
        if not isinstance(spec, dict):
            raise ValueError(f"{where}: expected a mapping with `command` or `url`, got "
                             f"{spec!r}")
        command, url = spec.get("command"), spec.get("url")
        if not (isinstance(command, str) and command) and not (isinstance(url, str) and url):
            raise ValueError(f"{where}: needs `command` (a non-empty string) or `url`")
        args = spec.get("args", [])
        if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
            raise ValueError(f"{where}.args: expected a list of strings (quote numbers)")
        env = spec.get("env", {})
        if not isinstance(env, dict) or not all(isinstance(v, str) for v in env.values()):
            raise ValueError(f"{where}.env: expected a mapping of strings (quote numbers "
                             "and true/false)")


class Mode(InputModel):
    """The one variable between arms. `baseline` sets nothing; every other mode sets
    something. `{tool_dir}` in any string expands to the checkout of the tool under test."""

    name: Name
    description: str = ""
    mcp_config: dict[str, Any] | None = None
    """An MCP configuration given to the agent: `{mcpServers: {<name>: {command, args, env}
    or {url}}}`, at least one server, JSON values only (a YAML date or a number in `args` or
    `env` is refused at load: quote it)."""
    env: dict[EnvName, str] = {}
    """Environment variables merged over the allow-listed base."""
    agent_config: dict[str, Any] | None = None
    """Settings overlay written into the run's fresh config dir (e.g. Claude settings.json);
    JSON values only (quote a date)."""
    wrapper: Argv | None = None
    """argv prefix the agent command is run through (e.g. a proxy launcher)."""
    setup: list[Argv] = []
    """Commands run in the worktree before the agent; a failure is an infra_error."""
    validity: Validity | None = None

    @field_validator("mcp_config", "agent_config")
    @classmethod
    def _json_settings(cls, value: dict[str, Any] | None,
                       info: ValidationInfo) -> dict[str, Any] | None:
        if value is not None:
            _json_value(value, str(info.field_name))
            if info.field_name == "mcp_config" and "mcpServers" in value:
                _check_servers(value)
        return value

    @model_validator(mode="after")
    def _baseline_is_empty(self) -> Mode:
        active = [k for k in ("mcp_config", "agent_config", "wrapper") if getattr(self, k)]
        active += [k for k in ("env", "setup") if getattr(self, k)]
        if self.name == "baseline" and active:
            raise ValueError("the baseline mode must set nothing; it sets " + ", ".join(active))
        if self.name != "baseline" and not active:
            raise ValueError("a mode other than baseline must set at least one of mcp_config, "
                             "env, agent_config, wrapper, setup")
        if self.mcp_config is not None and "mcpServers" not in self.mcp_config:
            raise ValueError("mcp_config needs a top-level `mcpServers` mapping")
        return self


# ---------------------------------------------------------------- runner


_ISO_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")


def _iso_date(value: Any) -> Any:
    """A date as YAML reads it (`2026-11-01`) or the same in quotes, as a program that
    writes YAML from JSON quotes it: both are the one date written. Anything else (a number,
    which lax pydantic read as seconds since 1970) is left to the strict check."""
    if isinstance(value, str) and _ISO_DATE.fullmatch(value):
        try:
            return dt.date.fromisoformat(value)
        except ValueError as exc:
            raise ValueError(f"{value!r} is no date: {exc}") from None
    return value


IsoDate = Annotated[dt.date, BeforeValidator(_iso_date)]


MAX_PRICE_USD = 10_000.0
"""USD per million tokens no model costs (the dearest list price is a few hundred): a value
above it is a typo, and 1e308 made a run's cost overflow to infinity."""
Price = Annotated[float, Field(ge=0, le=MAX_PRICE_USD)]


class Pricing(InputModel):
    """One model's list prices, USD per million tokens. Every field is required: a price
    that is not written down is an error, never 0. `null` says the vendor has no such token
    class for this model (e.g. no 1-hour cache); tokens of a `null` class make the run's
    cost unknown rather than free."""

    input: Price
    """Uncached input tokens."""
    output: Price
    """Output tokens (reasoning included)."""
    cache_read: Price | None
    """Input tokens read from the prompt cache (cache hits)."""
    cache_write_5m: Price | None
    """Input tokens written to the prompt cache with the default (5-minute) lifetime. A
    vendor that does not bill cache writes apart bills them as input: write the input
    price here."""
    cache_write_1h: Price | None
    """Input tokens written to the 1-hour prompt cache, where the vendor bills them apart
    (Anthropic: 2 × input); `null` where the vendor has no such cache."""
    aliases: list[ModelId] = []
    """Other ids the same model is served under (dated snapshots, `[1m]` variants) and
    priced the same. No prefix is ever guessed: an id that is neither a key nor an alias
    has no price."""
    source: Annotated[str, Field(pattern=r"^https?://\S+$")]
    """The vendor's page these prices were read from."""
    checked: IsoDate
    """When they were last checked against `source`."""
    note: str = ""
    """What is not modelled (long-context or regional surcharges, priority tiers, ...)."""


class Runner(InputModel):
    """How to drive one agent CLI. Adding a CLI = one of these (plus a parser if new)."""

    name: Name
    binary: NonEmpty
    """Executable: a name under runners/node_modules/.bin, on PATH, or an absolute path."""
    package: NonEmpty | None = None
    """npm package that provides the binary (pinned in runners/package.json)."""
    argv: Argv
    """Arguments; `{prompt}`, `{model}`, `{max_turns}`, `{workdir}` expand."""
    model_args: list[NonEmpty] = []
    """Appended to select the model, e.g. `[--model, "{model}"]`."""
    max_turns_args: list[NonEmpty] = []
    budget_args: list[NonEmpty] = []
    """Appended when the scenario sets run_budget_usd (`{budget_usd}` expands)."""
    mcp_args: list[NonEmpty] = []
    """Appended when the mode has an MCP config (`{mcp_config}` = path of the written file)."""
    version_args: list[NonEmpty] = ["--version"]
    config_dir_env: Annotated[str, Field(pattern=r"^[A-Z_][A-Z0-9_]*$")]
    """Variable naming the CLI's config dir; a fresh dir per run."""
    credential_env: list[EnvName] = []
    """Provider key variables passed through from the host (and scrubbed from output)."""
    base_url_env: EnvName | None = None
    """Variable that points the CLI at another endpoint (the scripted server, a proxy)."""
    isolation_env: dict[EnvName, str] = {}
    """Fixed variables: telemetry off, no auto-update, no non-essential traffic."""
    parser: NonEmpty
    """Transcript parser: one of stream_json, codex_json, gemini_json, qwen_json, opencode_json
    (the name also picks how the CLI's config files are written)."""
    vendor_cost: bool
    """Whether the CLI reports a cost of its own (Claude Code's `total_cost_usd`). A runner
    without one cannot run a model that has no price: `validate`, `plan` and `run` refuse."""
    cost_headline: Literal["computed", "vendor"]
    """Which cost a record counts: `computed` (tokens × this table; the vendor figure is kept
    beside it) or `vendor` (the CLI's figure; the computed one kept beside it)."""
    pricing: dict[ModelId, Pricing]
    """Per exact model id (plus each entry's `aliases`), USD per 1M tokens."""
    pricing_updated: IsoDate
    """When the table as a whole was last checked; more than 60 days before a run's date
    warns."""

    @field_validator("argv", "model_args", "max_turns_args", "budget_args", "mcp_args",
                     "version_args")
    @classmethod
    def _known_placeholders(cls, args: list[str], info: ValidationInfo) -> list[str]:
        for i, arg in enumerate(args):
            unknown = [f for f in _TEMPLATE_FIELD.findall(arg) if f not in TEMPLATE_FIELDS]
            if unknown:
                raise ValueError(f"[{i}] {arg!r}: {{{unknown[0]}}} is not a placeholder "
                                 f"(known: {', '.join(TEMPLATE_FIELDS)}); it would reach the "
                                 "CLI as written")
        if info.field_name == "argv" and not any("{prompt}" in arg for arg in args):
            raise ValueError("never passes {prompt}: the CLI would run without the task")
        return args

    @model_validator(mode="after")
    def _aliases_unique(self) -> Runner:
        owner: dict[str, str] = {model: model for model in self.pricing}
        for model, price in self.pricing.items():
            for alias in price.aliases:
                if alias in owner:
                    what = ("a model id" if owner[alias] == alias
                            else f"an alias of {owner[alias]!r}")
                    raise ValueError(f"pricing: {alias!r} (an alias of {model!r}) is already "
                                     f"{what}")
                owner[alias] = model
        if self.cost_headline == "vendor" and not self.vendor_cost:
            raise ValueError("cost_headline is vendor but vendor_cost is false: the CLI "
                             "reports no cost to count")
        return self

    def price_of(self, model: str) -> tuple[str, Pricing] | None:
        """The priced id and price of `model` (an exact id or an alias); None: unpriced."""
        if model in self.pricing:
            return model, self.pricing[model]
        for key, price in self.pricing.items():
            if model in price.aliases:
                return key, price
        return None

    @field_validator("parser")
    @classmethod
    def _known_parser(cls, value: str) -> str:
        if value not in KNOWN_PARSERS:
            raise ValueError(f"unknown parser {value!r}; known: {', '.join(KNOWN_PARSERS)}")
        return value


# ---------------------------------------------------------------- repositories


class GitPin(InputModel):
    url: NonEmpty
    """https://, http://, ssh://, git:// or file:// (never a `ext::` or `fd::` transport,
    which runs a command, nor an option-like `-…`), without credentials (a password, or
    an http(s) user name, which is how a token is put in a URL)."""
    commit: Annotated[str, Field(pattern=COMMIT_RE)]
    """The exact 40-hex commit; tags and branches move, commits do not."""
    tag: str | None = None
    """The upstream tag this commit carries, for humans."""

    @field_validator("url")
    @classmethod
    def _plain_transport(cls, url: str) -> str:
        if url.startswith("-") or re.match(r"^[A-Za-z][A-Za-z0-9+.-]*::", url):
            raise ValueError(f"{url!r}: a git URL with a remote helper or an option runs "
                             "commands; use https://, ssh://, git:// or file://")
        found = re.match(r"^([A-Za-z][A-Za-z0-9+.-]*)://([^/?#]*)@", url)
        if found and (":" in found[2] or found[1].lower() in ("http", "https")):
            shown = url[:found.start(2)] + "***" + url[found.end(2):]
            raise ValueError(f"{shown!r}: a git URL with credentials in it (shown as ***): "
                             "the snapshot cache's mirror keeps its URL in a config agents "
                             "can read, and errors quote it; give the URL without them and "
                             "the credentials to git apart (a credential helper)")
        return url


class SdistPin(InputModel):
    name: Annotated[str, Field(pattern=r"^[A-Za-z0-9]([A-Za-z0-9._-]*[A-Za-z0-9])?$")]
    """PyPI project name (it names the sdist file in the snapshot cache)."""
    version: Annotated[str, Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9.+!_-]*$")]
    """The release (a version has no `/`: it names the sdist file in the snapshot cache)."""
    sha256: Annotated[str, Field(pattern=r"^[0-9a-f]{64}$")]
    """Digest of the sdist file, checked before it is unpacked."""


class DebianPin(InputModel):
    """An upstream source tarball as Debian's archive serves it (`<package>_<version>.orig.tar.gz`),
    fetched with the ordinary apt client once a `deb-src` entry exists: a second offline origin
    for projects that are not on PyPI."""

    package: Annotated[str, Field(pattern=r"^[a-z0-9][a-z0-9+.-]+$")]
    """Debian source package name, e.g. `node-express`."""
    version: Annotated[str, Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9.+~_-]*$")]
    """Upstream part of the Debian version (no Debian revision), e.g. `4.18.2+~4.17.14`."""
    sha256: Annotated[str, Field(pattern=r"^[0-9a-f]{64}$")]
    """Digest of the `.orig.tar.<compression>`, checked before it is unpacked."""
    compression: Literal["gz", "xz", "bz2"] = "gz"
    """How the pool file is compressed: most are `.orig.tar.gz`, repacked ones (many Java
    libraries) `.orig.tar.xz`."""
    upstream_commit: Annotated[str | None, Field(pattern=COMMIT_RE)] = None
    """The upstream git tag's commit this tarball was cut from (GitHub's archives carry it in
    their pax header); equals `git.commit` when both origins are given. May be left out only
    when the tarball does not record it (a repacked tarball): then `upstream_tag` names the
    tag and docs/corpus.md says how the tarball was checked."""
    upstream_tag: str | None = None
    """The upstream tag the tarball was cut from, for humans."""
    identical_paths: list[NonEmpty] = []
    """Path prefixes whose files are byte-identical to the tag's tree (checked by the corpus
    tests). When set, tasks may only point into them, so their line numbers hold for either
    origin. Empty: the whole tarball equals the tag's tree."""

    @property
    def filename(self) -> str:
        """The file name in Debian's pool."""
        return f"{self.package}_{self.version}.orig.tar.{self.compression}"

    @model_validator(mode="after")
    def _names_its_upstream(self) -> DebianPin:
        if self.upstream_commit is None and not self.upstream_tag:
            raise ValueError("a debian pin needs upstream_commit (the tag's commit) or, when "
                             "the tarball does not record it, upstream_tag")
        return self


class LocalPin(InputModel):
    path: NonEmpty
    """A local clone (users' own repositories); its HEAD commit is recorded per run. A
    relative path is read from the folder of repos.yaml; an absolute (or `~/`) one names a
    clone anywhere on the machine, as a `file://` git URL can."""


class BuildCacheSpec(InputModel):
    """A compiler cache for the repository's test commands, built once per snapshot and
    toolchain from the clean snapshot, then copied for each grading (docs/corpus.md)."""

    env: Annotated[str, Field(pattern=r"^[A-Z_][A-Z0-9_]*$")]
    """Variable the test commands read the cache folder from, e.g. `CARGO_TARGET_DIR` or
    `GOCACHE`; each grading gets a private copy of the warm cache there."""
    warm: Argv
    """argv run once in a clean checkout of the snapshot with `env` set to the new cache:
    builds what the tests need (e.g. `cargo test --no-run`). Must exit 0 to be kept."""
    toolchain: Argv
    """argv whose output names the toolchain (e.g. `[rustc, -vV]`); part of the cache key."""
    timeout_s: Annotated[float, Field(gt=0, le=7200)] = 1800
    """Seconds before the warm-up is killed (the cache is then not kept)."""


class RepoSpec(InputModel):
    """A repository the corpus can snapshot: at least one origin, all pinned."""

    language: NonEmpty
    description: str = ""
    git: GitPin | None = None
    sdist: SdistPin | None = None
    debian: DebianPin | None = None
    """Debian's copy of the upstream tarball (see docs/corpus.md for how it relates to git)."""
    local: LocalPin | None = None
    setup: list[Argv] = []
    """Commands run once per snapshot (not per run), e.g. installing test dependencies."""
    test_patterns: list[NonEmpty] = []
    """Extra globs of test files for patch sanitising, beside the per-language rules."""
    dockerfile: str | None = None
    """Dockerfile of the image for docker-sandboxed evaluation, relative to repos.yaml and
    inside its folder (the Dockerfile's folder is sent to the engine as the build context)."""
    build_cache: BuildCacheSpec | None = None
    """A warm compiler cache shared (as private copies) by every grading of a snapshot."""

    @field_validator("dockerfile")
    @classmethod
    def _dockerfile_inside(cls, value: str | None) -> str | None:
        return None if value is None else relative_path(value, "the folder of repos.yaml")

    @model_validator(mode="after")
    def _has_origin(self) -> RepoSpec:
        if not (self.git or self.sdist or self.debian or self.local):
            raise ValueError("a repository needs at least one origin: git, sdist, debian or local")
        if self.git and self.debian and self.debian.upstream_commit != self.git.commit:
            raise ValueError(f"debian.upstream_commit {self.debian.upstream_commit} differs from "
                             f"git.commit {self.git.commit}; both must name the same upstream tag")
        return self


class RepoIndex(InputModel):
    """corpus/repos.yaml."""

    repos: Annotated[dict[Name, RepoSpec], Field(min_length=1)]
