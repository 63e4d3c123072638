"""Verifying a `.copeca` bundle offline, trusting nothing in it until it has been checked.

Order: the archive's structure (corrupt), the signature over the statement (signature,
unsigned), the statement against statement.json and the manifest (tampered), every member
against the manifest (tampered), then the records against the plan (incomplete), then (with
a report hook) the published report against the one the records give (report; build when
the statement names another build than this one as its maker).
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from pydantic import BaseModel, ValidationError

from copeca_action._util.build import Build
from copeca_action._util.hashing import sha256_bytes, sha256_json
from copeca_action._util.strictjson import JsonProblem, check_json
from copeca_action._util.text import shown
from copeca_action.bundle._canonical import check_canonical
from copeca_action.bundle._complete import Completeness, check_completeness, describe
from copeca_action.bundle._format import Maker, check_format, maker_of, unknown_field
from copeca_action.bundle._model import (
    ATTEMPTS_DIR,
    ENVELOPE,
    MANIFEST,
    METADATA,
    PLAN,
    RECORD,
    REPORT_FILES,
    RESULTS,
    RUNS_DIR,
    SCENARIO,
    STATEMENT,
    Envelope,
    Manifest,
    Predicate,
    Statement,
    Summary,
)
from copeca_action.bundle._prehash import MemberHashes
from copeca_action.bundle._sign import (
    decode_payload,
    keyid_of,
    public_from_signer,
    verify_envelope,
)
from copeca_action.bundle._zipread import Limits, SafeZip
from copeca_action.errors import CopecaError, VerificationError
from copeca_action.plan import RunPlan
from copeca_action.records import (
    SIMULATED,
    STORED,
    DesignKey,
    RunRecord,
    design_key,
    design_of,
    latest_by_run_id,
)
from copeca_action.records._kinds import MAX_RUN_COST_USD

if TYPE_CHECKING:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

    from copeca_action.bundle._write import RenderedReport
    from copeca_action.scenario import Scenario, Task

M = TypeVar("M", bound=BaseModel)
REPORT_JSON = REPORT_FILES[0]
SHOW = 20

ReportCheck = Callable[[Statement, list[RunRecord], bytes], "RenderedReport"]
"""The report a bundle's records give (`conclude.Recompute`): its signed statement, its
records and its scenario.yaml in; the report files and the signed summary the writer makes
of them out (the files it can determine: report.html draws the history's trend too)."""


@dataclass
class VerifiedBundle:
    """A bundle that passed: what it holds and what the check could and could not prove."""

    path: Path
    manifest: Manifest
    statement: Statement
    plan: RunPlan
    records: list[RunRecord]
    completeness: Completeness
    keyid: str | None
    """The signing key's id; None for an unsigned bundle."""
    pinned: bool
    """True when the signature was checked against a key the caller supplied; otherwise it
    only shows the bundle is unchanged since *someone* signed it."""
    scenario_checked: bool
    bytes_hashed: int
    report_checked: str = ""
    """How the published report was checked against its records: the files and the
    summary compared (and the two builds when another made it), or, with
    `other_build_fails` false, `not confirmed: ...` (another build's report that this
    build recomputes otherwise); empty when no report hook was given or the bundle
    carries no report."""
    attempts: dict[str, RunRecord] | None = None
    """`<run id>/<name>` → the record of each earlier attempt in attempts/ (each a
    superseded line of results.jsonl)."""
    attempts_checked: str = ""
    """How the spend of the attempts outside the statistics is backed by attempts/; empty
    when results.jsonl holds no earlier attempt that spent."""
    design_checked: str = ""
    """How the records' statistical design (`RunRecord.design`) was checked against the
    bundle's scenario: the same, or records run under other thresholds than the ones the
    statement signs (a merge's or an action input's, which decided the verdict); empty when
    no record names a design (older records)."""

    @property
    def signed(self) -> bool:
        return self.keyid is not None

    @property
    def simulated(self) -> bool:
        """Some record was answered by the scripted model (a demo or a dry run)."""
        return any(r.endpoint in SIMULATED for r in self.records)


def _parse(model: type[M], data: bytes, name: str, line: int | None = None,
           infinity: bool = False, maker: Maker | None = None) -> M:
    """`data` (the file `name`, or its line `line`) as `model`: first checked to mean one
    thing to every reader (`check_json`), then validated; either failure is `corrupt`,
    naming the file, the line and the key. A model's refusal in a bundle a later version
    of copeca-action made (`maker`) is `newer`: a field this build does not know."""
    _strict_json(data, name, line, infinity)
    if line is not None:
        name = f"{name}:{line}"
    try:
        return model.model_validate_json(data, context=STORED)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(shown(p, 80) for p in first["loc"])  # a key the bundle chose
        if maker is not None and maker.later:
            raise unknown_field(maker, name, f"{where} ({shown(first['msg'])})",
                                checked=model is not Statement) from exc
        raise VerificationError("corrupt", f"{name}: {where}: {shown(first['msg'])}") from exc


def _strict_json(data: bytes, name: str, line: int | None = None,
                infinity: bool = False) -> None:
    """`corrupt` unless `data` is JSON with no key twice, no NaN, no number out of range
    (`check_json`; `infinity`: the literals ±Infinity are allowed), naming the file, its
    line (`line`: the line of `name` that `data` is) and the key."""
    try:
        check_json(data, infinity)
    except JsonProblem as problem:
        at = problem.line if line is None else line + problem.line - 1
        where = f"{shown(problem.key, 120)}: " if problem.key else ""
        raise VerificationError("corrupt", f"{name}:{at}: {where}{problem.message}") from None


def _run_of(path: str) -> str:
    parts = path.split("/")
    return f" (run {parts[1]})" if parts[0] == RUNS_DIR and len(parts) > 2 else ""


def _listing(items: list[str]) -> str:
    """One item a line, each on its line whatever the bundle's text in it holds."""
    more = f"\n  ... and {len(items) - SHOW} more" if len(items) > SHOW else ""
    return "\n  " + "\n  ".join(shown(item, None) for item in items[:SHOW]) + more


def _check_plan(plan: RunPlan) -> None:
    """The plan holds each run once, and a whole plan's run ids are those its digest names
    (a shard's are checked by merge, against every shard's)."""
    seen: set[str] = set()
    twice = []
    for run in plan.runs:
        if run.run_id in seen:
            twice.append(f"{run.run_id} ({describe(run)})")
        seen.add(run.run_id)
    if twice:
        raise VerificationError("incomplete", f"{PLAN} lists {len(twice)} run(s) twice:"
                                f"{_listing(twice)}")
    if plan.shard is None and sha256_json(sorted(seen)) != plan.plan_digest:
        raise VerificationError("incomplete", f"{PLAN} holds {len(seen)} runs whose ids are "
                                f"not those of its signed plan digest {plan.plan_digest[:12]}: "
                                "runs were left out of (or added to) the plan after it was "
                                "made")


def _check_signature(envelope: Envelope, payload_statement: Statement,
                     pubkey: Ed25519PublicKey | None) -> str | None:
    """The keyid that signed, None when unsigned (allowed only without `pubkey`)."""
    signer = payload_statement.predicate.signer
    if not envelope.signatures:
        if pubkey is not None:
            raise VerificationError("unsigned", "the bundle is unsigned but --pubkey "
                                    f"{keyid_of(pubkey)[:16]}… requires a signature")
        if signer is not None:
            raise VerificationError("signature", f"the statement names signer "
                                    f"{signer.keyid[:16]}… but the envelope carries no "
                                    "signature (stripped?)")
        return None
    key = pubkey if pubkey is not None else (
        public_from_signer(signer) if signer is not None else None)
    if key is None:
        raise VerificationError("signature", "the envelope is signed but the statement names "
                                "no signer; pass --pubkey to check it")
    verify_envelope(envelope, key)
    if signer is None or signer.keyid != keyid_of(key):
        raise VerificationError("signature", "the statement's signer does not match the "
                                "key that signed it")
    return keyid_of(key)


def _signature(keyid: str | None, pubkey: Ed25519PublicKey | None) -> str:
    """The signature as checked, for a message."""
    if keyid is None:
        return "the bundle is unsigned (nobody vouches for it)"
    return f"the signature is valid (key {keyid[:16]}…, " + (
        "checked against --pubkey)" if pubkey is not None else "the key the bundle names: "
        "pass --pubkey to pin it)")


def _check_members(archive: SafeZip, manifest: Manifest, hashes: MemberHashes) -> int:
    listed = {f.path: f for f in manifest.files}
    present = set(archive.members) - set(METADATA)
    problems = [f"added, not in the manifest: {p}{_run_of(p)}"
                for p in sorted(present - set(listed))]
    problems += [f"removed, listed in the manifest: {p}{_run_of(p)}"
                 for p in sorted(set(listed) - present)]
    hashed = 0
    order = sorted(present & set(listed), key=lambda p: archive.members[p].header_offset)
    for path in order:
        size, digest = hashes.digest(path)
        hashed += size
        entry = listed[path]
        if (size, digest) != (entry.size, entry.sha256):
            problems.append(f"changed: {path}{_run_of(path)}: sha256 {digest[:16]}…, the "
                            f"manifest says {entry.sha256[:16]}…")
    if problems:
        raise VerificationError("tampered", f"{len(problems)} file(s) differ from the signed "
                                f"manifest:{_listing(problems)}")
    archive.add_crcs(hashes.crcs())
    return hashed


def _read_attempts(archive: SafeZip, maker: Maker | None = None) -> dict[str, RunRecord]:
    """attempts/<run id>/<name>/record.json of each earlier attempt's folder."""
    folders = set()
    for path in archive.members:
        if not path.startswith(f"{ATTEMPTS_DIR}/"):
            continue
        parts = path.split("/")
        if len(parts) < 4:
            raise VerificationError("corrupt", f"{path}: expected {ATTEMPTS_DIR}/<run id>/"
                                    "<attempt>/<file>")
        folders.add(f"{parts[1]}/{parts[2]}")
    attempts = {}
    for key in sorted(folders):
        path = f"{ATTEMPTS_DIR}/{key}/{RECORD}"
        if path not in archive.members:
            raise VerificationError("incomplete", f"{ATTEMPTS_DIR}/{key}/ has no {RECORD}")
        attempts[key] = _parse(RunRecord, archive.read(path), path, maker=maker)
    return attempts


def _spent(record: RunRecord) -> bool:
    """As the report's spend account counts an attempt outside the statistics."""
    return record.cost_usd is None or record.cost_usd > 0


def check_attempts(log: list[RunRecord], attempts: Mapping[str, RunRecord]) -> str:
    """Each attempts/<run id>/<name>/record.json is an earlier attempt of that run in
    results.jsonl (a superseded line, field for field), once: else `incomplete`, naming the
    folder. Returns how the spend of the earlier attempts that spent is backed by them (a
    folder lost before it was kept, by an older copeca-action, is named, not refused)."""
    final = {id(r) for r in latest_by_run_id(log).values()}
    earlier = [r for r in log if id(r) not in final]
    problems, backed = [], set()
    for key, record in sorted(attempts.items()):
        run_id = key.split("/", 1)[0]
        twins = [i for i, r in enumerate(earlier) if r == record]
        free = next((i for i in twins if i not in backed), None)  # a line twice: two folders
        if record.run_id != run_id or not twins:
            problems.append(f"{ATTEMPTS_DIR}/{key}/{RECORD} is no earlier attempt of run "
                            f"{run_id} in {RESULTS} (not a superseded line of it, field for "
                            "field)")
        elif free is None:
            problems.append(f"{ATTEMPTS_DIR}/{key}: attempt {record.attempt} of run {run_id} "
                            "is in another folder of attempts/ too")
        else:
            backed.add(free)
    if problems:
        raise VerificationError("incomplete", f"the earlier attempts in {ATTEMPTS_DIR}/ do not "
                                f"match {RESULTS}:{_listing(problems)}")
    spent = [i for i, r in enumerate(earlier) if _spent(r)]
    if not spent:
        return ""
    # as the report's account: a cost above MAX_RUN_COST_USD is no price, so unknown
    costs = [earlier[i].cost_usd for i in spent]
    usd = sum(c for c in costs if c is not None and c <= MAX_RUN_COST_USD)
    missing = [f"{earlier[i].run_id} attempt {earlier[i].attempt}" for i in spent
               if i not in backed]
    none = costs.count(None)
    over = sum(c is not None and not c <= MAX_RUN_COST_USD for c in costs)
    unknown = ([f"{none} of unknown cost"] if none else []) + (
        [f"{over} above ${MAX_RUN_COST_USD:,.0f}, no price"] if over else [])
    text = (f"{len(spent)} earlier attempt(s) spent ${usd:.4f} outside the statistics"
            + (f" ({', '.join(unknown)}, not in that sum)" if unknown else "")
            + f"; {len(spent) - len(missing)} of them with their folder in {ATTEMPTS_DIR}/ "
            "(record, output)")
    if missing:
        text += (f"; {len(missing)} without one (an older copeca-action cleared a retried "
                 f"attempt's folder, or it was removed by hand): {', '.join(missing[:SHOW])}")
    return text


def _read_records(archive: SafeZip, maker: Maker | None = None
                  ) -> tuple[list[RunRecord], dict[str, RunRecord]]:
    log = []
    # lines end at "\n" only, as every other reader of results.jsonl splits them (a "\r"
    # between two records made two lines here and one invalid line there)
    for number, line in enumerate(archive.read(RESULTS).split(b"\n"), 1):
        if line.strip():
            log.append(_parse(RunRecord, line, RESULTS, number, maker=maker))
    dirs: dict[str, RunRecord] = {}
    run_names = {p.split("/")[1] for p in archive.members
                 if p.startswith(f"{RUNS_DIR}/") and p.count("/") >= 2}
    for name in sorted(run_names):
        path = f"{RUNS_DIR}/{name}/{RECORD}"
        if path not in archive.members:
            raise VerificationError("incomplete", f"{RUNS_DIR}/{name}/ has no {RECORD}")
        dirs[name] = _parse(RunRecord, archive.read(path), path, maker=maker)
    return log, dirs


def expected_plan(bundled: RunPlan, scenario: Scenario, tasks: Mapping[str, Task]) -> RunPlan:
    """The plan the scenario and corpus give today, sliced like the bundle's shard. Under
    adaptive sampling the engine plans only the rounds it ran, so the repetition count is the
    bundle's own, provided it is one of the scenario's looks (else the scenario's maximum)."""
    from copeca_action.plan import build_plan, shard_plan
    from copeca_action.report import schedule

    reps = None
    adaptive = scenario.adaptive
    if adaptive is not None and adaptive.enabled and bundled.runs:
        done = max(r.repetition for r in bundled.runs) + 1
        reps = done if done in schedule(adaptive) else adaptive.max_repetitions
    plan = build_plan(scenario, tasks, compare=bundled.compare, repetitions=reps)
    return shard_plan(plan, bundled.shard) if bundled.shard else plan


def verify_bundle(path: Path, pubkey: Ed25519PublicKey | None = None,
                  scenario: Scenario | None = None, tasks: Mapping[str, Task] | None = None,
                  limits: Limits | None = None, hashes: MemberHashes | None = None,
                  report: ReportCheck | None = None, other_build_fails: bool = True
                  ) -> VerifiedBundle:
    """Check everything the bundle claims; raise VerificationError(kind) at the first class
    of failure, naming every file or run in it. `hashes`: the members' hashing, already
    started on `path` with the same limits (else it starts here). `report`: recompute the
    report from the records (while the members are hashed) and require report.json,
    report.md and the signed summary to be it: `report` (exit 15) when the statement signs
    this very build as the one that made it, else `build` (exit 16: another build's report,
    not confirmed); with `other_build_fails` false, that is a note in `report_checked`
    (`analyze`, which prints this build's report)."""
    hashes = hashes or MemberHashes(path, limits)
    try:
        return _verify(path, pubkey, scenario, tasks, limits, hashes, report,
                       other_build_fails)
    except VerificationError as exc:
        raise _naming(path, exc) from exc
    finally:
        hashes.cancel()  # nothing left to hash once the verdict is known


def _naming(path: Path, exc: VerificationError) -> VerificationError:
    """The failure with the bundle's path first (a merge checks several), once."""
    message = str(exc)
    if message.startswith(f"{path}:"):
        return exc
    return VerificationError(exc.kind, f"{path}: {message}")


_T = TypeVar("_T")


def _attempt(fn: Callable[[], _T]) -> _T | VerificationError:
    """`fn()`, or the VerificationError it raised, to be raised later (`_result`)."""
    try:
        return fn()
    except VerificationError as exc:
        return exc


def _result(value: _T | VerificationError) -> _T:
    if isinstance(value, VerificationError):
        raise value
    return value


def _verify(path: Path, pubkey: Ed25519PublicKey | None, scenario: Scenario | None,
            tasks: Mapping[str, Task] | None, limits: Limits | None,
            hashes: MemberHashes, report: ReportCheck | None, other_build_fails: bool
            ) -> VerifiedBundle:
    with SafeZip(path, limits) as archive:
        missing = [m for m in (*METADATA, PLAN, RESULTS) if m not in archive.members]
        if missing:
            raise VerificationError("corrupt", f"{path}: not a complete .copeca bundle: "
                                    f"{', '.join(missing)} absent")
        envelope = _parse(Envelope, archive.read(ENVELOPE), ENVELOPE)
        payload = decode_payload(envelope)
        # the signed summary's interval may have an unbounded side, written `Infinity`
        _strict_json(payload, f"{ENVELOPE} payload", infinity=True)
        # which format, made by which version: a later one's is named before any model
        # refuses a field it added
        maker = maker_of(payload)
        check_format(maker)
        signed_statement = _parse(Statement, payload, f"{ENVELOPE} payload", infinity=True,
                                  maker=maker)
        keyid = _check_signature(envelope, signed_statement, pubkey)
        if archive.read(STATEMENT) != payload:
            raise VerificationError("tampered", f"{STATEMENT} differs from the statement "
                                    f"inside {ENVELOPE}")
        manifest_bytes = archive.read(MANIFEST)
        digests = [s.digest.get("sha256") for s in signed_statement.subject
                   if s.name == MANIFEST]
        if digests != [sha256_bytes(manifest_bytes)]:
            raise VerificationError("tampered", f"{MANIFEST} is not the manifest the "
                                    "statement binds (its sha256 is not the subject's)")
        manifest = _parse(Manifest, manifest_bytes, MANIFEST, maker=maker)
        scenario_file = [f.sha256 for f in manifest.files if f.path == SCENARIO]
        if scenario_file != [signed_statement.predicate.scenario_sha256]:
            raise VerificationError("tampered", f"{SCENARIO} is not the scenario file the "
                                    "statement names (its sha256 is not scenario_sha256)")
        # While the members are still being hashed (on their thread), parse the plan and
        # the records; what that finds is reported only once the members are known to be
        # the signed ones, so the failure named is the same as in a sequential check.
        early_plan = _attempt(lambda: _parse(RunPlan, archive.read(PLAN), PLAN, maker=maker))
        early_records = _attempt(lambda: _read_records(archive, maker))
        early_attempts = _attempt(lambda: _read_attempts(archive, maker))
        # report.json is compared as bytes, never parsed here; a reader of it (a script,
        # a dashboard) may parse it, so it too must mean one thing to every reader
        early_report_json = _attempt(lambda: _strict_json(archive.read(REPORT_JSON),
                                                         REPORT_JSON)
                                     if REPORT_JSON in archive.members else None)
        # and recompute the report from those records, compared once all else passed
        early_report = _attempt(lambda: _published_report(
            archive, signed_statement, early_records, report, _signature(keyid, pubkey),
            other_build_fails))
        hashed = _check_members(archive, manifest, hashes)
        check_canonical(archive)
        # read only when a record names a design (older bundles' records name none)
        scenario_yaml = (archive.read(SCENARIO) if SCENARIO in archive.members and any(
            r.design is not None for r in _records_of(early_records)) else None)
        plan = _result(early_plan)
        predicate = signed_statement.predicate
        if (plan.plan_digest, plan.scenario_hash, len(plan.runs),
                str(plan.shard) if plan.shard else None, plan.seed, plan.compare) != (
                predicate.plan_digest, predicate.scenario_hash, predicate.runs,
                predicate.shard, predicate.seed, predicate.compare):
            raise VerificationError("tampered", f"{PLAN} is not the plan the statement "
                                    "names (digest, scenario hash, run count, shard, seed or "
                                    "compare mode differ)")
        _check_plan(plan)
        log, dirs = _result(early_records)
        attempts = _result(early_attempts)
        _result(early_report_json)
    completeness = check_completeness(plan.runs, log, dirs)
    if not completeness.ok:
        raise VerificationError("incomplete", f"{path}: the records do not match the "
                                f"bundle's plan ({len(plan.runs)} runs):\n"
                                f"{completeness.message()}")
    attempts_checked = check_attempts(log, attempts)
    design_checked = check_design(log, signed_statement.predicate, scenario_yaml)
    if scenario is not None:
        _check_against_scenario(path, plan, signed_statement.predicate, scenario, tasks or {},
                                log, dirs)
    return VerifiedBundle(path=path, manifest=manifest, statement=signed_statement, plan=plan,
                          records=log, completeness=completeness, keyid=keyid,
                          pinned=pubkey is not None and keyid is not None,
                          scenario_checked=scenario is not None, bytes_hashed=hashed,
                          report_checked=_result(early_report), attempts=attempts,
                          attempts_checked=attempts_checked, design_checked=design_checked)


def _published_report(archive: SafeZip, statement: Statement,
                      records: tuple[list[RunRecord], dict[str, RunRecord]] | VerificationError,
                      report: ReportCheck | None, signature: str, other_build_fails: bool
                      ) -> str:
    """Recompute the report from the records and compare it with the published one: the
    report files the hook determines, and the signed summary. Runs before the members'
    hashes are known (beside the hashing); its failure is raised after the other checks,
    so a changed member is named as that first. Returns how it was checked.

    A difference is `report` when the signed statement names this very build, else `build`
    (another build may word or compute the report otherwise: not confirmed, not proven
    forged either); with `other_build_fails` false, the latter is returned as a note."""
    predicate = statement.predicate
    present = [name for name in REPORT_FILES if name in archive.members]
    if report is None or isinstance(records, VerificationError) or (
            predicate.summary is None and not present):
        return ""
    if SCENARIO not in archive.members:
        raise VerificationError("report", f"no {SCENARIO}: the report cannot be recomputed "
                                "from the records")
    checked: list[str] = []
    unreadable = ""
    try:
        expected = report(statement, records[0], archive.read(SCENARIO))
    except (CopecaError, ValueError) as exc:
        unreadable = f"{SCENARIO}: the report cannot be recomputed from the records with it: " \
                     f"{shown(exc, 2000)}"  # may quote the bundle's scenario.yaml
        problems = [unreadable]
    else:
        checked = [name for name in present if name in expected.files]
        published = {name: archive.read(name) for name in checked}
        problems = [_differs(name, published[name], expected.files[name])
                    for name in checked if published[name] != expected.files[name]]
        problems += _summary_differs(predicate.summary, expected.summary)
    environment = predicate.environment
    made_by = Build(environment.harness_version, environment.report_code,
                    environment.numpy_version)
    this = Build.this()  # after the recompute, which loaded numpy
    if not problems:
        other = "" if made_by.same(this) else f" (made by {made_by}; this is {this})"
        return ("recomputed from the records: " + ", ".join([*checked, "the signed summary"])
                + " match" + other)
    if made_by.same(this):
        if unreadable:
            raise VerificationError("report", unreadable)
        raise VerificationError("report", "what the bundle publishes is not the report its "
                                f"records give (recomputed with its scenario.yaml, seed "
                                f"{predicate.seed} and the signed thresholds, by the build "
                                f"that made it, {this}):{_listing(problems)}")
    if not other_build_fails:
        return (f"not confirmed: made by {made_by}, this is {this}; this build's recompute "
                f"differs ({problems[0]})")
    rerun = _rerun(made_by, archive.path, environment.image_digest)
    raise VerificationError("build", f"not confirmed: {signature}, and every member and "
                            "record matches the manifest the statement binds, but its report "
                            "was computed by another build, and this build's recompute of it "
                            "differs.\n"
                            f"  made by: {made_by}\n"
                            f"  this is: {this} ({made_by.differences(this)})"
                            f"\nWhat differs:{_listing(problems)}\n"
                            "Another build may word or compute the report otherwise, so this "
                            "is neither proof of tampering nor a confirmed verdict. To confirm "
                            f"it, verify the bundle with the build that made it: {rerun}.")


def _rerun(made_by: Build, path: Path, image_digest: str | None) -> str:
    """How to verify with the build that made the bundle: a command to paste only for a
    released version (the statement's model admits only a version's characters; a local
    version, `+...`, was never released), its path quoted for a shell; the image as text."""
    if "+" in made_by.version:
        rerun = (f"copeca-action {made_by.version} is a local build (never released): use "
                 "that checkout")
    else:
        rerun = (f"`pipx run copeca-action=={made_by.version} verify "
                 f"{shlex.quote(str(path))} ...` (the same flags) for a released build")
    if image_digest:
        rerun += f", or the image it ran in ({shown(image_digest, 120)})"
    return rerun


def _differs(name: str, published: bytes, expected: bytes) -> str:
    """Where a published report file first departs from the recomputed one."""
    ours, theirs = expected.splitlines(), published.splitlines()
    at = next((i for i, (a, b) in enumerate(zip(ours, theirs, strict=False)) if a != b),
              min(len(ours), len(theirs)))

    def line(lines: list[bytes]) -> str:
        text = lines[at].decode("utf-8", "replace").strip() if at < len(lines) else "(end)"
        return text if len(text) <= 120 else text[:117] + "..."

    return (f"{name}: differs from line {at + 1}: it says {line(theirs)!r}, the records give "
            f"{line(ours)!r}")


def _summary_differs(published: Summary | None, expected: Summary) -> list[str]:
    """The signed summary's fields that are not the recomputed report's, as JSON."""
    def fields(summary: Summary) -> dict[str, str]:
        dumped = summary.model_dump(mode="json")
        extra = dumped.pop("extra", {})
        flat = {**dumped, **{f"extra.{k}": v for k, v in extra.items()}}
        return {k: json.dumps(v, sort_keys=True) for k, v in flat.items()}

    if published is None:
        return [f"{STATEMENT}: the statement signs no summary, though the bundle carries a "
                "report"]
    mine, theirs = fields(expected), fields(published)
    return [f"{STATEMENT}: the signed summary's {shown(k, 80)} is "
            f"{shown(theirs.get(k, '(absent)'))}, the records give "
            f"{shown(mine.get(k, '(absent)'))}"
            for k in sorted(mine.keys() | theirs.keys()) if mine.get(k) != theirs.get(k)]


def _records_of(read: tuple[list[RunRecord], dict[str, RunRecord]] | VerificationError
                ) -> list[RunRecord]:
    return [] if isinstance(read, VerificationError) else read[0]


def check_design(records: list[RunRecord], predicate: Predicate,
                 scenario_yaml: bytes | None) -> str:
    """The bundle's scenario is the one its records name: every record names the
    statement's scenario, and every record that names a design (`RunRecord.design`) the
    adaptive schedule of the bundled scenario.yaml; a difference is `report` (exit 15), as
    the published verdict is then judged at another alpha than its runs were stopped with.
    Thresholds that differ are said, not failed: the statement signs the ones the report
    judges with, which a merge or an action input may lay over the runs' own. Returns how
    it was checked (empty when no record names a design)."""
    others = sorted({r.scenario for r in records} - {predicate.scenario})
    if others:
        n = sum(1 for r in records if r.scenario != predicate.scenario)
        raise VerificationError("report", f"{RESULTS}: {n} record(s) name another scenario "
                                f"than the bundle's {shown(predicate.scenario)} ("
                                + ", ".join(shown(o) for o in others[:SHOW]) + "): they "
                                "were not run from the scenario this bundle judges them with")
    named = [d for r in records if (d := design_key(r.design)) is not None]
    if not named or scenario_yaml is None:
        return ""
    mine = _bundled_design(scenario_yaml, predicate)
    if mine is None:
        return ""  # not a scenario: the report check names it
    other = [d for d in named if d.adaptive != mine.adaptive]
    if other:
        d = other[0]
        raise VerificationError("report", f"{RESULTS}: {len(other)} record(s) were run with "
                                f"{d.described()} ({d.text()}), and the bundle's {SCENARIO} "
                                f"has {mine.described()} ({mine.text()}): its adaptive "
                                "schedule is not the one the runs were stopped with, so the "
                                "published verdict is not judged at the alpha they spent")
    moved = sorted({d.thresholds for d in named} - {mine.thresholds})
    if moved:
        n = sum(1 for d in named if d.thresholds != mine.thresholds)
        return (f"{n} of {len(records)} record(s) were run under other thresholds ("
                + ", ".join(moved) + f") than the ones the statement signs ({mine.thresholds}, "
                "a merge's or an action input's): the report judges with the signed ones")
    return (f"every record names the bundle's scenario {shown(predicate.scenario)} and its "
            f"design ({mine.text()})")


def _bundled_design(scenario_yaml: bytes, predicate: Predicate) -> DesignKey | None:
    """The design of the bundled scenario.yaml with the thresholds the statement signs
    over its own (as the report is recomputed); None when it is not a scenario."""
    from copeca_action._util.yamlio import parse_model, parse_yaml
    from copeca_action.scenario import Scenario
    from copeca_action.scenario._settings import Thresholds

    try:
        found = parse_model(parse_yaml(scenario_yaml.decode(), Path(SCENARIO)), Scenario)
        thresholds = Thresholds.model_validate({**found.thresholds.model_dump(),
                                                **predicate.thresholds})
    except (CopecaError, ValueError):
        return None
    return design_of(thresholds, found.adaptive)


def _check_against_scenario(path: Path, plan: RunPlan, predicate: Predicate,
                            scenario: Scenario, tasks: Mapping[str, Task],
                            log: list[RunRecord], dirs: dict[str, RunRecord]) -> None:
    expected = expected_plan(plan, scenario, tasks)
    completeness = check_completeness(expected.runs, log, dirs)
    notes = []
    if expected.scenario_hash != plan.scenario_hash:
        differ = _settings_differ(scenario, predicate)
        notes.append(f"the scenario is not the one the bundle was planned from (scenario hash "
                     f"{expected.scenario_hash} ≠ {plan.scenario_hash}){differ}")
    if expected.plan_digest != plan.plan_digest and completeness.ok:
        notes.append(f"its plan holds other runs (plan digest {expected.plan_digest[:12]} ≠ "
                     f"{plan.plan_digest[:12]})" + (": this shard's runs match, another "
                                                    "shard's differ" if plan.shard else ""))
    if not completeness.ok or notes:
        raise VerificationError("incomplete", "\n".join(
            [f"{path}: against scenario {scenario.name!r} ({len(expected.runs)} runs):",
             *notes, *([completeness.message()] if not completeness.ok else [])]))


def _settings_differ(scenario: Scenario, predicate: Predicate) -> str:
    """Which of the seed and thresholds the bundle signed the scenario sets otherwise, as
    `: it sets ...`; empty when those agree (another field differs)."""
    signed = predicate.thresholds
    mine = scenario.thresholds.model_dump(mode="json")
    differ = [f"threshold {k} {mine[k]} (the bundle ran with {signed[k]})"
              for k in sorted(mine.keys() & signed.keys()) if mine[k] != signed[k]]
    if scenario.seed != predicate.seed:
        differ.insert(0, f"seed {scenario.seed} (the bundle ran with {predicate.seed})")
    return f": it sets {'; '.join(differ)}" if differ else ""


def simulation_line(result: VerifiedBundle) -> str:
    """The `SIMULATED:` sentence verify prints (how many runs the scripted model answered);
    empty when none was."""
    if not result.simulated:
        return ""
    from collections import Counter

    from copeca_action.records import simulation_note

    return simulation_note(Counter(str(r.endpoint or "unknown") for r in result.records))


def summary_json(result: VerifiedBundle, exit_code: int = 0) -> str:
    """Machine-readable outcome of a verification that passed (for --json): the facts the
    text prints (exit code, signer, runs, simulated, the build that made the report, the
    report and attempts checks), in JSON's own escaping (no control character of the
    bundle's reaches a terminal or log raw)."""
    predicate = result.statement.predicate
    environment = predicate.environment
    return json.dumps({
        "ok": True, "exit_code": exit_code, "kind": None, "error": None,
        "path": str(result.path), "signed": result.signed, "keyid": result.keyid,
        "pinned": result.pinned, "files": len(result.manifest.files),
        "bytes_hashed": result.bytes_hashed,
        "runs": len(result.plan.runs), "records": len(result.records),
        "scenario": predicate.scenario, "plan_digest": predicate.plan_digest,
        "shard": predicate.shard, "scenario_checked": result.scenario_checked,
        "simulated": result.simulated, "simulation_note": simulation_line(result),
        "build": {"harness_version": environment.harness_version,
                  "report_code": environment.report_code,
                  "numpy_version": environment.numpy_version},
        "report_checked": result.report_checked,
        "attempts": sorted(result.attempts or {}),
        "attempts_checked": result.attempts_checked,
        "design_checked": result.design_checked,
        "scrubbed": result.manifest.scrubbed,
        "summary": predicate.summary.model_dump(mode="json") if predicate.summary else None,
    }, indent=2)


def failure_json(path: Path, error: VerificationError) -> str:
    """Machine-readable outcome of a verification that failed (for --json): its exit code,
    kind and message, the message as the text prints it."""
    return json.dumps({"ok": False, "exit_code": error.exit_code, "kind": error.kind,
                       "error": str(error), "path": str(path)}, indent=2)
