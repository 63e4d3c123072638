"""An output folder becomes a bundle in one call; links planted in it are not followed."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from bundle_support import record_for
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from zipedit import read_all

from copeca_action._util.scrub import Scrubber
from copeca_action.bundle import contents_from_output, verify_bundle, write_bundle
from copeca_action.bundle._write import _chunks
from copeca_action.errors import BundleError
from copeca_action.plan import RunPlan
from copeca_action.records import write_records


def test_an_output_folder_is_bundled_without_following_links(
        tmp_path: Path, plan: RunPlan, demo, key: Ed25519PrivateKey) -> None:  # type: ignore[no-untyped-def]
    out = tmp_path / "out"
    records = [record_for(plan, i) for i in range(len(plan.runs))]
    write_records((out.mkdir() or out) / "results.jsonl", records)
    secret = tmp_path / "id_ed25519"
    secret.write_text("very private")
    for record in records:
        run = out / "runs" / record.run_id
        (run / "eval").mkdir(parents=True)
        (run / "transcript.jsonl").write_text(f'{{"run": "{record.run_id}"}}\n')
        (run / "eval" / "junit.xml").write_text("<testsuite/>")
        (run / "record.json").write_text("{}")  # replaced by the record itself
        os.symlink(secret, run / "planted")
    contents = contents_from_output(out, demo[2], plan, {"fail": 0.1})
    write_bundle(contents, tmp_path / "b.copeca", key, Scrubber())
    result = verify_bundle(tmp_path / "b.copeca", key.public_key(), demo[0], demo[1])
    members = read_all(tmp_path / "b.copeca")
    run = records[0].run_id
    assert f"runs/{run}/eval/junit.xml" in members
    assert not any(n.endswith("/planted") for n in members)
    assert b"very private" not in (tmp_path / "b.copeca").read_bytes()
    assert result.statement.predicate.environment.cli_versions == {
        r.runner: r.cli_version for r in records}


def test_a_file_swapped_for_a_link_is_refused_at_read_time(tmp_path: Path) -> None:
    target = tmp_path / "secret"
    target.write_text("x")
    os.symlink(target, tmp_path / "link")
    with pytest.raises(OSError):
        list(_chunks(tmp_path / "link"))


def test_a_run_dir_outside_the_output_is_refused(
        tmp_path: Path, plan: RunPlan, demo) -> None:  # type: ignore[no-untyped-def]
    records = [record_for(plan, 0, run_dir="../elsewhere")]
    write_records(tmp_path / "results.jsonl", records)
    with pytest.raises(BundleError, match="outside"):
        contents_from_output(tmp_path, demo[2], plan, {})


def test_the_agents_own_state_stays_out(tmp_path: Path, plan: RunPlan, demo) -> None:  # type: ignore[no-untyped-def]
    from copeca_action.bundle import collect_run_files

    out = tmp_path / "out"
    record = record_for(plan, 0)
    run = out / "runs" / record.run_id
    for name in ("config/.claude.json", "home/.bashrc", "tmp/x", "stdout.jsonl",
                 "grade-home/.cache/go-build/README",
                 "eval/eval.json"):
        (run / name).parent.mkdir(parents=True, exist_ok=True)
        (run / name).write_text("x")
    files = collect_run_files(out, [record])
    assert sorted(files[record.run_id]) == ["eval/eval.json", "stdout.jsonl"]
