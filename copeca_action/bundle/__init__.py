"""Signed `.copeca` bundles: write, verify (offline, trusting nothing), merge shards."""

from copeca_action.bundle._collect import collect_run_files, contents_from_output
from copeca_action.bundle._complete import Completeness, check_completeness, content_id
from copeca_action.bundle._merge import ReportFn, merge_bundles
from copeca_action.bundle._model import (
    PAYLOAD_TYPE,
    PREDICATE_TYPE,
    Envelope,
    Environment,
    FileEntry,
    Manifest,
    Predicate,
    Statement,
    Summary,
)
from copeca_action.bundle._reuse import ReusableBundle
from copeca_action.bundle._sign import (
    SIGNING_KEY_ENV,
    generate_keypair,
    keyid_of,
    load_public_key,
    load_signing_key,
    pae,
)
from copeca_action.bundle._verify import VerifiedBundle, summary_json, verify_bundle
from copeca_action.bundle._write import (
    BundleContents,
    RenderedReport,
    Source,
    StreamSource,
    collect_environment,
    write_bundle,
)
from copeca_action.bundle._zipread import Limits, SafeZip

__all__ = [
    "PAYLOAD_TYPE",
    "PREDICATE_TYPE",
    "SIGNING_KEY_ENV",
    "BundleContents",
    "Completeness",
    "Envelope",
    "Environment",
    "FileEntry",
    "Limits",
    "Manifest",
    "Predicate",
    "RenderedReport",
    "ReportFn",
    "ReusableBundle",
    "SafeZip",
    "Source",
    "Statement",
    "StreamSource",
    "Summary",
    "VerifiedBundle",
    "check_completeness",
    "collect_environment",
    "collect_run_files",
    "content_id",
    "contents_from_output",
    "generate_keypair",
    "keyid_of",
    "load_public_key",
    "load_signing_key",
    "merge_bundles",
    "pae",
    "summary_json",
    "verify_bundle",
    "write_bundle",
]
