"""Numbers no run has, in a signed bundle: refused naming the line and field, or flagged
(`invalid`, a cost that is no price), never a figure of hundreds of digits or an overflow."""

from __future__ import annotations

import json
import re

import pytest
from bundle_support import Build, contents_for, record_for
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from zipedit import read_all, resign

from copeca_action.bundle import verify_bundle
from copeca_action.cli import main
from copeca_action.errors import VerificationError
from copeca_action.plan import RunPlan

HUGE = re.compile(r"[0-9]{40}")


def test_an_earlier_attempt_costing_1e308_is_no_price_not_a_309_digit_sum(
        build: Build, plan: RunPlan, demo, key: Ed25519PrivateKey,  # type: ignore[no-untyped-def]
        capsys: pytest.CaptureFixture[str]) -> None:
    finals = [record_for(plan, i) for i in range(len(plan.runs))]
    earlier = finals[0].model_copy(update={"outcome": "infra_error", "correct": False,
                                           "cost_usd": 1e308, "attempt": 1})
    finals[0] = finals[0].model_copy(update={"attempt": 2})
    path = build(contents=contents_for(plan, demo[2], records=[earlier, *finals]))
    result = verify_bundle(path, key.public_key())
    assert "1 above $1,000,000,000, no price, not in that sum" in result.attempts_checked
    assert "spent $0.0000 outside the statistics" in result.attempts_checked
    members = read_all(path)
    assert "1 of them with unknown cost" in members["report.md"].decode()
    assert main(["verify", str(path)]) == 0
    out = capsys.readouterr().out
    assert "no price" in out and not HUGE.search(out)
    assert not HUGE.search(members["report.md"].decode())


def test_a_final_run_costing_1e308_makes_the_verdict_invalid_and_prints_no_huge_figure(
        build: Build, plan: RunPlan, demo, capsys: pytest.CaptureFixture[str]  # type: ignore[no-untyped-def]
        ) -> None:
    finals = [record_for(plan, i) for i in range(len(plan.runs))]
    finals[1] = finals[1].model_copy(update={"cost_usd": 1e308})
    path = build(contents=contents_for(plan, demo[2], records=finals))
    assert main(["verify", str(path), "--json"]) == 0
    out = capsys.readouterr().out
    assert json.loads(out)["summary"]["verdict"] == "invalid" and not HUGE.search(out)
    assert main(["verify", str(path)]) == 0
    out = capsys.readouterr().out
    assert "verdict: invalid" in out and not HUGE.search(out)


@pytest.mark.parametrize(("field", "value"), [
    ("attempt", 10**30), ("repetition", -1), ("cost_usd", -0.5)])
def test_a_count_or_cost_out_of_range_is_refused_naming_line_and_field(
        build: Build, key: Ed25519PrivateKey, field: str, value: int | float) -> None:
    good = build()
    lines = read_all(good)["results.jsonl"].splitlines(keepends=True)
    record = json.loads(lines[2])
    record[field] = value
    lines[2] = json.dumps(record, separators=(",", ":")).encode() + b"\n"
    bad = resign(good, good.with_name("x.copeca"), {"results.jsonl": b"".join(lines)}, key)
    with pytest.raises(VerificationError) as info:
        verify_bundle(bad, key.public_key())
    assert info.value.kind == "corrupt" and f"results.jsonl:3: {field}:" in str(info.value)


@pytest.mark.parametrize("field", ["cost_usd", "vendor_cost_usd", "computed_cost_usd"])
def test_a_record_refuses_an_infinite_cost(field: str) -> None:
    """Every reader of a record (resume, conclude, a bundle) refuses it, as `analyze` does,
    not only the verifier's JSON check."""
    from pydantic import ValidationError

    from copeca_action.records import STORED, RunRecord

    line = json.loads(record_for_line())
    line[field] = float("inf")
    with pytest.raises(ValidationError, match="finite number"):
        RunRecord.model_validate_json(json.dumps(line), context=STORED)


def record_for_line() -> str:
    return json.dumps({"run_id": "r", "scenario": "s", "task_id": "t", "task_hash": "h",
                       "arm": "a", "model": "m", "runner": "x", "repetition": 0,
                       "outcome": "ok", "correct": True, "cost_usd": 0.1})


@pytest.mark.parametrize("count", [-5, 10**99])
def test_a_signed_redaction_count_out_of_range_is_refused_not_printed(
        build: Build, key: Ed25519PrivateKey, count: int) -> None:
    """verify prints the manifest's redaction counts and their sum: a signed count of 100
    digits was printed as one, a negative one lowered the sum."""
    import hashlib

    from zipedit import rewrite_canonical

    from copeca_action.bundle._layout import ENVELOPE, MANIFEST, STATEMENT
    from copeca_action.bundle._sign import sign_envelope
    from copeca_action.bundle._write import pretty_json

    good = build()
    members = read_all(good)
    manifest = json.loads(members[MANIFEST])
    manifest["scrubbed"] = {"env:GITHUB_TOKEN": count}
    members[MANIFEST] = pretty_json(manifest)
    statement = json.loads(members[STATEMENT])
    statement["subject"][0]["digest"]["sha256"] = hashlib.sha256(members[MANIFEST]).hexdigest()
    members[STATEMENT] = pretty_json(statement)
    members[ENVELOPE] = pretty_json(sign_envelope(members[STATEMENT], key).model_dump(
        mode="json", by_alias=True))
    bad = rewrite_canonical(good, good.with_name("s.copeca"), members)
    with pytest.raises(VerificationError) as info:
        verify_bundle(bad, key.public_key())
    assert info.value.kind == "corrupt"
    assert "manifest.json: scrubbed.env:GITHUB_TOKEN:" in str(info.value)
