"""Bundle build and verify throughput on a ~1 GB bundle, beside `openssl dgst -sha256` on the
same bytes in the same run.

    .venv/bin/python bench/bundle.py [--size-mb 1024] [--dir /work/tmp]

Writes synthetic transcripts (JSON lines, a few secrets planted) under --dir, builds a signed
bundle from them with the report of its 960 records, verifies it against the public key (which
recomputes that report and compares it), times openssl on the bundle file, prints MB/s for each
and verify as a share of openssl, then deletes everything it wrote.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from copeca_action import __version__
from copeca_action._util.paths import corpus_dir
from copeca_action._util.scrub import Scrubber
from copeca_action.bundle import (
    BundleContents,
    Environment,
    verify_bundle,
    write_bundle,
)
from copeca_action.conclude import Recompute, rendered_report
from copeca_action.plan import build_plan
from copeca_action.records import RunRecord, Tokens
from copeca_action.scenario import load_corpus, load_scenario

MB = 1_000_000


def noise_block() -> bytes:
    """About 1 MB of JSON lines of tool output: hex noise (like code and logs, which a
    pattern rarely matches) with one token to scrub."""
    noise = os.urandom(1 << 19).hex()
    lines = [json.dumps({"type": "user", "tool_result": noise[i:i + 3000]})
             for i in range(0, len(noise), 3000)]
    lines[len(lines) // 2] = json.dumps({"type": "user", "leak": "ghp_" + "A1b2C3d4E5f6" * 3})
    return "\n".join(lines).encode() + b"\n"


def transcript(path: Path, size: int, seed: int, block: bytes) -> None:
    """A transcript of exactly `size` bytes: whole blocks, then the head of one more (cut at
    a line end, padded with one line of noise), so the bundle is as large as asked."""
    with path.open("wb") as out:
        written = out.write(json.dumps({"type": "system", "seed": seed}).encode() + b"\n")
        while written + len(block) <= size:
            written += out.write(block)
        rest = size - written
        if rest > 0:
            head = block[:block.rfind(b"\n", 0, rest) + 1]
            written += out.write(head)
            pad = size - written
            if pad > 0:
                out.write(b"x" * (pad - 1) + b"\n")


def timed(fn, *args, **kwargs):  # type: ignore[no-untyped-def]
    start = time.perf_counter()
    value = fn(*args, **kwargs)
    return value, time.perf_counter() - start


def cli_verify_seconds(path: Path, pubkey: Path) -> float:
    """`copeca-action verify` as a user runs it: a new process, start-up included."""
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "copeca_action.cli", "verify", str(path), "--pubkey",
                    str(pubkey)], check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - start


def openssl_seconds(path: Path) -> float:
    start = time.perf_counter()
    subprocess.run(["openssl", "dgst", "-sha256", str(path)], check=True,
                   stdout=subprocess.DEVNULL)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--size-mb", type=int, default=1024)
    parser.add_argument("--dir", type=Path, default=Path("/work/tmp"))
    args = parser.parse_args()
    args.dir.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="copeca-bench-", dir=args.dir))
    try:
        run(work, args.size_mb * MB)
    finally:
        shutil.rmtree(work)
        print(f"removed {work}")


def run(work: Path, total: int) -> None:
    corpus = load_corpus(corpus_dir()).require_ok()
    scenario_path = corpus_dir() / "scenarios" / "demo.yaml"
    scenario = load_scenario(scenario_path)
    plan = build_plan(scenario, corpus.tasks, repetitions=20)
    per_run = total // len(plan.runs)
    records, files = [], {}
    start = time.perf_counter()
    block = noise_block()
    for i, r in enumerate(plan.runs):
        path = work / f"{r.run_id}.jsonl"
        transcript(path, per_run, i, block)
        records.append(RunRecord(
            run_id=r.run_id, scenario=plan.scenario, task_id=r.task_id, task_hash=r.task_hash,
            arm=r.arm, model=r.model, runner=r.runner, repetition=r.repetition,
            outcome="ok", correct=i % 3 > 0, tokens=Tokens(input=1000, output=200),
            cost_usd=0.02, cost_source="computed"))
        files[r.run_id] = {"transcript.jsonl": path, "eval.json": b'{"passed": true}\n'}
    print(f"inputs: {len(plan.runs)} runs x {per_run / MB:.1f} MB written in "
          f"{time.perf_counter() - start:.1f} s")
    # the report `run` would write (report.json, report.md, the signed summary), so verify
    # recomputes and compares it as it does for a real bundle
    report = rendered_report(records, scenario)[1]
    contents = BundleContents(
        scenario_yaml=scenario_path.read_bytes(), plan=plan, records=records,
        environment=Environment(harness_version=__version__),
        thresholds=scenario.thresholds.model_dump(mode="json"), run_files=files,
        report=report)
    key = Ed25519PrivateKey.generate()
    out = work / "bench.copeca"
    manifest, build_s = timed(write_bundle, contents, out, key, Scrubber())
    size = out.stat().st_size
    for path in work.glob("*.jsonl"):
        path.unlink()  # only the bundle stays, so the page cache holds it
    pubkey = work / "bench.pub"
    pubkey.write_bytes(key.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo))
    openssl_runs, verify_runs, cli_runs = [], [], []
    for _ in range(3):  # interleaved, so both see the same page cache and load
        openssl_runs.append(openssl_seconds(out))
        cli_runs.append(cli_verify_seconds(out, pubkey))
        result, seconds = timed(verify_bundle, out, key.public_key(), report=Recompute())
        verify_runs.append(seconds)
    assert result.report_checked.startswith("recomputed"), result.report_checked
    sha_s = timed(lambda: hashlib.file_digest(out.open("rb"), "sha256"))[1]
    best_openssl, best_verify = min(openssl_runs), min(verify_runs)
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"bundle: {size / MB:.0f} MB ({size:,} bytes; asked {total:,}), "
          f"{len(manifest.files)} members, "
          f"{sum(manifest.scrubbed.values())} redactions")
    print(f"build:   {size / MB / build_s:7.1f} MB/s  ({build_s:.2f} s; scrub + sha256 + write)")
    print(f"verify:  {size / MB / best_verify:7.1f} MB/s  ({best_verify:.2f} s; runs "
          f"{', '.join(f'{s:.2f}' for s in verify_runs)})")
    print(f"openssl: {size / MB / best_openssl:7.1f} MB/s  ({best_openssl:.2f} s; runs "
          f"{', '.join(f'{s:.2f}' for s in openssl_runs)})")
    print(f"hashlib: {size / MB / sha_s:7.1f} MB/s  (file_digest, for reference)")
    best_cli = min(cli_runs)
    print(f"copeca-action verify (CLI, start-up included): {best_cli:.2f} s; runs "
          f"{', '.join(f'{s:.2f}' for s in cli_runs)}")
    print(f"CLI verify / openssl time: {best_cli / best_openssl:.2f}x (target <= 1.25x); "
          f"in-process verify / openssl time: {best_verify / best_openssl:.2f}x")
    print(f"peak RSS: {rss:.0f} MB; hashed {result.bytes_hashed / MB:.0f} MB of members; "
          f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")


if __name__ == "__main__":
    main()
