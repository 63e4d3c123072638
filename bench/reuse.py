"""What `reuse` costs before the first run: verifying the previous bundle, computing the
fingerprints of the plan, and copying every matching run (record and files).

    .venv/bin/python bench/reuse.py [--runs 2000] [--kb-per-run 200] [--dir /work/tmp]

Builds a signed bundle of N synthetic runs of the bundled demo scenario's plan (repetitions
raised to reach N), each with a transcript of the given size, then times ReusableBundle
(verify + index), the fingerprints of the plan and `adopt` of every run into a fresh output
folder. Prints seconds and MB/s; deletes what it wrote.
"""

from __future__ import annotations

import argparse
import json
import shutil
import tempfile
import time
from pathlib import Path

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from copeca_action._util.paths import corpus_dir
from copeca_action._util.scrub import Scrubber
from copeca_action.bundle import BundleContents, Environment, ReusableBundle, write_bundle
from copeca_action.engine import OutputDir, ReuseOffer, adopt
from copeca_action.plan import build_plan
from copeca_action.records import RunRecord, Tokens
from copeca_action.scenario import load_corpus, load_scenario


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=2000)
    parser.add_argument("--kb-per-run", type=int, default=200)
    parser.add_argument("--dir", type=Path, default=None)
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="copeca-bench-reuse-", dir=args.dir))
    try:
        run(root, args.runs, args.kb_per_run)
    finally:
        shutil.rmtree(root, ignore_errors=True)


def run(root: Path, runs: int, kb: int) -> None:
    path = corpus_dir() / "scenarios" / "demo.yaml"
    corpus = load_corpus(corpus_dir()).require_ok()
    scenario = load_scenario(path)
    per_rep = len(build_plan(scenario, corpus.tasks, repetitions=1).runs)
    plan = build_plan(scenario, corpus.tasks, repetitions=max(1, runs // per_rep))
    line = json.dumps({"type": "assistant", "text": "x" * 200}).encode() + b"\n"
    body = line * max(1, kb * 1000 // len(line))
    records = [RunRecord(run_id=r.run_id, scenario=plan.scenario, task_id=r.task_id,
                         task_hash=r.task_hash, arm=r.arm, model=r.model, runner=r.runner,
                         cli_version="2.1.197", repetition=r.repetition, outcome="ok",
                         correct=True, tokens=Tokens(input=100, output=10), cost_usd=0.01,
                         run_dir=f"runs/{r.run_id}", fingerprint=r.run_id * 2)
               for r in plan.runs]
    files = {r.run_id: {"stdout.jsonl": body, "patch.diff": b""} for r in records}
    key = Ed25519PrivateKey.generate()
    bundle = root / "prev.copeca"
    write_bundle(BundleContents(scenario_yaml=path.read_bytes(), plan=plan, records=records,
                                environment=Environment(harness_version="0.1.0"),
                                thresholds={}, run_files=files), bundle, key, Scrubber())
    size_mb = bundle.stat().st_size / 1e6
    t0 = time.perf_counter()
    with ReusableBundle(bundle, key.public_key()) as previous:
        t1 = time.perf_counter()
        out = OutputDir(root / "out")
        out.claim(plan, path.read_text(), resume=False)
        offer = ReuseOffer(sha256=previous.sha256, name=bundle.name, records=previous.records,
                           extract=previous.extract)
        fps = {r.run_id: r.fingerprint for r in records}
        t2 = time.perf_counter()
        result = adopt(out, plan, plan.scenario, offer, fps)
        t3 = time.perf_counter()
    assert result.reused == len(plan.runs), result.message()
    print(f"bundle: {len(plan.runs)} runs, {size_mb:.0f} MB")
    print(f"verify + index: {t1 - t0:.2f} s ({size_mb / (t1 - t0):.0f} MB/s)")
    print(f"adopt (extract, check, record) every run: {t3 - t2:.2f} s "
          f"({size_mb / (t3 - t2):.0f} MB/s, {(t3 - t2) / len(plan.runs) * 1000:.2f} ms/run)")


if __name__ == "__main__":
    main()
