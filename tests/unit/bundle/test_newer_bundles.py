"""A bundle a later copeca-action made (a later format, or a field this build does not know)
fails as `newer` (exit 17), saying who made it and what to run, before any model's schema
error; the same unknown field in a bundle this version claims to have made stays `corrupt`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from bundle_support import Build
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from zipedit import read_all, resign, rewrite_canonical

from copeca_action import __version__
from copeca_action.bundle import PREDICATE_TYPE, verify_bundle
from copeca_action.bundle._format import FORMAT, version_key
from copeca_action.bundle._layout import ENVELOPE, STATEMENT
from copeca_action.bundle._sign import sign_envelope
from copeca_action.bundle._write import pretty_json
from copeca_action.errors import VerificationError

LATER = "99.1.0"


def failure(path: Path, key: Ed25519PrivateKey) -> VerificationError:
    with pytest.raises(VerificationError) as info:
        verify_bundle(path, key.public_key())
    return info.value


def with_statement(src: Path, dst: Path, key: Ed25519PrivateKey,
                   edit: dict[str, object]) -> Path:
    """`src` with its statement's predicate type or environment changed (`edit`:
    `predicateType`, or an environment field), signed by `key`."""
    members = read_all(src)
    statement = json.loads(members[STATEMENT])
    for name, value in edit.items():
        if name == "predicateType":
            statement[name] = value
        else:
            statement["predicate"]["environment"][name] = value
    members[STATEMENT] = pretty_json(statement)
    members[ENVELOPE] = pretty_json(sign_envelope(members[STATEMENT], key).model_dump(
        mode="json", by_alias=True))
    return rewrite_canonical(src, dst, members)


def test_a_later_format_is_newer_and_names_both_builds(build: Build,
                                                       key: Ed25519PrivateKey) -> None:
    good = build()
    bad = with_statement(good, good.with_name("v2.copeca"), key, {
        "predicateType": "https://copeca-action.dev/bundle/v2", "harness_version": LATER})
    error = failure(bad, key)
    assert error.kind == "newer" and error.exit_code == 17
    message = str(error)
    assert f"made by copeca-action {LATER}" in message and "bundle format v2" in message
    assert f"this build (copeca-action {__version__}) understands bundle formats up to " \
           f"v{FORMAT}" in message
    assert f"pipx run copeca-action=={LATER} verify" in message
    assert "Extra inputs" not in message and "literal" not in message.lower()


def test_a_field_a_later_version_added_is_newer_naming_it(build: Build,
                                                          key: Ed25519PrivateKey) -> None:
    good = build()
    bad = with_statement(good, good.with_name("new.copeca"), key, {
        "harness_version": LATER, "gpu": "H100"})
    error = failure(bad, key)
    assert error.kind == "newer" and error.exit_code == 17
    message = str(error)
    assert f"made by copeca-action {LATER}" in message
    assert "predicate.environment.gpu" in message and "does not understand" in message
    assert "it says; not yet checked" in message  # read before the signature is checked


def test_a_record_field_a_later_version_added_is_newer_naming_line_and_field(
        build: Build, key: Ed25519PrivateKey) -> None:
    good = build()
    members = read_all(good)
    statement = json.loads(members[STATEMENT])
    statement["predicate"]["environment"]["harness_version"] = LATER
    lines = members["results.jsonl"].splitlines(keepends=True)
    lines[1] = lines[1].replace(b"{", b'{"energy_j":12.5,', 1)
    bad = resign(good, good.with_name("rec.copeca"), {
        STATEMENT: pretty_json(statement), "results.jsonl": b"".join(lines)}, key)
    error = failure(bad, key)
    assert error.kind == "newer", error
    assert "results.jsonl:2 holds energy_j" in str(error)
    assert "as its statement says" in str(error)  # a statement whose signature is valid


def test_an_unknown_field_in_a_bundle_of_this_version_stays_corrupt(
        build: Build, key: Ed25519PrivateKey) -> None:
    good = build()
    bad = with_statement(good, good.with_name("odd.copeca"), key, {"gpu": "H100"})
    error = failure(bad, key)
    assert error.kind == "corrupt" and error.exit_code == 10
    assert "predicate.environment.gpu" in str(error)


def test_a_later_format_without_a_readable_maker_still_says_upgrade(
        build: Build, key: Ed25519PrivateKey) -> None:
    good = build()
    bad = with_statement(good, good.with_name("v7.copeca"), key, {
        "predicateType": "https://copeca-action.dev/bundle/v7",
        "harness_version": "\x1b[2Jnot a version"})
    error = failure(bad, key)
    assert error.kind == "newer" and "bundle format v7" in str(error)
    assert "\x1b" not in str(error) and "upgrade copeca-action" in str(error)


def test_the_format_is_the_one_the_predicate_type_names() -> None:
    assert PREDICATE_TYPE.endswith(f"/v{FORMAT}")


@pytest.mark.parametrize(("older", "later"), [
    ("0.9.0", "0.10.0"), ("1.0.0rc1", "1.0.0"), ("1.0.0.dev1", "1.0.0a1"),
    ("1.0.0a2", "1.0.0b1"), ("1.0.0", "1.0.0.post1"), ("1.0", "1.0.1"),
    ("0.1.0", "0.2.0.dev3+g1a2b")])
def test_versions_order_as_pep_440_orders_them(older: str, later: str) -> None:
    low, high = version_key(older), version_key(later)
    assert low is not None and high is not None and low < high
    assert version_key("1.0") == version_key("1.0.0") == version_key("1.0.0+local")
    assert version_key("1.0; rm -rf /") is None and version_key("v1.0") is None


def test_verify_exits_17_and_says_newer_in_its_json(
        build: Build, key: Ed25519PrivateKey, capsys: pytest.CaptureFixture[str]) -> None:
    from copeca_action.cli import main

    good = build()
    bad = with_statement(good, good.with_name("v2.copeca"), key, {
        "predicateType": "https://copeca-action.dev/bundle/v2", "harness_version": LATER})
    assert main(["verify", str(bad), "--json"]) == 17
    captured = capsys.readouterr()
    outcome = json.loads(captured.out)
    assert (outcome["ok"], outcome["exit_code"], outcome["kind"]) == (False, 17, "newer")
    assert captured.err.startswith("FAILED (newer): ") and "upgrade to verify it" in captured.err
