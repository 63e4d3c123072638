"""A signed file that means two things to two readers (a key twice, NaN, a number a float
cannot hold) is refused by verify, naming the file, the line and the key: real bundles,
re-signed by a key holder who wrote them so."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from bundle_support import Build
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from zipedit import read_all, resign, rewrite_canonical

from copeca_action._util.strictjson import JsonProblem, check_json
from copeca_action.bundle import verify_bundle
from copeca_action.bundle._layout import ENVELOPE, MANIFEST, STATEMENT
from copeca_action.bundle._sign import sign_envelope
from copeca_action.bundle._write import pretty_json
from copeca_action.errors import VerificationError
from copeca_action.plan import RunPlan


def corrupt(path: Path, key: Ed25519PrivateKey) -> str:
    """The message of a `corrupt` failure, verified against the key that signed it."""
    with pytest.raises(VerificationError) as info:
        verify_bundle(path, key.public_key())
    assert info.value.kind == "corrupt" and info.value.exit_code == 10, info.value
    return str(info.value)


def signed_with(src: Path, dst: Path, key: Ed25519PrivateKey,
                statement: bytes) -> Path:
    """`src` with `statement` as its statement (signed by `key`), the rest unchanged."""
    members = read_all(src)
    members[STATEMENT] = statement
    members[ENVELOPE] = pretty_json(sign_envelope(statement, key).model_dump(
        mode="json", by_alias=True))
    return rewrite_canonical(src, dst, members)


def test_a_record_line_with_a_key_twice_is_refused_naming_line_and_key(
        build: Build, plan: RunPlan, key: Ed25519PrivateKey) -> None:
    good = build()
    lines = read_all(good)["results.jsonl"].splitlines(keepends=True)
    record = json.loads(lines[2])
    # Python and pydantic read the last cost, other readers the first
    lines[2] = lines[2].replace(b'"cost_usd":', b'"cost_usd":999.0,"cost_usd":', 1)
    assert json.loads(lines[2])["cost_usd"] == record["cost_usd"]  # what pydantic reads
    bad = resign(good, good.with_name("dup.copeca"), {"results.jsonl": b"".join(lines)}, key)
    message = corrupt(bad, key)
    assert 'results.jsonl:3: cost_usd: the key "cost_usd" appears twice' in message


def test_a_key_twice_in_a_pretty_printed_record_names_its_line(
        build: Build, plan: RunPlan, key: Ed25519PrivateKey) -> None:
    good = build()
    run = plan.runs[1].run_id
    name = f"runs/{run}/record.json"
    text = read_all(good)[name]
    # the same key spelt with an escape: one key to every reader, twice in the file
    changed = text.replace(b' "output":', b' "\\u006futput": 7,\n  "output":', 1)
    line = changed[:changed.index(b'"output":')].count(b"\n") + 1
    bad = resign(good, good.with_name("dup.copeca"), {name: changed}, key)
    assert f'{name}:{line}: tokens.output: the key "output" appears twice' in corrupt(bad, key)


def test_a_signed_statement_with_a_key_twice_is_refused(
        build: Build, key: Ed25519PrivateKey) -> None:
    good = build()
    statement = read_all(good)[STATEMENT]
    changed = statement.replace(b'\n  "seed":', b'\n  "seed": 999,\n  "seed":', 1)
    assert changed != statement
    line = changed[:changed.index(b'"seed": 999')].count(b"\n") + 2  # the second one's
    bad = signed_with(good, good.with_name("dup.copeca"), key, changed)
    message = corrupt(bad, key)
    assert f'{ENVELOPE} payload:{line}: predicate.seed: the key "seed" appears twice' in message


def test_a_manifest_with_a_key_twice_is_refused(build: Build, key: Ed25519PrivateKey) -> None:
    good = build()
    members = read_all(good)
    manifest = members[MANIFEST].replace(b'\n "files":', b'\n "scrubbed": {},\n "files":', 1)
    line = manifest[:manifest.rindex(b'"scrubbed":')].count(b"\n") + 1  # the second one
    statement = json.loads(members[STATEMENT])
    statement["subject"][0]["digest"]["sha256"] = hashlib.sha256(manifest).hexdigest()
    members[MANIFEST] = manifest
    tmp = rewrite_canonical(good, good.with_name("m.copeca"), members)
    bad = signed_with(tmp, good.with_name("dup.copeca"), key, pretty_json(statement))
    assert f'{MANIFEST}:{line}: scrubbed: the key "scrubbed" appears twice' in corrupt(bad, key)


def test_a_report_json_with_a_key_twice_is_refused(build: Build, key: Ed25519PrivateKey
                                                    ) -> None:
    good = build()
    report = read_all(good)["report.json"]
    changed = report.replace(b'\n  "verdict":', b'\n  "verdict": "improvement",\n  "verdict":',
                             1)
    assert changed != report
    bad = resign(good, good.with_name("dup.copeca"), {"report.json": changed}, key)
    assert 'report.json:' in corrupt(bad, key)


@pytest.mark.parametrize(("literal", "why"), [
    (b"NaN", "NaN is not a number JSON allows"),
    (b"Infinity", "Infinity is not a number JSON allows"),
    (b"1e999", "1e999 is beyond the range of a number"),
])
def test_a_cost_json_does_not_allow_is_refused(
        build: Build, key: Ed25519PrivateKey, literal: bytes, why: str) -> None:
    good = build()
    lines = read_all(good)["results.jsonl"].splitlines(keepends=True)
    start = lines[0].index(b'"cost_usd":') + len(b'"cost_usd":')
    end = lines[0].index(b",", start)
    lines[0] = lines[0][:start] + literal + lines[0][end:]
    bad = resign(good, good.with_name("x.copeca"), {"results.jsonl": b"".join(lines)}, key)
    assert f"results.jsonl:1: cost_usd: {why}" in corrupt(bad, key)


def test_check_json_accepts_what_the_writer_writes_and_names_what_it_refuses() -> None:
    check_json(b'{"a": [1, {"a": 2}], "b": {"a": 3}, "c": 1e308, "d": -0.5}')
    check_json(b'{"delta_ci": [0.1, Infinity]}', infinity=True)
    with pytest.raises(JsonProblem, match="NaN"):
        check_json(b'{"delta_ci": [NaN, Infinity]}', infinity=True)
    with pytest.raises(JsonProblem) as info:
        check_json(b'{"a": [1, {"b": 2, "b": 3}]}')
    assert (info.value.line, info.value.key) == (1, "a[1].b")
    with pytest.raises(JsonProblem, match="101 digits"):
        check_json(b'{"n": 1' + b"0" * 100 + b"}")
    check_json(b'{"n": 1' + b"0" * 99 + b"}")
    with pytest.raises(JsonProblem, match="5000 digits"):  # int() itself gives up at 4300
        check_json(b'{"n": 1' + b"0" * 4999 + b"}")
    with pytest.raises(JsonProblem, match="nested deeper than"):
        check_json(b"[" * 200_000 + b"]" * 200_000)
    with pytest.raises(JsonProblem, match="not UTF-8"):
        check_json(b'{"a": "\xff"}')
    with pytest.raises(JsonProblem, match=r"not JSON: .*column 9"):
        check_json(b'{"a": 1,}')


def test_records_are_split_at_line_feeds_only(build: Build, key: Ed25519PrivateKey) -> None:
    """Two records joined by a carriage return are one line to every reader that splits at
    "\\n" (analyze, a script): not JSON there, so not two records here either."""
    good = build()
    data = read_all(good)["results.jsonl"]
    first = data.index(b"\n")
    joined = data[:first] + b"\r" + data[first + 1:]
    bad = resign(good, good.with_name("cr.copeca"), {"results.jsonl": joined}, key)
    assert "results.jsonl:1: not JSON: Extra data" in corrupt(bad, key)


def test_the_statement_may_hold_an_unbounded_interval_side(
        build: Build, key: Ed25519PrivateKey) -> None:
    """The writer puts an interval's infinite upper side in the signed summary as
    `Infinity` (json.dumps): that statement is read, and only its numbers are judged (here
    they are not the report's, so `report`, not `corrupt`)."""
    good = build()
    statement = json.loads(read_all(good)[STATEMENT])
    statement["predicate"]["summary"]["delta_ci"] = [0.1, float("inf")]
    text = pretty_json(statement)
    assert b"Infinity" in text
    bad = signed_with(good, good.with_name("inf.copeca"), key, text)
    with pytest.raises(VerificationError) as info:
        verify_bundle(bad, key.public_key(), report=_recompute)
    assert info.value.kind == "report" and "delta_ci" in str(info.value)


def _recompute(statement, records, scenario_yaml):  # type: ignore[no-untyped-def]
    from copeca_action.conclude._report import recompute

    return recompute(statement, records, scenario_yaml)[1]
