"""Signed `.copeca` bundles: write, verify (offline, trusting nothing), merge shards."""

import importlib as _importlib
import typing as _typing

if _typing.TYPE_CHECKING:
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
    from copeca_action.bundle._verify import (
        VerifiedBundle,
        failure_json,
        simulation_line,
        summary_json,
        verify_bundle,
    )
    from copeca_action.bundle._write import (
        BundleContents,
        RenderedReport,
        Source,
        StreamSource,
        check_bundle_path,
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
    "check_bundle_path",
    "check_completeness",
    "collect_environment",
    "collect_run_files",
    "content_id",
    "contents_from_output",
    "failure_json",
    "generate_keypair",
    "keyid_of",
    "load_public_key",
    "load_signing_key",
    "merge_bundles",
    "pae",
    "simulation_line",
    "summary_json",
    "verify_bundle",
    "write_bundle",
]

_LAZY: dict[str, str] = {
    "BundleContents": "copeca_action.bundle._write",
    "Completeness": "copeca_action.bundle._complete",
    "Envelope": "copeca_action.bundle._model",
    "Environment": "copeca_action.bundle._model",
    "FileEntry": "copeca_action.bundle._model",
    "Limits": "copeca_action.bundle._zipread",
    "Manifest": "copeca_action.bundle._model",
    "PAYLOAD_TYPE": "copeca_action.bundle._model",
    "PREDICATE_TYPE": "copeca_action.bundle._model",
    "Predicate": "copeca_action.bundle._model",
    "RenderedReport": "copeca_action.bundle._write",
    "ReportFn": "copeca_action.bundle._merge",
    "ReusableBundle": "copeca_action.bundle._reuse",
    "SIGNING_KEY_ENV": "copeca_action.bundle._sign",
    "SafeZip": "copeca_action.bundle._zipread",
    "Source": "copeca_action.bundle._write",
    "Statement": "copeca_action.bundle._model",
    "StreamSource": "copeca_action.bundle._write",
    "Summary": "copeca_action.bundle._model",
    "VerifiedBundle": "copeca_action.bundle._verify",
    "check_bundle_path": "copeca_action.bundle._write",
    "check_completeness": "copeca_action.bundle._complete",
    "collect_environment": "copeca_action.bundle._write",
    "collect_run_files": "copeca_action.bundle._collect",
    "content_id": "copeca_action.bundle._complete",
    "contents_from_output": "copeca_action.bundle._collect",
    "failure_json": "copeca_action.bundle._verify",
    "generate_keypair": "copeca_action.bundle._sign",
    "keyid_of": "copeca_action.bundle._sign",
    "load_public_key": "copeca_action.bundle._sign",
    "load_signing_key": "copeca_action.bundle._sign",
    "merge_bundles": "copeca_action.bundle._merge",
    "pae": "copeca_action.bundle._sign",
    "simulation_line": "copeca_action.bundle._verify",
    "summary_json": "copeca_action.bundle._verify",
    "verify_bundle": "copeca_action.bundle._verify",
    "write_bundle": "copeca_action.bundle._write",
}
"""Each public name and its module, imported on first use (PEP 562): importing one
submodule of this package does not load the others."""


def __getattr__(name: str) -> _typing.Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(_importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))
