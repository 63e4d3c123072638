"""Retrieval metrics speed: 10,000 trajectories of 30 steps (wall time), and tree-sitter
symbol extraction throughput (MB of source per second) per language.

    .venv/bin/python bench/retrieval.py [--trajectories N] [--steps T] [--seed S]

Uses the fastapi 0.115.6 sdist from the test cache when present (real Python), else only
generated sources. Prints figures; asserts nothing about time.
"""

from __future__ import annotations

import argparse
import os
import random
import tempfile
import time
from pathlib import Path

from copeca_action.retrieval import (
    Repo,
    Viewed,
    definitions,
    extract_viewed,
    run_metrics,
    summarize_arm,
)
from copeca_action.transcript._model import ToolCall

ROOT = Path(__file__).resolve().parent.parent
FASTAPI = Path(os.environ.get("COPECA_TEST_CACHE", ROOT / ".cache" / "test-data")) / \
    "fastapi-0.115.6"

SAMPLES = {
    "python": ("py", "@decorator\ndef f{i}(x):\n    def inner():\n        return x\n"
                     "    return inner\n\nclass C{i}:\n    def m(self):\n        return {i}\n\n"),
    "javascript": ("js", "function f{i}(x) {{ return x + {i}; }}\nconst g{i} = () => {i};\n"
                         "class C{i} {{ m() {{ return {i}; }} }}\n"),
    "typescript": ("ts", "interface I{i} {{ x(): number }}\nexport function f{i}(a: number): "
                         "number {{ return a }}\nclass C{i} {{ m(): void {{}} }}\n"),
    "go": ("go", "type S{i} struct{{ X int }}\nfunc F{i}() int {{ return {i} }}\n"
                 "func (s *S{i}) M() {{}}\n"),
    "rust": ("rs", "#[derive(Debug)]\nstruct S{i} {{ x: i32 }}\nimpl S{i} {{ fn f(&self) -> i32 "
                   "{{ {i} }} }}\n"),
    "java": ("java", "class C{i} {{ @Override public String toString() {{ return \"{i}\"; }} "
                     "C{i}() {{}} }}\n"),
}


def generated_source(language: str, target_bytes: int) -> bytes:
    template = SAMPLES[language][1]
    parts, size, i = [], 0, 0
    if language == "go":
        parts.append("package p\n\n")
    while size < target_bytes:
        chunk = template.format(i=i)
        parts.append(chunk)
        size += len(chunk)
        i += 1
    return "".join(parts).encode()


def bench_symbols() -> None:
    print("symbol extraction (tree-sitter, definitions incl. nested and decorated)")
    for language in SAMPLES:
        data = generated_source(language, 2_000_000)
        definitions(data[:100], language)  # load the grammar outside the timing
        cpu = time.process_time()
        count = len(definitions(data, language))
        seconds = time.process_time() - cpu
        print(f"  {language:<11} generated {len(data) / 1e6:5.2f} MB {count:7d} symbols "
              f"{len(data) / 1e6 / seconds:6.2f} MB/s CPU (dense: ~1 definition per 30 bytes)")
    if (FASTAPI / "fastapi").is_dir():
        files = sorted((FASTAPI / "fastapi").rglob("*.py"))
        blobs = [p.read_bytes() for p in files]
        total = sum(len(b) for b in blobs)
        cpu = time.process_time()
        count = sum(len(definitions(b, "python")) for b in blobs)
        seconds = time.process_time() - cpu
        print(f"  python      fastapi/ {len(files)} files {total / 1e6:5.2f} MB  {count:5d} "
              f"symbols  {total / 1e6 / seconds:6.2f} MB/s CPU")
    else:
        print(f"  (fastapi sdist not in {FASTAPI.parent}: run the retrieval tests once)")


def make_repo(root: Path, files: int, rng: random.Random) -> list[tuple[str, int]]:
    out = []
    for n in range(files):
        text = generated_source("python", rng.randint(3_000, 30_000)).decode()
        rel = f"pkg/mod{n:03d}.py"
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
        out.append((rel, text.count("\n")))
    return out


def random_step(step: int, files: list[tuple[str, int]], rng: random.Random) -> list[Viewed]:
    items = []
    for _ in range(rng.randint(1, 3)):
        rel, lines = rng.choice(files)
        kind = rng.random()
        if kind < 0.2:
            items.append(Viewed(step=step, file=rel))
        elif kind < 0.35:
            items.append(Viewed(step=step, file=rel, whole=True))
        else:
            first = rng.randint(1, lines)
            items.append(Viewed(step=step, file=rel,
                                lines=(first, min(lines, first + rng.randint(5, 200)))))
    return items


def random_call(step: int, files: list[tuple[str, int]], root: str,
                rng: random.Random) -> ToolCall:
    """A tool call of the kinds real transcripts hold, in their input shapes."""
    rel, lines = rng.choice(files)
    first = rng.randint(1, lines)
    kind = rng.randrange(6)
    if kind == 0:
        return ToolCall(step=step, name="Read", input={"file_path": f"{root}/{rel}"})
    if kind == 1:
        return ToolCall(step=step, name="Read", input={"file_path": f"{root}/{rel}",
                                                      "offset": first, "limit": 80})
    if kind == 2:
        return ToolCall(step=step, name="Grep", input={"pattern": "def f"},
                        result="Found 2 files\n" + "\n".join(f"{root}/{r}" for r, _ in
                                                            rng.sample(files, 2)))
    if kind == 3:
        return ToolCall(step=step, name="Bash",
                        input={"command": f"sed -n '{first},{first + 60}p' {rel}"})
    if kind == 4:
        return ToolCall(step=step, name="exec_command",
                        input={"cmd": ["bash", "-lc", f"nl -ba {rel} | sed -n '{first},"
                                       f"{first + 40}p'"]})
    return ToolCall(step=step, name="Bash", input={"command": f"grep -n 'return' {rel}"},
                    result="\n".join(f"{n}:        return {n}" for n in range(first, first + 5)))


def bench_extraction(trajectories: int, steps: int, files: list[tuple[str, int]],
                     repo: Repo, rng: random.Random) -> None:
    root = str(repo.root)
    calls = [[random_call(t, files, root, rng) for t in range(steps)]
             for _ in range(trajectories)]
    start, cpu = time.perf_counter(), time.process_time()
    viewed = [extract_viewed(c, repo) for c in calls]
    wall, cpu = time.perf_counter() - start, time.process_time() - cpu
    items = sum(len(v.items) for v in viewed)
    print(f"  viewed-context extraction from {trajectories * steps} tool calls "
          f"(Read, Grep, Bash, exec_command): {wall:6.2f} s wall, {cpu:6.2f} s CPU "
          f"({items} items)")


def bench_metrics(trajectories: int, steps: int, seed: int) -> None:
    rng = random.Random(seed)
    with tempfile.TemporaryDirectory() as tmp:
        files = make_repo(Path(tmp), 200, rng)
        repo = Repo(tmp)
        start = time.perf_counter()
        for rel, _ in files:
            source = repo.file(rel)
            assert source is not None
            source.symbols()
        index_s = time.perf_counter() - start
        runs_input = []
        for _ in range(trajectories):
            viewed = [v for t in range(steps) for v in random_step(t, files, rng)]
            gold = []
            for _ in range(rng.randint(1, 3)):
                rel, lines = rng.choice(files)
                first = rng.randint(1, lines)
                gold.append((rel, (first, min(lines, first + rng.randint(3, 40)))))
            runs_input.append((viewed, gold))
        start, cpu = time.perf_counter(), time.process_time()
        runs = [run_metrics(repo, viewed, gold) for viewed, gold in runs_input]
        metrics_s = time.perf_counter() - start
        metrics_cpu = time.process_time() - cpu
        start = time.perf_counter()
        summary = summarize_arm(runs)
        summary_s = time.perf_counter() - start
        print(f"metrics: {trajectories} trajectories x {steps} steps")
        bench_extraction(trajectories, steps, files, repo, rng)
    views = sum(len(v) for v, _ in runs_input)
    print(f"  ({views} viewed items over 200 generated Python files)")
    print(f"  repo index (read + symbols of 200 files, once): {index_s:6.2f} s")
    print(f"  per-run metrics, all granularities + trajectory: {metrics_s:6.2f} s wall, "
          f"{metrics_cpu:6.2f} s CPU ({metrics_s / trajectories * 1e3:.2f} ms/run wall)")
    print(f"  per-arm arrays + macro/micro summary:           {summary_s:6.2f} s")
    print(f"  (sanity) macro span coverage {summary.span.macro_coverage:.3f}, "
          f"mean AUC file {summary.file.auc:.3f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--trajectories", type=int, default=10_000)
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    bench_symbols()
    bench_metrics(args.trajectories, args.steps, args.seed)


if __name__ == "__main__":
    main()
