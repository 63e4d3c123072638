"""Merge shard bundles into one signed bundle with one report: the single path behind
`copeca-action merge` and the action's `merge:` input, so both give the same report."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from cryptography.hazmat.primitives.asymmetric.ed25519 import (
    Ed25519PrivateKey,
    Ed25519PublicKey,
)

from copeca_action._util.hashing import sha256_bytes
from copeca_action.bundle import (
    Manifest,
    RenderedReport,
    ReportFn,
    SafeZip,
    VerifiedBundle,
    check_bundle_path,
    merge_bundles,
    verify_bundle,
)
from copeca_action.bundle._model import SCENARIO
from copeca_action.conclude._conclude import merged_report
from copeca_action.conclude._report import bundled_scenario
from copeca_action.errors import ConfigError, CopecaError, VerificationError
from copeca_action.plan import RunPlan
from copeca_action.records import RunRecord
from copeca_action.report import Report
from copeca_action.scenario import Runner, Scenario, Task


@dataclass(frozen=True)
class ShardScenario:
    """The scenario the shards ran and its YAML as bundled."""

    scenario: Scenario
    yaml: str


def shard_scenario(path: Path, thresholds: Mapping[str, float] | None = None,
                   verified: VerifiedBundle | None = None) -> ShardScenario | None:
    """The scenario a shard was run from (its bundled scenario.yaml) with the thresholds it
    ran with (the signed statement's, which carry any input overrides), then `thresholds`
    over them. None when the shard is unreadable: merging then names what is wrong with it.

    The shard is verified first (`verified`: already done by the caller), and scenario.yaml
    is read through SafeZip (capped) and checked against the sha256 the statement signs:
    nothing of an unchecked file is inflated."""
    try:
        bundle = verified if verified is not None else verify_bundle(path)
        with SafeZip(path) as archive:
            data = archive.read(SCENARIO)
        if sha256_bytes(data) != bundle.statement.predicate.scenario_sha256:
            return None  # changed since it was verified
        text = data.decode()
        scenario = bundled_scenario(text, {**bundle.statement.predicate.thresholds,
                                           **(thresholds or {})})
    except (OSError, KeyError, ValueError, CopecaError):
        return None
    return ShardScenario(scenario, text)


@dataclass(frozen=True)
class Merged:
    """What a merge wrote: the bundle, and the report built from all the shards' records."""

    manifest: Manifest
    shards: list[VerifiedBundle]
    report: Report | None
    """None: no readable scenario in the shards, so the merged bundle carries no report."""
    files: Mapping[str, bytes] = field(default_factory=dict)
    """report.json, report.md, report.html as written into the bundle."""


def merge_shards(paths: Sequence[Path], out: Path, *, key: Ed25519PrivateKey | None,
                 runners: Mapping[str, Runner], pubkey: Ed25519PublicKey | None = None,
                 thresholds: Mapping[str, float] | None = None,
                 scenario: ShardScenario | None = None,
                 check: Scenario | None = None, tasks: Mapping[str, Task] | None = None,
                 allow_unsigned: bool = False) -> Merged:
    """Verify the shards, merge them into `out` with the report `conclude` would write for
    the whole plan, and verify the result with the key's public half.

    Every shard must be signed by the key to trust: `pubkey`, else the public half of `key`
    (a merge never re-signs what its own key did not sign). Without either, or to accept
    unsigned or foreign shards, `allow_unsigned` is required, and the merged bundle says so
    (a report warning, and `merge_notes` in the signed summary).

    `scenario`: the one to report with (default: the first shard's, see `shard_scenario`);
    `check` and `tasks`: the scenario the shards must have been planned from (each shard
    and the merged bundle are verified against it, so a scenario with other settings is
    refused before anything is written), naming every missing run when the shards are
    incomplete. The merged bundle is verified before it takes `out`'s name: one that does
    not verify is never left there.

    Raises:
        VerificationError: `unsigned` when no key to trust was given and `allow_unsigned`
            is off; any verification failure of a shard.
    """
    trust = pubkey if pubkey is not None else (
        key.public_key() if key is not None and not allow_unsigned else None)
    if trust is None and not allow_unsigned:
        raise VerificationError("unsigned", "merge: no key to trust the shards by: pass "
                                "--pubkey (the shards' signer) or --key (its public half is "
                                "trusted), or --allow-unsigned to merge shards nobody vouches "
                                "for (the merged bundle then says so)")
    notes = ([] if trust is not None else [
        f"merged from {len(paths)} shard(s) with --allow-unsigned: their signatures were not "
        "checked against a trusted key, so the merged bundle vouches only for the merge"])
    if paths and out.resolve() in {p.resolve() for p in paths}:
        raise ConfigError(f"--out {out}: this is one of the shards; the merge would overwrite "
                          "it", file="--out")
    check_bundle_path(out)  # before the shards are verified, not after
    which = scenario or (shard_scenario(paths[0], thresholds) if paths else None)
    made: dict[str, Report] = {}
    rendered: dict[str, bytes] = {}
    report_fn: ReportFn | None = None
    if which is not None:
        inner = merged_report(which.scenario, which.yaml, runners=runners, key=key, made=made,
                              notes=notes)

        def report_fn(plan: RunPlan, records: list[RunRecord],
                      redactions: int) -> RenderedReport:
            result = inner(plan, records, redactions)
            rendered.update(result.files)
            return result

    public = key.public_key() if key is not None else None
    manifest, shards = merge_bundles(
        paths, out, key, trust, report=report_fn, scenario=check, tasks=tasks,
        thresholds=which.scenario.thresholds.model_dump(mode="json") if which else None,
        check=lambda written: verify_bundle(written, public, check, tasks))
    return Merged(manifest, shards, made.get("report"), rendered)
