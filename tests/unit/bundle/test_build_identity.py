"""A bundle signs the build that computed its report, and `verify` tells a report another
build words otherwise (exit 16, both builds named, not confirmed) from one its records do
not give under the very build that made it (exit 15); a build id cannot be changed without
breaking the signature."""

from __future__ import annotations

import base64
import dataclasses
import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from bundle_support import contents_for
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from zipedit import read_all, rewrite

from copeca_action._util.build import REPORT_CODE, Build, report_code
from copeca_action._util.paths import PACKAGE_DIR
from copeca_action._util.scrub import Scrubber
from copeca_action.bundle import verify_bundle, write_bundle
from copeca_action.bundle._sign import sign_envelope
from copeca_action.bundle._write import pretty_json
from copeca_action.cli import main
from copeca_action.conclude import Recompute
from copeca_action.errors import VerificationError
from copeca_action.plan import RunPlan

ROOT = PACKAGE_DIR.parent
WRITE_BUNDLE = textwrap.dedent("""
    import sys
    from pathlib import Path
    sys.path.insert(0, {support!r})
    from bundle_support import contents_for, demo_plan
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
    from copeca_action._util.scrub import Scrubber
    from copeca_action.bundle import write_bundle

    scenario_path, _, _, plan = demo_plan(Path({corpus!r}))
    key = Ed25519PrivateKey.generate()
    write_bundle(contents_for(plan, scenario_path), Path(sys.argv[1]), key, Scrubber())
    Path(sys.argv[2]).write_bytes(key.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo))
""")


def another_build(tmp_path: Path, edit: dict[str, tuple[str, str]]) -> Path:
    """A copy of this checkout's package (and its runner files) with `edit[path] = (old,
    new)` made: another build of the same version."""
    root = tmp_path / "other"
    shutil.copytree(PACKAGE_DIR, root / "copeca_action",
                    ignore=shutil.ignore_patterns("__pycache__"))
    (root / "runners").mkdir()
    for runner in (ROOT / "runners").glob("*.yaml"):
        shutil.copy(runner, root / "runners")
    for name, (old, new) in edit.items():
        path = root / "copeca_action" / name
        text = path.read_text()
        assert old in text, name
        path.write_text(text.replace(old, new, 1))
    return root


def bundle_by(build_root: Path, tmp_path: Path) -> tuple[Path, Path]:
    """A signed bundle of the demo scenario written by the build at `build_root` (its own
    interpreter, its own code), and its public key."""
    out, pub = tmp_path / "other.copeca", tmp_path / "other.pub"
    script = WRITE_BUNDLE.format(support=str(Path(__file__).parent),
                                 corpus=str(ROOT / "corpus"))
    env = {**os.environ, "PYTHONPATH": str(build_root), "PYTHONDONTWRITEBYTECODE": "1"}
    subprocess.run([sys.executable, "-c", script, str(out), str(pub)], env=env, check=True,
                   cwd=tmp_path, timeout=120)
    return out, pub


def test_a_bundle_records_the_build_that_computed_its_report(build) -> None:  # type: ignore[no-untyped-def]
    environment = verify_bundle(build()).statement.predicate.environment
    this = Build.this()
    assert (environment.harness_version, environment.report_code,
            environment.numpy_version) == (this.version, this.report_code, this.numpy)
    assert environment.report_code is not None and len(environment.report_code) == 64


def test_the_same_build_confirms_its_report(build, key: Ed25519PrivateKey) -> None:  # type: ignore[no-untyped-def]
    result = verify_bundle(build(), key.public_key(), report=Recompute())
    assert result.report_checked == ("recomputed from the records: report.json, report.md, "
                                     "the signed summary match")


def test_a_report_another_build_words_otherwise_is_named_not_confirmed(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The reported failure: a bundle written by another build of 0.1.0 whose report.md's
    heading reads otherwise failed verify with exit 15, 'what the bundle publishes is not
    the report its records give', which reads like a forgery. It is exit 16 now, naming
    both builds, what differs and how to confirm it."""
    other = another_build(tmp_path, {"render/_markdown.py": (
        'f"## copeca-action: {', 'f"## copeca-action results: {')})
    path, pub = bundle_by(other, tmp_path)
    made = json.loads(read_all(path)["statement.json"])["predicate"]["environment"]
    assert made["harness_version"] == Build.this().version
    assert made["report_code"] not in (None, report_code())  # the digest covers render/
    assert main(["verify", str(path), "--pubkey", str(pub)]) == 16
    captured = capsys.readouterr()
    err = captured.err
    assert not captured.out and "Traceback" not in err
    assert err.startswith(f"FAILED (build): {path}: not confirmed: the signature is valid")
    assert "every member and record matches the manifest the statement binds" in err
    assert f"made by: copeca-action 0.1.0 (report code {made['report_code'][:12]}" in err
    assert f"this is: copeca-action 0.1.0 (report code {report_code()[:12]}" in err  # type: ignore[index]
    assert "(their report code differs)" in err
    assert ("report.md: differs from line 1: it says '## copeca-action results: demo', the "
            "records give '## copeca-action: demo'") in err
    assert "report.json" not in err and "signed summary" not in err  # only what differs
    assert "`pipx run copeca-action==0.1.0 verify" in err
    # analyze prints this build's report of the records, saying it differs from the bundle's
    assert main(["analyze", str(path), "--format", "md"]) == 0
    captured = capsys.readouterr()
    assert captured.out.startswith("## copeca-action: demo")
    assert "its report was not confirmed: made by copeca-action 0.1.0" in captured.err


def test_another_build_cannot_skip_the_recompute(
        tmp_path: Path, plan: RunPlan, demo, key: Ed25519PrivateKey,  # type: ignore[no-untyped-def]
        capsys: pytest.CaptureFixture[str]) -> None:
    """A key holder who signs a report its records do not give under another build id (or
    another version, or none) gets exit 16, never a pass; when the other build's report is
    its records' after all, it passes, naming both builds."""
    honest = contents_for(plan, demo[2])
    assert honest.report is not None
    lie = dataclasses.replace(honest.report, summary=honest.report.summary.model_copy(
        update={"verdict": "improvement"}))
    builds = {"code": {"report_code": "0" * 64}, "version": {"harness_version": "0.0.9"},
              "numpy": {"numpy_version": "1.0.0"}, "none": {"report_code": None}}
    for name, update in builds.items():
        environment = honest.environment.model_copy(update=update)
        path = tmp_path / f"{name}.copeca"
        write_bundle(dataclasses.replace(honest, environment=environment, report=lie), path,
                     key, Scrubber())
        with pytest.raises(VerificationError) as info:
            verify_bundle(path, key.public_key(), report=Recompute())
        assert info.value.kind == "build" and info.value.exit_code == 16, name
        assert ("the signed summary's verdict is \"improvement\", the records give "
                "\"inconclusive\"") in str(info.value), name
        fair = tmp_path / f"{name}-fair.copeca"
        write_bundle(dataclasses.replace(honest, environment=environment), fair, key,
                     Scrubber())
        checked = verify_bundle(fair, key.public_key(), report=Recompute()).report_checked
        assert checked.startswith("recomputed from the records: report.json, report.md, "
                                  "the signed summary match (made by copeca-action "), name
    assert "build not recorded" in checked
    # under this very build the same lie is a report that is not its records' (15)
    same = tmp_path / "same.copeca"
    write_bundle(dataclasses.replace(honest, report=lie), same, key, Scrubber())
    with pytest.raises(VerificationError) as info:
        verify_bundle(same, key.public_key(), report=Recompute())
    assert info.value.kind == "report" and info.value.exit_code == 15
    assert f"by the build that made it, {Build.this()}" in str(info.value)


def test_a_build_id_changed_after_signing_breaks_the_signature(
        build, key: Ed25519PrivateKey) -> None:  # type: ignore[no-untyped-def]
    good = build()
    members = read_all(good)

    def other_build(statement: bytes) -> bytes:
        data = json.loads(statement)
        data["predicate"]["environment"]["report_code"] = "0" * 64
        return pretty_json(data)

    # statement.json alone: not the statement the envelope signs
    path = rewrite(good, good.with_name("s.copeca"), {
        "statement.json": other_build(members["statement.json"])})
    with pytest.raises(VerificationError) as info:
        verify_bundle(path, key.public_key(), report=Recompute())
    assert info.value.kind == "tampered" and "statement.json differs" in str(info.value)
    # the envelope's payload too: its signature no longer holds
    envelope = json.loads(members["statement.dsse.json"])
    payload = other_build(base64.b64decode(envelope["payload"]))
    envelope["payload"] = base64.b64encode(payload).decode()
    path = rewrite(good, good.with_name("e.copeca"), {
        "statement.json": payload, "statement.dsse.json": pretty_json(envelope)})
    for pubkey in (key.public_key(), None):
        with pytest.raises(VerificationError) as info:
            verify_bundle(path, pubkey, report=Recompute())
        assert info.value.kind == "signature" and info.value.exit_code == 12, pubkey
    # and re-signed by another key: refused against the pinned one
    path = rewrite(good, good.with_name("f.copeca"), {
        "statement.json": payload, "statement.dsse.json": pretty_json(sign_envelope(
            payload, Ed25519PrivateKey.generate()).model_dump(mode="json", by_alias=True))})
    with pytest.raises(VerificationError) as info:
        verify_bundle(path, key.public_key(), report=Recompute())
    assert info.value.kind == "signature"


def test_the_report_code_covers_every_module_the_recompute_runs(tmp_path: Path, build) -> None:  # type: ignore[no-untyped-def]
    """A module the report is computed with but outside REPORT_CODE could change the report
    without changing the build id: verify would then call another build's wording a report
    its records do not give."""
    script = textwrap.dedent("""
        import sys, zipfile
        from pathlib import Path
        from copeca_action.bundle import verify_bundle
        from copeca_action.conclude import Recompute
        verify_bundle(Path(sys.argv[1]), report=Recompute())
        for name, module in sorted(sys.modules.items()):
            if name.startswith("copeca_action") and getattr(module, "__file__", None):
                print(module.__file__)
    """)
    out = subprocess.run([sys.executable, "-c", script, str(build())], capture_output=True,
                         text=True, check=True, cwd=tmp_path, timeout=120).stdout.split()
    loaded = {Path(f).resolve().relative_to(PACKAGE_DIR).as_posix() for f in out}
    assert "render/_markdown.py" in loaded and "report/_stats.py" in loaded
    outside = sorted(f for f in loaded if f.split("/")[0] not in REPORT_CODE)
    assert outside == []


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


def test_a_scenario_this_build_cannot_read_is_named_under_either_build(
        tmp_path: Path, plan: RunPlan, demo, key: Ed25519PrivateKey) -> None:  # type: ignore[no-untyped-def]
    """A scenario.yaml the recompute cannot load: a report failure under the build that made
    it (15); under another (a newer build's new scenario key, say), not confirmed (16)."""
    honest = contents_for(plan, demo[2])
    scenario_yaml = demo[2].read_bytes() + b"\nnew_setting: 1\n"
    for name, update, kind in (("same", {}, "report"),
                               ("other", {"report_code": "0" * 64}, "build")):
        path = tmp_path / f"{name}.copeca"
        write_bundle(dataclasses.replace(
            honest, scenario_yaml=scenario_yaml,
            environment=honest.environment.model_copy(update=update)), path, key, Scrubber())
        with pytest.raises(VerificationError) as info:
            verify_bundle(path, key.public_key(), report=Recompute())
        assert info.value.kind == kind, name
        assert "scenario.yaml: the report cannot be recomputed from the records with it" in \
            str(info.value) and "new_setting" in str(info.value), name
