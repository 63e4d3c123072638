"""`merge:` shard bundles → one signed bundle, one report, one comment; nothing runs."""

from __future__ import annotations

import dataclasses
import sys
import zipfile
from pathlib import Path
from typing import Any

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from fake_github import FakeGitHub
from gh_support import parse_outputs, payload

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bundle"))
from bundle_support import contents_for

from copeca_action._util.scrub import Scrubber
from copeca_action.bundle import keyid_of, verify_bundle, write_bundle
from copeca_action.github import RetryPolicy, main, run_engine
from copeca_action.plan import Shard, build_plan, shard_plan
from copeca_action.report import Report
from copeca_action.scenario import load_corpus, load_scenario

KEY = ("Codertocat", "Hello-World", 2)


def _pem(key: Ed25519PrivateKey) -> str:
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                             serialization.NoEncryption()).decode()


def _shards(folder: Path, corpus_root: Path, key: Ed25519PrivateKey, n: int) -> int:
    path = corpus_root / "scenarios" / "demo.yaml"
    plan = build_plan(load_scenario(path), load_corpus(corpus_root).tasks)
    folder.mkdir(parents=True)
    for i in range(1, n + 1):
        write_bundle(contents_for(shard_plan(plan, Shard(index=i, count=n)), path),
                     folder / f"shard-{i}.copeca", key, Scrubber())
    return len(plan.runs)


def test_merge_verifies_shards_and_comments_once(fake_github: FakeGitHub, actions_env: Any,
                                                 corpus_root: Path) -> None:
    key = Ed25519PrivateKey.generate()
    env = actions_env("pull_request", payload("pull_request.opened"), fake_github.url)
    ws = Path(env["GITHUB_WORKSPACE"])
    runs = _shards(ws / "shards", corpus_root, key, 3)
    env.pop("INPUT_SCENARIO")
    env.update(INPUT_MERGE="shards/shard-1.copeca\nshards/shard-[23].copeca",
               INPUT_SIGNING_KEY=_pem(key), INPUT_FAIL_ON="never", INPUT_COMMENT_ID="merged")
    assert main(env, run_engine, policy=RetryPolicy(attempts=2, backoff_s=0.01),
                sleep=lambda _: None) == 0
    out = parse_outputs(Path(env["GITHUB_OUTPUT"]))
    merged = verify_bundle(Path(out["bundle-path"]), key.public_key())
    assert len(merged.records) == runs and merged.plan.shard is None
    report = Report.model_validate_json(Path(out["report-path"]).read_text())
    assert report.records == runs and out["verdict"] == report.verdict
    summary = merged.statement.predicate.summary
    assert summary is not None and summary.verdict == report.verdict
    comments = fake_github.comments[KEY]
    assert len(comments) == 1 and report.verdict in comments[0]["body"]
    assert keyid_of(key.public_key()) in comments[0]["body"]
    assert out["artifact-name"] == "copeca-merged"


def test_merge_names_the_pattern_that_matched_nothing(fake_github: FakeGitHub,
                                                      actions_env: Any) -> None:
    env = actions_env("pull_request", payload("pull_request.opened"), fake_github.url)
    env.pop("INPUT_SCENARIO")
    env["INPUT_MERGE"] = "nowhere/*.copeca"
    assert main(env, run_engine) == 2
    assert fake_github.calls == []


def _signed_shards(folder: Path, corpus_root: Path, key: Ed25519PrivateKey, n: int,
                   thresholds: dict[str, float]) -> list[Path]:
    """Shards whose signed statements carry `thresholds` (what the shards ran with)."""
    path = corpus_root / "scenarios" / "demo.yaml"
    plan = build_plan(load_scenario(path), load_corpus(corpus_root).tasks)
    folder.mkdir(parents=True)
    out = []
    for i in range(1, n + 1):
        contents = dataclasses.replace(
            contents_for(shard_plan(plan, Shard(index=i, count=n)), path), thresholds=thresholds)
        write_bundle(contents, folder / f"shard-{i}.copeca", key, Scrubber())
        out.append(folder / f"shard-{i}.copeca")
    return out


def test_cli_merge_and_action_merge_write_the_same_report(
        fake_github: FakeGitHub, actions_env: Any, corpus_root: Path, tmp_path: Path) -> None:
    """One function behind both: same shards, same report (thresholds the shards ran with)."""
    from copeca_action.cli import main as cli

    key = Ed25519PrivateKey.generate()
    env = actions_env("pull_request", payload("pull_request.opened"), fake_github.url)
    ws = Path(env["GITHUB_WORKSPACE"])
    ran_with = {"alert": 0.02, "fail": 0.07, "control_tolerance": 0.2}
    paths = _signed_shards(ws / "shards", corpus_root, key, 2, ran_with)
    pem = tmp_path / "key.pem"
    pem.write_text(_pem(key))
    cli_out = tmp_path / "cli.copeca"
    assert cli(["merge", *map(str, paths), "--out", str(cli_out), "--key", str(pem)]) == 0
    env.pop("INPUT_SCENARIO")
    env.update(INPUT_MERGE="shards/*.copeca", INPUT_SIGNING_KEY=_pem(key),
               INPUT_FAIL_ON="never")
    assert main(env, run_engine, policy=RetryPolicy(attempts=2, backoff_s=0.01),
                sleep=lambda _: None) == 0
    action_out = Path(parse_outputs(Path(env["GITHUB_OUTPUT"]))["bundle-path"])
    with zipfile.ZipFile(cli_out) as a, zipfile.ZipFile(action_out) as b:
        for name in ("report.json", "report.md", "report.html"):
            assert a.read(name) == b.read(name), name
        report = Report.model_validate_json(a.read("report.json"))
    assert report.thresholds.fail == 0.07 and report.thresholds.alert == 0.02
    assert report.thresholds.control_tolerance == 0.2


def test_action_merge_lays_its_threshold_inputs_over_the_shards(
        fake_github: FakeGitHub, actions_env: Any, corpus_root: Path) -> None:
    key = Ed25519PrivateKey.generate()
    env = actions_env("pull_request", payload("pull_request.opened"), fake_github.url)
    ws = Path(env["GITHUB_WORKSPACE"])
    _signed_shards(ws / "shards", corpus_root, key, 2, {"alert": 0.02, "fail": 0.07})
    env.pop("INPUT_SCENARIO")
    env.update(INPUT_MERGE="shards/*.copeca", INPUT_SIGNING_KEY=_pem(key),
               INPUT_FAIL_ON="never", INPUT_FAIL_THRESHOLD="0.3")
    assert main(env, run_engine, policy=RetryPolicy(attempts=2, backoff_s=0.01),
                sleep=lambda _: None) == 0
    out = parse_outputs(Path(env["GITHUB_OUTPUT"]))
    report = Report.model_validate_json(Path(out["report-path"]).read_text())
    assert report.thresholds.fail == 0.3 and report.thresholds.alert == 0.02
