"""Ed25519 keys and DSSE envelopes: the signature covers PAE(payloadType, payload), so the
type is part of what is signed and cannot be swapped beside it."""

from __future__ import annotations

import base64
import binascii
import hashlib
import os
from collections.abc import Mapping
from pathlib import Path

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import (
    Ed25519PrivateKey,
    Ed25519PublicKey,
)

from copeca_action._util.scrub import register_secret, register_secret_file
from copeca_action.bundle._model import PAYLOAD_TYPE, Envelope, EnvelopeSignature, Signer
from copeca_action.errors import ConfigError, VerificationError

SIGNING_KEY_ENV = "COPECA_SIGNING_KEY"
"""A PEM private key (the text, not a path): how CI passes the key from a secret."""
PRIVATE_NAME = "copeca-signing.key"
PUBLIC_NAME = "copeca-signing.pub"


def pae(payload_type: str, payload: bytes) -> bytes:
    """DSSE v1 pre-authentication encoding; lengths are byte counts in ASCII decimal."""
    kind = payload_type.encode()
    return b"DSSEv1 %d %b %d %b" % (len(kind), kind, len(payload), payload)


def raw_public(key: Ed25519PublicKey) -> bytes:
    return key.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)


def keyid_of(key: Ed25519PublicKey) -> str:
    return hashlib.sha256(raw_public(key)).hexdigest()


def signer_of(key: Ed25519PrivateKey) -> Signer:
    public = key.public_key()
    return Signer(keyid=keyid_of(public), public_key=base64.b64encode(raw_public(public)).decode())


def sign_envelope(payload: bytes, key: Ed25519PrivateKey | None) -> Envelope:
    """An envelope over `payload`; with no key, an envelope with no signatures."""
    signatures = []
    if key is not None:
        sig = key.sign(pae(PAYLOAD_TYPE, payload))
        signatures.append(EnvelopeSignature(keyid=keyid_of(key.public_key()),
                                            sig=base64.b64encode(sig).decode()))
    return Envelope(payload=base64.b64encode(payload).decode(), payloadType=PAYLOAD_TYPE,
                    signatures=signatures)


def decode_payload(envelope: Envelope) -> bytes:
    try:
        return base64.b64decode(envelope.payload, validate=True)
    except (binascii.Error, ValueError) as exc:
        raise VerificationError("corrupt", f"statement.dsse.json: payload is not base64 "
                                f"({exc})") from exc


def verify_envelope(envelope: Envelope, key: Ed25519PublicKey) -> bytes:
    """The payload, once a signature by `key` over its PAE checks out."""
    keyid = keyid_of(key)
    if envelope.payload_type != PAYLOAD_TYPE:
        raise VerificationError("signature", f"statement.dsse.json: payloadType "
                                f"{envelope.payload_type!r}, expected {PAYLOAD_TYPE!r}")
    mine = [s for s in envelope.signatures if s.keyid == keyid]
    if not mine:
        others = ", ".join(s.keyid[:16] for s in envelope.signatures) or "none"
        raise VerificationError("signature", f"statement.dsse.json: no signature by key "
                                f"{keyid[:16]}… (signed by: {others})")
    payload = decode_payload(envelope)
    for signature in mine:
        try:
            key.verify(base64.b64decode(signature.sig, validate=True),
                       pae(envelope.payload_type, payload))
            return payload
        except (InvalidSignature, binascii.Error, ValueError):
            continue
    raise VerificationError("signature", f"statement.dsse.json: the signature by key "
                            f"{keyid[:16]}… does not match the statement (altered after "
                            "signing, or a forged signature)")


def public_from_signer(signer: Signer) -> Ed25519PublicKey:
    try:
        raw = base64.b64decode(signer.public_key, validate=True)
        key = Ed25519PublicKey.from_public_bytes(raw)
    except (binascii.Error, ValueError) as exc:
        raise VerificationError("signature", "statement.json: signer.public_key is not a raw "
                                "Ed25519 key in base64") from exc
    if keyid_of(key) != signer.keyid:
        raise VerificationError("signature", "statement.json: signer.keyid is not the sha256 "
                                "of signer.public_key")
    return key


# ---------------------------------------------------------------- key files


def generate_keypair(out: Path) -> tuple[Path, Path, str]:
    """Write a new private key (0600) and its public key into `out`; never overwrite."""
    out.mkdir(parents=True, exist_ok=True)
    private_path, public_path = out / PRIVATE_NAME, out / PUBLIC_NAME
    for path in (private_path, public_path):
        if path.exists():
            raise ConfigError(f"--out {out}: {path.name} already exists; refusing to "
                              "overwrite a key (move it away or choose another folder)")
    key = Ed25519PrivateKey.generate()
    pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                            serialization.NoEncryption())
    fd = os.open(private_path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "wb") as handle:
        handle.write(pem)
    os.chmod(private_path, 0o600)
    public_path.write_bytes(key.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo))
    return private_path, public_path, keyid_of(key.public_key())


def parse_private_key(pem: bytes, where: str) -> Ed25519PrivateKey:
    """Parse a PEM private key and register its secret forms (the PEM text, its DER body,
    the raw 32 bytes) with the scrubber, so no copy of it, in any encoding, is published."""
    register_secret("signing_key", pem.strip())
    try:
        key = serialization.load_pem_private_key(pem, password=None)
    except (ValueError, TypeError) as exc:
        raise ConfigError(f"{where}: not an unencrypted PEM private key ({exc})") from exc
    if not isinstance(key, Ed25519PrivateKey):
        raise ConfigError(f"{where}: a {type(key).__name__}, expected an Ed25519 key "
                          "(make one with `copeca-action keygen`)")
    register_secret("signing_key", key.private_bytes(
        serialization.Encoding.DER, serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption()))
    register_secret("signing_key", key.private_bytes(
        serialization.Encoding.Raw, serialization.PrivateFormat.Raw,
        serialization.NoEncryption()))
    return key


def load_public_key(path: Path) -> Ed25519PublicKey:
    try:
        key = serialization.load_pem_public_key(path.read_bytes())
    except OSError as exc:
        raise ConfigError(f"--pubkey {path}: cannot read ({exc.strerror})") from exc
    except ValueError as exc:
        raise ConfigError(f"--pubkey {path}: not a PEM public key ({exc})") from exc
    if not isinstance(key, Ed25519PublicKey):
        raise ConfigError(f"--pubkey {path}: a {type(key).__name__}, expected Ed25519")
    return key


def load_signing_key(path: Path | None = None,
                     env: Mapping[str, str] | None = None) -> Ed25519PrivateKey | None:
    """The key from `path`, else from $COPECA_SIGNING_KEY, else None (an unsigned bundle)."""
    if path is not None:
        register_secret_file(path)
        try:
            return parse_private_key(path.read_bytes(), f"--key {path}")
        except OSError as exc:
            raise ConfigError(f"--key {path}: cannot read ({exc.strerror})") from exc
    own = env is None
    env = os.environ if env is None else env
    text = env.get(SIGNING_KEY_ENV, "").strip()
    if text:
        key = parse_private_key(text.encode(), f"${SIGNING_KEY_ENV}")
        if own:  # loaded: no child process inherits it from here on
            os.environ.pop(SIGNING_KEY_ENV, None)
            _KEEP[SIGNING_KEY_ENV] = key
        return key
    return _KEEP.get(SIGNING_KEY_ENV) if own else None


_KEEP: dict[str, Ed25519PrivateKey] = {}
"""A key taken out of the environment once loaded: asked again, this process still has it."""

