"""Seconds per scripted run for each real agent CLI (figures, never asserted).

Each run goes through the project's own path: prepare_run (fresh config dir and HOME),
run_agent (process group), parse_transcript and cost_of, against the scripted model server,
with the scripts of tests/integration/cli. Prints the CLI versions and, per CLI and script,
median / min / max wall seconds; then runs/minute with --workers runs in parallel.

    .venv/bin/python bench/cli_runs.py [--reps 5] [--workers 2] [--cli claude gemini ...]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from copeca_action.agent import cli_version, prepare_run, resolve_binary, run_agent
from copeca_action.errors import InfraError
from copeca_action.scenario import load_runner
from copeca_action.scripted import ScriptedServer
from copeca_action.transcript import cost_of, parse_transcript

ROOT = Path(__file__).resolve().parents[1]
SCRIPTS = ROOT / "tests" / "integration" / "cli" / "scripts"
MODELS = {"claude": "claude-sonnet-4-5", "codex": "gpt-6.1-sol",
          "gemini": "gemini-2.5-flash", "qwen": "qwen3-coder-plus",
          "opencode": "claude-sonnet-4-5"}
PROMPTS = {"read (2 steps)": "CLI-READ What does greeting.txt say?",
           "multi (4 steps)": "CLI-MULTI Where is area defined, and how long is it?"}


def one_run(server: ScriptedServer, cli: str, prompt: str, where: Path) -> tuple[float, bool]:
    """Wall seconds from prepare to parsed cost, and whether the answer came back."""
    runner = load_runner(ROOT / "runners" / f"{cli}.yaml")
    workdir = where / "wd"
    workdir.mkdir(parents=True)
    (workdir / "greeting.txt").write_text("hello from the fixture\n")
    (workdir / "shapes.py").write_text("import math\n\ndef area(r):\n    return math.pi * r * r\n")
    start = time.perf_counter()
    inv = prepare_run(runner, model=MODELS[cli], prompt=prompt, workdir=workdir,
                      run_dir=where / "run", mode=None, max_turns=10, run_budget_usd=None,
                      base_url=server.url, tool_dir=None, host_env=os.environ)
    result = run_agent(inv, 120)
    transcript = parse_transcript(runner.parser, result.stdout_path, inv.config_dir)
    cost_of(transcript, runner, MODELS[cli])
    return time.perf_counter() - start, transcript.answer is not None


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--cli", nargs="+", default=list(MODELS))
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="copeca-bench-") as tmp, \
            ScriptedServer(SCRIPTS, seed=3) as server:
        base = Path(tmp)
        for cli in args.cli:
            runner = load_runner(ROOT / "runners" / f"{cli}.yaml")
            try:
                resolve_binary(runner)
            except InfraError as exc:
                print(f"{cli}: skipped ({exc})")
                continue
            print(f"{cli} {cli_version(runner)} (model {MODELS[cli]})")
            for label, prompt in PROMPTS.items():
                times, ok = [], 0
                for i in range(args.reps):
                    secs, answered = one_run(server, cli, prompt, base / f"{cli}-{label[:4]}-{i}")
                    times.append(secs)
                    ok += answered
                print(f"  {label:16s} median {statistics.median(times):5.2f} s  "
                      f"min {min(times):5.2f}  max {max(times):5.2f}  "
                      f"answered {ok}/{args.reps}")
            n = args.workers * args.reps
            start = time.perf_counter()
            with ThreadPoolExecutor(args.workers) as pool:
                futures = [pool.submit(one_run, server, cli, PROMPTS["read (2 steps)"],
                                       base / f"{cli}-par-{i}") for i in range(n)]
                for future in futures:
                    future.result()
            wall = time.perf_counter() - start
            print(f"  {n} read runs, {args.workers} at a time: {wall:5.1f} s wall, "
                  f"{60 * n / wall:5.1f} runs/min")
    return 0


if __name__ == "__main__":
    sys.exit(main())
