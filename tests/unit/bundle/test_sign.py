from __future__ import annotations

import base64
import hashlib
import stat
from pathlib import Path

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from copeca_action.bundle import keyid_of, load_public_key, load_signing_key, pae
from copeca_action.bundle._sign import (
    generate_keypair,
    sign_envelope,
    verify_envelope,
)
from copeca_action.errors import ConfigError, VerificationError


def test_pae_matches_the_dsse_spec_vector() -> None:
    assert pae("http://example.com/HelloWorld", b"hello world") == \
        b"DSSEv1 29 http://example.com/HelloWorld 11 hello world"


def test_pae_counts_bytes_not_characters() -> None:
    assert pae("t", "é".encode()) == b"DSSEv1 1 t 2 " + "é".encode()


def test_keyid_is_the_sha256_of_the_raw_public_key() -> None:
    key = Ed25519PrivateKey.generate().public_key()
    raw = key.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    assert keyid_of(key) == hashlib.sha256(raw).hexdigest() and len(raw) == 32


def test_envelope_signs_the_pae_and_rejects_any_change() -> None:
    key = Ed25519PrivateKey.generate()
    envelope = sign_envelope(b'{"a":1}', key)
    assert verify_envelope(envelope, key.public_key()) == b'{"a":1}'
    sig = base64.b64decode(envelope.signatures[0].sig)
    key.public_key().verify(sig, pae("application/vnd.in-toto+json", b'{"a":1}'))
    other_type = envelope.model_copy(update={"payload_type": "text/plain"})
    with pytest.raises(VerificationError, match="payloadType") as info:
        verify_envelope(other_type, key.public_key())
    assert info.value.kind == "signature"
    changed = envelope.model_copy(update={"payload": base64.b64encode(b'{"a":2}').decode()})
    with pytest.raises(VerificationError, match="does not match"):
        verify_envelope(changed, key.public_key())
    with pytest.raises(VerificationError, match="no signature by key"):
        verify_envelope(envelope, Ed25519PrivateKey.generate().public_key())


def test_keygen_writes_a_private_key_only_its_owner_reads(tmp_path: Path) -> None:
    private, public, keyid = generate_keypair(tmp_path / "keys")
    assert stat.S_IMODE(private.stat().st_mode) == 0o600
    key = load_signing_key(private)
    assert key is not None and keyid_of(key.public_key()) == keyid
    assert keyid_of(load_public_key(public)) == keyid
    with pytest.raises(ConfigError, match="already exists"):
        generate_keypair(tmp_path / "keys")


def test_signing_key_comes_from_the_environment_when_no_file(tmp_path: Path) -> None:
    private, _, keyid = generate_keypair(tmp_path)
    key = load_signing_key(None, {"COPECA_SIGNING_KEY": private.read_text()})
    assert key is not None and keyid_of(key.public_key()) == keyid
    assert load_signing_key(None, {}) is None
    with pytest.raises(ConfigError, match="COPECA_SIGNING_KEY"):
        load_signing_key(None, {"COPECA_SIGNING_KEY": "not a key"})
