"""What a `.copeca` bundle holds: the manifest, the in-toto statement and its DSSE envelope.

Field order is format: these models are serialised as canonical JSON (sorted keys) except
where a spec fixes names (`_type`, `predicateType`, `payloadType`).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field, field_validator

from copeca_action._util.model import RecordModel
from copeca_action.bundle._layout import (  # re-exported: the format's names live there
    ATTEMPTS_DIR,
    ENVELOPE,
    MANIFEST,
    METADATA,
    OMITTED,
    PAYLOAD_TYPE,
    PLAN,
    PREDICATE_TYPE,
    RECORD,
    REPORT_FILES,
    RESULTS,
    RUNS_DIR,
    SCENARIO,
    STATEMENT,
    STATEMENT_TYPE,
    check_member_path,
)
from copeca_action.records._kinds import MAX_COUNT

__all__ = ["ATTEMPTS_DIR", "ENVELOPE", "MANIFEST", "METADATA", "OMITTED", "PAYLOAD_TYPE",
           "PLAN", "PREDICATE_TYPE", "RECORD", "REPORT_FILES", "RESULTS", "RUNS_DIR",
           "SCENARIO", "STATEMENT", "STATEMENT_TYPE", "check_member_path"]


class FileEntry(RecordModel):
    """One member of the bundle as it was written."""

    path: str
    size: Annotated[int, Field(ge=0)]
    sha256: Annotated[str, Field(pattern=r"^[0-9a-f]{64}$")]


class Manifest(RecordModel):
    """Every member except the three metadata files, sorted by path."""

    schema_version: Literal[1] = 1
    files: list[FileEntry]
    scrubbed: dict[str, Annotated[int, Field(ge=0, le=MAX_COUNT)]] = {}
    """Redactions per rule (`env:<VAR>`, `anthropic_key`, ...): counts, never values (no
    count is negative or beyond 10^12, which verify would print)."""

    @field_validator("files")
    @classmethod
    def _sorted_unique(cls, files: list[FileEntry]) -> list[FileEntry]:
        paths = [f.path for f in files]
        if paths != sorted(set(paths)):
            raise ValueError("files must be sorted by path with no duplicates")
        return files


class Summary(RecordModel):
    """The headline of the report, small enough to sign and to print in a verify."""

    verdict: str
    """regression | improvement | inconclusive | invalid | skipped | ..."""
    delta: float | None = None
    delta_ci: tuple[float, float] | None = None
    control_delta: float | None = None
    cpc: dict[str, float | None] = {}
    """Cost per correct answer per arm in USD; None when nothing was correct (infinite)."""
    extra: dict[str, Any] = {}
    """Anything else the report wants signed (runs, spend, adoption, ...)."""


VERSION = (r"^[0-9]+(\.[0-9]+)*((a|b|rc)[0-9]+)?(\.post[0-9]+)?(\.dev[0-9]+)?"
           r"(\+[A-Za-z0-9]+(\.[A-Za-z0-9]+)*)?$")
"""A version as PEP 440 writes it in normal form (`0.1.0`, `2.1.0rc1`, `0.2.0.dev3+g1a2b`):
what verify prints of a build, and puts in a `pipx run copeca-action==VERSION` command, is
one of these, never text a bundle's maker chose (a line break, an escape sequence, a shell
word)."""


class Environment(RecordModel):
    """Where and with what the runs were made; None when unknown."""

    harness_version: Annotated[str, Field(pattern=VERSION, max_length=64)]
    """The copeca-action version that wrote the bundle and computed its report (a merge's:
    the merging one)."""
    report_code: Annotated[str, Field(pattern=r"^[0-9a-f]{64}$")] | None = None
    """sha256 of the code and data that build computes and renders the report with
    (`_util/build.py`); with harness_version and numpy_version, the build `verify` compares
    with its own. None: not recorded (a bundle made before it was)."""
    numpy_version: Annotated[str, Field(pattern=VERSION, max_length=64)] | None = None
    """The numpy that build computed the report with; None: not recorded."""
    cli_versions: dict[str, str] = {}
    """Runner name → agent CLI version, as the records report them."""
    image_digest: str | None = None
    repo_commit: str | None = None
    """The commit of the repository whose tool was measured (GITHUB_SHA in Actions)."""
    workflow_run: str | None = None
    """URL of the GitHub Actions run that produced the bundle."""


class Signer(RecordModel):
    keyid: str
    """sha256 of the raw 32-byte Ed25519 public key, hex."""
    public_key: str
    """The raw public key, base64."""


class Predicate(RecordModel):
    """The copeca-specific claims the statement signs."""

    scenario: str
    scenario_hash: str
    """RunPlan.scenario_hash: the digest of the scenario as loaded."""
    scenario_sha256: str
    """sha256 of scenario.yaml as bundled."""
    plan_digest: str
    """Digest of every run id of the whole plan: all shards of a plan share it."""
    compare: str
    shard: str | None = None
    """`i/n` for a shard bundle, None for a whole plan."""
    runs: int
    """Run ids this bundle's plan holds."""
    seed: int
    thresholds: dict[str, Any]
    environment: Environment
    summary: Summary | None = None
    """None when no report was computed (for example a merge without the report stage)."""
    signer: Signer | None = None
    """None: the bundle is unsigned and proves nothing about who made it."""


class Subject(RecordModel):
    name: str
    digest: dict[str, str]


class Statement(RecordModel):
    """An in-toto Statement v1 whose one subject is manifest.json."""

    type_: Literal["https://in-toto.io/Statement/v1"] = Field(
        "https://in-toto.io/Statement/v1", alias="_type")
    subject: Annotated[list[Subject], Field(min_length=1)]
    predicate_type: Literal["https://copeca-action.dev/bundle/v1"] = Field(
        "https://copeca-action.dev/bundle/v1", alias="predicateType")
    predicate: Predicate

    model_config = RecordModel.model_config | {"populate_by_name": True}


class EnvelopeSignature(RecordModel):
    keyid: str = ""
    sig: str
    """base64 of the Ed25519 signature over PAE(payloadType, payload)."""


class Envelope(RecordModel):
    """A DSSE envelope; `signatures` is empty for an unsigned bundle."""

    payload: str
    """base64 of statement.json's exact bytes."""
    payload_type: str = Field(PAYLOAD_TYPE, alias="payloadType")
    signatures: list[EnvelopeSignature]

    model_config = RecordModel.model_config | {"populate_by_name": True}
