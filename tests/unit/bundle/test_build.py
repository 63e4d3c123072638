"""A bundle signs the build that computed its report."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from bundle_support import contents_for
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from copeca_action._util.build import Build
from copeca_action._util.scrub import Scrubber
from copeca_action.bundle import verify_bundle, write_bundle
from copeca_action.plan import RunPlan


def test_a_bundle_records_the_build_that_computed_its_report(build) -> None:  # type: ignore[no-untyped-def]
    environment = verify_bundle(build()).statement.predicate.environment
    this = Build.this()
    assert (environment.harness_version, environment.report_code,
            environment.numpy_version) == (this.version, this.report_code, this.numpy)
    assert environment.report_code is not None and len(environment.report_code) == 64


def test_a_merged_bundle_names_the_build_that_merged_it(
        tmp_path: Path, plan: RunPlan, demo, key: Ed25519PrivateKey) -> None:  # type: ignore[no-untyped-def]
    """A merge computes the merged report, so the merged bundle names the merging build,
    not the first shard's (which a recompute would otherwise hold to another build)."""
    from copeca_action.bundle import merge_bundles
    from copeca_action.plan import Shard, shard_plan

    paths = []
    for i in (1, 2):
        contents = contents_for(shard_plan(plan, Shard(index=i, count=2)), demo[2])
        older = contents.environment.model_copy(update={
            "harness_version": "0.0.9", "report_code": "0" * 64, "numpy_version": "1.0.0"})
        paths.append(tmp_path / f"shard{i}.copeca")
        write_bundle(dataclasses.replace(contents, environment=older), paths[-1], key,
                     Scrubber())
    out = tmp_path / "all.copeca"
    merge_bundles(paths, out, key, key.public_key(), scrubber=Scrubber())
    environment = verify_bundle(out, key.public_key()).statement.predicate.environment
    this = Build.this()
    assert (environment.harness_version, environment.report_code,
            environment.numpy_version) == (this.version, this.report_code, this.numpy)
    assert environment.repo_commit == "a" * 40  # the rest is still the shards'
