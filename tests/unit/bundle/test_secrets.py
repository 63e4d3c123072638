"""Secrets planted everywhere a run leaves text never reach the bundle's bytes."""

from __future__ import annotations

import json
from pathlib import Path

from bundle_support import contents_for, record_for, run_files
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from zipedit import read_all

from copeca_action._util.scrub import Scrubber
from copeca_action.bundle import RenderedReport, Summary, verify_bundle, write_bundle
from copeca_action.plan import RunPlan

ENV = {"ANTHROPIC_API_KEY": "sk-ant-api03-" + "k3Y" * 30,
       "OPENAI_API_KEY": "plain-looking-openai-secret-value",
       "GITHUB_TOKEN": "ghs_" + "T0k3n" * 8,
       "MY_INTERNAL_TOKEN": "corp-internal-9f8e7d6c5b4a",
       "COPECA_SCRUB_VARS": "MY_INTERNAL_TOKEN"}
LOOSE = {"openai": "sk-proj-" + "Qw3rTy" * 10,
         "github_pat": "github_pat_11AAAAAAA0" + "q" * 20 + "_" + "Z9" * 25,
         "aws": "AKIAZZZZZZZZZZZZZZZZ",
         "pem": "-----BEGIN EC PRIVATE KEY-----\nMHcCAQEEIDk1bm9ub25zZW5zZWtleQ==\n"
                "-----END EC PRIVATE KEY-----"}
ALL = [v for k, v in ENV.items() if k != "COPECA_SCRUB_VARS"] + list(LOOSE.values())


def test_no_planted_secret_survives_into_the_bundle(
        tmp_path: Path, plan: RunPlan, demo, key: Ed25519PrivateKey) -> None:  # type: ignore[no-untyped-def]
    records = [record_for(plan, i) for i in range(len(plan.runs))]
    records[0] = records[0].model_copy(update={
        "outcome": "agent_error",
        "error": f"401 from api: invalid x-api-key {ENV['ANTHROPIC_API_KEY']}; "
                 f"git push with {ENV['GITHUB_TOKEN']} failed"})
    files = {r.run_id: run_files(r) for r in records}
    first = records[0].run_id
    files[first]["transcript.jsonl"] += json.dumps({
        "type": "tool_result", "content": f"$ cat .env\nOPENAI_API_KEY={ENV['OPENAI_API_KEY']}"
        f"\nAWS_ACCESS_KEY_ID={LOOSE['aws']}\nPAT={LOOSE['github_pat']}"}).encode() + b"\n"
    files[first]["env.txt"] = "\n".join(f"{k}={v}" for k, v in ENV.items()).encode()
    files[first]["eval.json"] = json.dumps({
        "stdout": f"test_deploy FAILED\n{LOOSE['pem']}\n", "stderr":
        f"token {ENV['MY_INTERNAL_TOKEN']} rejected"}).encode()
    contents = contents_for(plan, demo[2], records=records, files=files)
    contents = type(contents)(**{**contents.__dict__, "report": RenderedReport(
        Summary(verdict="inconclusive"),
        {"report.md": f"Failure: {LOOSE['openai']}\n".encode()})})
    out = tmp_path / "s.copeca"
    manifest = write_bundle(contents, out, key, Scrubber.from_env(ENV))
    raw = out.read_bytes()
    for secret in ALL:
        assert secret.encode() not in raw, secret
        for line in secret.splitlines():
            assert line.encode() not in raw or len(line) < 12 or "-----" in line, line
    counts = manifest.scrubbed
    assert counts["env:ANTHROPIC_API_KEY"] >= 2 and counts["env:MY_INTERNAL_TOKEN"] >= 2
    assert {"openai_key", "github_pat", "aws_access_key", "private_key"} <= set(counts)
    members = read_all(out)
    assert json.loads(members["manifest.json"])["scrubbed"] == counts
    record = json.loads(members[f"runs/{first}/record.json"])
    assert "[REDACTED:env:ANTHROPIC_API_KEY]" in record["error"]
    assert verify_bundle(out, key.public_key()).records[0].error == record["error"]
