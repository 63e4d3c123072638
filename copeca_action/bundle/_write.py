"""Writing a `.copeca` bundle: scrubbed, hashed while written, deterministic, signed.

Determinism: members in path order (the three metadata files last), a fixed 1980-01-01
timestamp, mode 0644, Unix as creator, no compression. Stored members also keep the bytes
identical across zlib builds (zlib-ng and zlib deflate differently) and let verification run at
the speed of sha256; the GitHub artifact upload compresses the whole file anyway.
"""

from __future__ import annotations

import hashlib
import json
import os
import queue
import threading
import zipfile
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from copeca_action._util.hashing import canonical_json
from copeca_action._util.scrub import Scrubber
from copeca_action.bundle._canonical import canonical_info
from copeca_action.bundle._model import (
    ATTEMPTS_DIR,
    ENVELOPE,
    MANIFEST,
    OMITTED,
    PLAN,
    RECORD,
    REPORT_FILES,
    RESULTS,
    RUNS_DIR,
    SCENARIO,
    STATEMENT,
    Environment,
    FileEntry,
    Manifest,
    Predicate,
    Statement,
    Subject,
    Summary,
    check_member_path,
)
from copeca_action.bundle._sign import sign_envelope, signer_of
from copeca_action.bundle._zipread import CHUNK, Limits
from copeca_action.errors import BundleError, VerificationError
from copeca_action.plan import RunPlan
from copeca_action.records import RunRecord, latest_by_run_id


@dataclass(frozen=True)
class StreamSource:
    """Content produced on demand (e.g. a member of another bundle), with its size."""

    size: int
    chunks: Callable[[], Iterator[bytes]]


Source = bytes | Path | StreamSource


@dataclass(frozen=True)
class RenderedReport:
    """The report as the report stage rendered it: the files and the signed headline."""

    summary: Summary
    files: Mapping[str, bytes] = field(default_factory=dict)
    """Any of report.json, report.md, report.html."""


@dataclass(frozen=True)
class KeptAttempt:
    """An earlier attempt of a run (OUT/attempts/<run id>/<name>/): the superseded record of
    results.jsonl it is the evidence of, and its files (output, stderr; not record.json,
    written from the record)."""

    record: RunRecord
    files: Mapping[str, Source] = field(default_factory=dict)


@dataclass(frozen=True)
class BundleContents:
    """Everything a bundle is made of; the one argument of `write_bundle`."""

    scenario_yaml: bytes
    plan: RunPlan
    records: Sequence[RunRecord]
    """results.jsonl, in log order (superseded infra-error attempts included)."""
    environment: Environment
    thresholds: Mapping[str, Any]
    run_files: Mapping[str, Mapping[str, Source]] = field(default_factory=dict)
    """Run id → file name → content: transcript, patch, eval (record.json is added)."""
    report: RenderedReport | None = None
    attempts: Mapping[str, KeptAttempt] = field(default_factory=dict)
    """`<run id>/<name>` → an earlier attempt kept beside the run (attempts/<run id>/<name>/):
    each a superseded record of `records`."""


def collect_environment(records: Iterable[RunRecord] = (), image_digest: str | None = None,
                        env: Mapping[str, str] | None = None) -> Environment:
    """The environment as GitHub Actions describes it, plus CLI versions from the records
    and the build that writes the bundle (and computes its report)."""
    from copeca_action._util.build import Build  # loaded when a bundle is written

    build = Build.this()
    env = os.environ if env is None else env
    run = None
    if env.get("GITHUB_RUN_ID") and env.get("GITHUB_REPOSITORY"):
        server = env.get("GITHUB_SERVER_URL", "https://github.com")
        run = f"{server}/{env['GITHUB_REPOSITORY']}/actions/runs/{env['GITHUB_RUN_ID']}"
        if env.get("GITHUB_RUN_ATTEMPT"):
            run += f"/attempts/{env['GITHUB_RUN_ATTEMPT']}"
    versions = {r.runner: r.cli_version for r in records if r.cli_version}
    return Environment(harness_version=build.version, report_code=build.report_code,
                       numpy_version=build.numpy, cli_versions=dict(sorted(versions.items())),
                       image_digest=image_digest or env.get("COPECA_IMAGE_DIGEST") or None,
                       repo_commit=env.get("GITHUB_SHA") or None, workflow_run=run)


def _chunks(source: Source) -> Iterator[bytes]:
    if isinstance(source, bytes):
        yield source
    elif isinstance(source, StreamSource):
        yield from source.chunks()
    else:  # never through a symbolic link swapped in after the file was chosen
        with os.fdopen(os.open(source, os.O_RDONLY | os.O_NOFOLLOW), "rb") as handle:
            while chunk := handle.read(CHUNK):
                yield chunk


def _size(source: Source) -> int:
    if isinstance(source, bytes):
        return len(source)
    if isinstance(source, StreamSource):
        return source.size
    return source.stat().st_size


def _members(contents: BundleContents) -> dict[str, Source]:
    """Path → content of every member the manifest lists."""
    plan = contents.plan
    members: dict[str, Source] = {
        SCENARIO: contents.scenario_yaml,
        PLAN: plan.model_dump_json(indent=1).encode() + b"\n",
        RESULTS: b"".join(r.model_dump_json().encode() + b"\n" for r in contents.records),
    }
    if contents.report is not None:
        for name, data in contents.report.files.items():
            if name not in REPORT_FILES:
                raise BundleError(f"report file {name!r}: expected one of {REPORT_FILES}")
            members[name] = data
    final = latest_by_run_id(contents.records)
    for run_id, files in contents.run_files.items():
        if run_id not in final:
            raise BundleError(f"files given for run {run_id}, which has no record")
        for name, source in files.items():
            if name == RECORD:
                raise BundleError(f"run {run_id}: {RECORD} is written from the record itself")
            members[f"{RUNS_DIR}/{run_id}/{name}"] = source
    for run_id, record in final.items():
        members[f"{RUNS_DIR}/{run_id}/{RECORD}"] = record.model_dump_json(indent=1).encode()
    members.update(_attempt_members(contents, final))
    for path, source in members.items():
        why = check_member_path(path)
        if why:
            raise BundleError(f"bundle member {path!r}: {why}")
        if _size(source) > Limits().max_entry_size:
            raise BundleError(f"{path}: {_size(source)} bytes, more than the "
                              f"{Limits().max_entry_size} a verifier accepts per file")
    return members


def _attempt_members(contents: BundleContents, final: Mapping[str, RunRecord]
                     ) -> dict[str, Source]:
    """attempts/<run id>/<name>/: each kept attempt's record.json (from its record, which must
    be a superseded line of results.jsonl) and files. A file larger than a verifier accepts
    is left out, named with its size in the folder's omitted.json (the record and the other
    files still go in: the attempt's spend stays checkable)."""
    superseded = {id(r) for r in contents.records} - {id(r) for r in final.values()}
    logged = [r for r in contents.records if id(r) in superseded]
    members: dict[str, Source] = {}
    cap = Limits().max_entry_size
    for key, kept in sorted(contents.attempts.items()):
        run_id = key.split("/", 1)[0]
        if kept.record.run_id != run_id or not any(r == kept.record for r in logged):
            raise BundleError(f"{ATTEMPTS_DIR}/{key}: its record is no earlier attempt of run "
                              f"{run_id} in {RESULTS}")
        folder = f"{ATTEMPTS_DIR}/{key}"
        members[f"{folder}/{RECORD}"] = kept.record.model_dump_json(indent=1).encode()
        omitted = []
        for name, source in sorted(kept.files.items()):
            if name == RECORD:
                raise BundleError(f"{folder}: {RECORD} is written from the record itself")
            size = _size(source)
            if size > cap:
                omitted.append({"file": name, "size": size, "why": (
                    f"larger than the {cap} bytes a verifier accepts per file")})
                continue
            members[f"{folder}/{name}"] = source
        if omitted:  # (a merge carries a shard's omitted.json, whose files were left out)
            if f"{folder}/{OMITTED}" in members:
                raise BundleError(f"{folder}: {OMITTED} given, and files to leave out")
            members[f"{folder}/{OMITTED}"] = pretty_json(omitted)
    return members


def _info(path: str) -> zipfile.ZipInfo:
    return canonical_info(path)


def prefetch(chunks: Iterable[bytes], depth: int = 2) -> Iterator[bytes]:
    """Produce `chunks` in a helper thread: scrubbing (which holds the GIL) then overlaps
    hashing and writing (which release it). Errors are re-raised here, in order."""
    slots: queue.Queue[tuple[bytes | None, BaseException | None]] = queue.Queue(depth)
    stop = threading.Event()

    def produce() -> None:
        try:
            for chunk in chunks:
                if stop.is_set():
                    return
                slots.put((chunk, None))
            slots.put((None, None))
        except BaseException as exc:  # handed to the consumer
            slots.put((None, exc))

    worker = threading.Thread(target=produce, daemon=True)
    worker.start()
    try:
        while True:
            chunk, error = slots.get()
            if error is not None:
                raise error
            if chunk is None:
                return
            yield chunk
    finally:
        stop.set()
        while not slots.empty():  # a producer blocked on a full queue can then finish
            slots.get_nowait()
        worker.join()


def _scrubbed(source: Source, scrubber: Scrubber) -> Iterator[bytes]:
    stream = scrubber.scrub_stream(_chunks(source))
    return prefetch(stream) if _size(source) > CHUNK else stream


def _write_member(archive: zipfile.ZipFile, path: str, chunks: Iterable[bytes]) -> FileEntry:
    sha = hashlib.sha256()
    size = 0
    with archive.open(_info(path), "w") as out:
        for chunk in chunks:
            sha.update(chunk)
            size += len(chunk)
            out.write(chunk)
    return FileEntry(path=path, size=size, sha256=sha.hexdigest())


def pretty_json(value: Any) -> bytes:
    """Sorted, indented, newline-terminated: readable and still deterministic."""
    return json.dumps(value, indent=1, sort_keys=True, ensure_ascii=False).encode() + b"\n"


def check_bundle_path(out: Path) -> None:
    """`out` can be written as a bundle file: not a folder (the file is written beside it
    under a temporary name, then renamed over it, which no folder takes). Raises
    BundleError naming `out` (callers check before long work: a merge, a run)."""
    if out.is_dir():
        raise BundleError(f"{out}: is a folder, expected the bundle file to write (for "
                          f"example {out / 'results.copeca'})")


def write_bundle(contents: BundleContents, out: Path, key: Ed25519PrivateKey | None = None,
                 scrubber: Scrubber | None = None,
                 check: Callable[[Path], object] | None = None) -> Manifest:
    """Write `out` (atomically) and return its manifest. Every member passes the scrubber
    (default: the secrets of this process's environment) before it is hashed.

    `check`: called on the finished file before it takes `out`'s name (a verification);
    when it raises, nothing is written at `out` (what was there stays), and a
    VerificationError it raised names `out`, not the temporary file."""
    check_bundle_path(out)
    scrubber = scrubber if scrubber is not None else Scrubber.from_env()
    members = _members(contents)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(f".{out.name}.partial")
    try:
        with zipfile.ZipFile(tmp, "w", zipfile.ZIP_STORED, allowZip64=True) as archive:
            entries = [_write_member(archive, path, _scrubbed(source, scrubber))
                       for path, source in sorted(members.items())]
            manifest = Manifest(files=entries, scrubbed=dict(sorted(scrubber.counts.items())))
            manifest_bytes = pretty_json(manifest.model_dump(mode="json"))
            statement = _statement(contents, manifest, manifest_bytes, key)
            statement_bytes = pretty_json(statement.model_dump(mode="json", by_alias=True))
            envelope = sign_envelope(statement_bytes, key)
            for path, data in ((MANIFEST, manifest_bytes), (STATEMENT, statement_bytes),
                               (ENVELOPE, pretty_json(envelope.model_dump(
                                   mode="json", by_alias=True)))):
                archive.writestr(_info(path), data)
        if check is not None:
            try:
                check(tmp)
            except VerificationError as exc:
                raise VerificationError(exc.kind, f"{str(exc).replace(str(tmp), str(out))}\n"
                                        f"{out}: not written, as it does not verify") from exc
        os.replace(tmp, out)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return manifest


def _statement(contents: BundleContents, manifest: Manifest, manifest_bytes: bytes,
               key: Ed25519PrivateKey | None) -> Statement:
    plan = contents.plan
    scenario_sha = next(f.sha256 for f in manifest.files if f.path == SCENARIO)
    predicate = Predicate(
        scenario=plan.scenario, scenario_hash=plan.scenario_hash, scenario_sha256=scenario_sha,
        plan_digest=plan.plan_digest, compare=plan.compare,
        shard=str(plan.shard) if plan.shard else None, runs=len(plan.runs), seed=plan.seed,
        thresholds=json.loads(canonical_json(dict(contents.thresholds))),
        environment=contents.environment,
        summary=contents.report.summary if contents.report else None,
        signer=signer_of(key) if key is not None else None)
    return Statement(subject=[Subject(name=MANIFEST, digest={
        "sha256": hashlib.sha256(manifest_bytes).hexdigest()})], predicate=predicate)
