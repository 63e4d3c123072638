"""Bad input never gives a traceback or a hang: ≥ 100 bad inputs, each through the real
`copeca-action` entry point (a subprocess with a timeout), each asserting the clear message
that names the file, the line, the field or the flag, and an exit code that says "the tool
refused" (2; `validate` reports invalid files with 1, `verify` its kinds with 10-14).

The cases run concurrently in one fixture (the machine is shared) and each test checks one.
"""

from __future__ import annotations

import concurrent.futures
import json
import os
import re
import subprocess
import sys
import zipfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[3]
CORPUS = ROOT / "corpus"
SCRIPTS = CORPUS / "scripts"
CLI = Path(sys.executable).with_name("copeca-action")
TIMEOUT_S = 90
GOOD: dict[str, Any] = {
    "name": "bad-input", "tasks": {"include": ["fastapi/locate-unique-id"]},
    "modes": ["baseline"], "models": ["claude-sonnet-4-5"],
    "model_runner_map": {"claude-sonnet-4-5": "claude"}, "repetitions": 1,
    "model_endpoint": "scripted", "scripts": str(SCRIPTS)}
TASK: dict[str, Any] = {
    "id": "fastapi/bad-task", "repo": "fastapi", "type": "comprehension",
    "category": "locate", "language": "python", "prompt": "Which function builds ids?",
    "source": {"origin": "original"}, "grading": {"answer": {"required": ["x"]}}}
Files = dict[str, str | bytes | Callable[[Path], None]]


@dataclass
class Case:
    id: str
    argv: list[str]
    expect: str
    """A regex the output (stderr + stdout) must match: the file, field or flag named."""
    files: Files = field(default_factory=dict)
    codes: tuple[int, ...] = (2,)
    needs_cli: bool = False
    """Reaches a real agent CLI (skipped when it is not installed)."""


def scenario(**changes: Any) -> str:
    data = {**GOOD, **changes}
    return yaml.safe_dump({k: v for k, v in data.items() if v is not None}, sort_keys=False)


def task(**changes: Any) -> str:
    data = {**TASK, **changes}
    return yaml.safe_dump({k: v for k, v in data.items() if v is not None}, sort_keys=False)


def fifo(path: Path) -> None:
    os.mkfifo(path)


def folder(path: Path) -> None:
    path.mkdir()


def corpus_with(files: dict[str, str]) -> Callable[[Path], None]:
    """A small corpus: the real repos.yaml and modes, plus `files` (relative to it)."""
    def make(path: Path) -> None:
        path.mkdir()
        (path / "repos.yaml").write_text((CORPUS / "repos.yaml").read_text())
        (path / "modes").mkdir()
        for mode in (CORPUS / "modes").iterdir():
            (path / "modes" / mode.name).write_text(mode.read_text())
        for rel, text in files.items():
            (path / rel).parent.mkdir(parents=True, exist_ok=True)
            (path / rel).write_text(text)
    return make


def bundle_with(members: dict[str, bytes]) -> Callable[[Path], None]:
    def make(path: Path) -> None:
        with zipfile.ZipFile(path, "w") as archive:
            for name, data in members.items():
                archive.writestr(name, data)
    return make


def ec_key(path: Path) -> None:
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import ec

    key = ec.generate_private_key(ec.SECP256R1())
    path.write_bytes(key.private_bytes(serialization.Encoding.PEM,
                                       serialization.PrivateFormat.PKCS8,
                                       serialization.NoEncryption()))


LAUGHS = "a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n" + "".join(
    f"{n}: &{n} [{', '.join(['*' + p] * 9)}]\n" for p, n in zip("abcdefgh", "bcdefghi",
                                                               strict=True))
PEM_GARBAGE = "-----BEGIN PRIVATE KEY-----\nnot base64 at all\n-----END PRIVATE KEY-----\n"
RUN = ["run", "{d}/s.yaml", "--out", "{d}/out", "--plain"]
S = {"s.yaml": scenario()}


def scenario_cases() -> list[Case]:
    """A broken scenario file, through `plan` and through `run` (refused before any run)."""
    broken: list[tuple[str, Files, str]] = [
        ("missing-file", {}, r"s\.yaml.*(no such file|cannot read)"),
        ("folder", {"s.yaml": folder}, r"s\.yaml.*folder"),
        ("fifo", {"s.yaml": fifo}, r"s\.yaml.*not a regular file"),
        ("empty", {"s.yaml": ""}, r"s\.yaml.*(empty|mapping)"),
        ("syntax", {"s.yaml": "name: [unclosed\n"}, r"s\.yaml:\d+.*YAML syntax"),
        ("top-level-list", {"s.yaml": "- a\n- b\n"}, r"s\.yaml.*mapping"),
        ("nul-byte", {"s.yaml": "name: a\0b\n"}, r"s\.yaml.*(YAML|special characters|NUL)"),
        ("not-utf8", {"s.yaml": b"name: \xff\xfe\n"}, r"s\.yaml:1.*UTF-8"),
        ("huge", {"s.yaml": "# " + "x" * (3 << 20) + "\n"}, r"s\.yaml.*limited to"),
        ("billion-laughs", {"s.yaml": LAUGHS}, r"s\.yaml.*billion laughs"),
        ("deep-nesting", {"s.yaml": "a: " + "[" * 3000 + "]" * 3000 + "\n"},
         r"s\.yaml.*nested"),
        ("duplicate-key", {"s.yaml": scenario() + "name: again\n"}, r"s\.yaml:\d+.*duplicate"),
        ("unknown-key", {"s.yaml": scenario(colour="red")}, r"s\.yaml:\d+: colour.*unknown"),
        ("missing-name", {"s.yaml": scenario(name=None)}, r"s\.yaml.*name.*required"),
        ("name-list", {"s.yaml": scenario(name=["a"])}, r"s\.yaml:\d+: name"),
        ("repetitions-zero", {"s.yaml": scenario(repetitions=0)}, r"repetitions"),
        ("repetitions-negative", {"s.yaml": scenario(repetitions=-1)}, r"repetitions"),
        ("repetitions-text", {"s.yaml": scenario(repetitions="two")}, r"repetitions"),
        ("repetitions-huge", {"s.yaml": scenario(repetitions=10**12)}, r"repetitions"),
        ("budget-negative", {"s.yaml": scenario(budget_usd=-1)}, r"budget_usd"),
        ("budget-nan", {"s.yaml": scenario(budget_usd=float("nan"))}, r"budget_usd"),
        ("budget-inf", {"s.yaml": scenario(budget_usd=float("inf"))}, r"budget_usd"),
        ("timeout-zero", {"s.yaml": scenario(timeout_s=0)}, r"timeout_s"),
        ("timeout-text", {"s.yaml": scenario(timeout_s="soon")}, r"timeout_s"),
        ("workers-zero", {"s.yaml": scenario(workers=0)}, r"workers"),
        ("workers-huge", {"s.yaml": scenario(workers=100000)}, r"workers"),
        ("seed-text", {"s.yaml": scenario(seed="lucky")}, r"seed"),
        ("unknown-mode", {"s.yaml": scenario(modes=["no-such-mode"])}, r"no-such-mode"),
        ("mode-not-text", {"s.yaml": scenario(modes=[{"a": 1}])}, r"modes"),
        ("model-without-runner", {"s.yaml": scenario(models=["claude-sonnet-4-5", "gpt-5"])},
         r"gpt-5"),
        ("unknown-runner", {"s.yaml": scenario(
            model_runner_map={"claude-sonnet-4-5": "nope"})}, r"nope"),
        ("include-matches-nothing", {"s.yaml": scenario(tasks={"include": ["zz/none-*"]})},
         r"zz/none|no task"),
        ("include-not-list", {"s.yaml": scenario(tasks={"include": 5})}, r"tasks\.include"),
        ("thresholds-inverted", {"s.yaml": scenario(thresholds={"alert": 0.5, "fail": 0.1})},
         r"thresholds|fail"),
        ("thresholds-unknown", {"s.yaml": scenario(thresholds={"loud": 1})}, r"loud"),
        ("endpoint-unknown", {"s.yaml": scenario(model_endpoint="psychic")},
         r"model_endpoint"),
        ("scripts-missing", {"s.yaml": scenario(scripts="no-such-scripts")},
         r"no-such-scripts"),
        ("scripts-a-file", {"s.yaml": scenario(scripts="s.yaml")}, r"scripts"),
        ("models-empty", {"s.yaml": scenario(models=[])}, r"models"),
        ("modes-empty", {"s.yaml": scenario(modes=[])}, r"modes"),
        ("max-turns-negative", {"s.yaml": scenario(max_turns=-2)}, r"max_turns"),
        ("run-budget-negative", {"s.yaml": scenario(run_budget_usd=-0.5)}, r"run_budget_usd"),
        ("adaptive-unknown", {"s.yaml": scenario(adaptive={"wobble": True})}, r"wobble"),
    ]
    cases = []
    for name, files, expect in broken:
        cases.append(Case(f"plan-{name}", ["plan", "{d}/s.yaml"], expect, files))
        cases.append(Case(f"run-{name}", RUN, expect, files))
    return cases


def flag_cases() -> list[Case]:
    good_corpus = ["--corpus", str(CORPUS)]
    return [
        Case("run-budget-flag-nan", [*RUN, "--budget-usd", "nan"], r"--budget-usd", S),
        Case("run-budget-flag-negative", [*RUN, "--budget-usd", "-1"], r"--budget-usd", S),
        Case("run-budget-flag-inf", [*RUN, "--budget-usd", "inf"], r"--budget-usd", S),
        Case("run-budget-flag-text", [*RUN, "--budget-usd", "lots"], r"--budget-usd", S),
        Case("run-workers-flag-zero", [*RUN, "--workers", "0"], r"--workers", S),
        Case("run-workers-flag-negative", [*RUN, "--workers", "-3"], r"--workers", S),
        Case("run-shard-zero", [*RUN, "--shard", "0/2"], r"shard", S),
        Case("run-shard-past-end", [*RUN, "--shard", "3/2"], r"shard", S),
        Case("run-shard-text", [*RUN, "--shard", "half"], r"shard", S),
        Case("run-shard-of-zero", [*RUN, "--shard", "1/0"], r"shard", S),
        Case("run-compare-unknown", [*RUN, "--compare", "sideways"], r"--compare", S),
        Case("run-corpus-missing", [*RUN, "--corpus", "{d}/nope"], r"nope", S),
        Case("run-corpus-a-file", [*RUN, "--corpus", "{d}/s.yaml"], r"corpus|s\.yaml", S),
        Case("run-out-a-file", ["run", "{d}/s.yaml", "--out", "{d}/s.yaml", "--plain"],
             r"--out|s\.yaml", S),
        Case("run-key-missing", [*RUN, "--key", "{d}/none.key"], r"--key .*none\.key", S),
        Case("run-key-garbage", [*RUN, "--key", "{d}/bad.key"], r"--key .*bad\.key",
             {**S, "bad.key": PEM_GARBAGE}),
        Case("run-key-not-ed25519", [*RUN, "--key", "{d}/ec.key"], r"expected an Ed25519",
             {**S, "ec.key": ec_key}),
        Case("run-key-folder", [*RUN, "--key", "{d}"], r"--key", S),
        Case("run-reuse-missing", [*RUN, "--reuse", "{d}/old.copeca"], r"--reuse", S),
        Case("run-reuse-pubkey-garbage", [*RUN, "--reuse", "{d}/s.yaml", "--reuse-pubkey",
                                          "{d}/s.yaml"], r"--pubkey|PEM", S),
        Case("run-base-url-not-url", [*RUN, "--base-url", "not a url"], r"--base-url", S),
        Case("run-base-url-unreachable", [*RUN, "--base-url", "http://127.0.0.1:9",
                                          "--corpus", str(CORPUS)],
             r"model endpoint failed.*(ECONNREFUSED|refused|unreachable)",
             {"s.yaml": scenario(model_endpoint=None, scripts=None)}, needs_cli=True),
        Case("run-tool-dir-missing", [*RUN, "--tool-dir", "{d}/no-tool"], r"--tool-dir", S),
        Case("run-work-dir-a-file", [*RUN, "--work-dir", "{d}/s.yaml"], r"work-dir|s\.yaml",
             S),
        Case("run-cache-a-file", [*RUN, "--cache", "{d}/s.yaml"], r"cache|s\.yaml", S),
        Case("run-path-too-long", ["run", "{d}/" + "x" * 300 + ".yaml", "--plain"],
             r"x{20}.*(too long|cannot read)", S),
        Case("plan-shard-text", ["plan", "{d}/s.yaml", "--shard", "x/y"], r"shard", S),
        Case("plan-corpus-missing", ["plan", "{d}/s.yaml", "--corpus", "{d}/nope"], r"nope",
             S),
        Case("list-corpus-missing", ["list", "--corpus", "{d}/nope"], r"nope"),
        Case("list-category-unknown", ["list", "--category", "poetry", *good_corpus],
             r"--category"),
    ]


def bundle_cases() -> list[Case]:
    k = (10, 11, 12, 13, 14, 2)
    return [
        Case("verify-missing", ["verify", "{d}/b.copeca"], r"b\.copeca", codes=k),
        Case("verify-text", ["verify", "{d}/b.copeca"], r"not a zip", {"b.copeca": "hello"},
             codes=k),
        Case("verify-empty", ["verify", "{d}/b.copeca"], r"not a zip", {"b.copeca": ""},
             codes=k),
        Case("verify-folder", ["verify", "{d}/b.copeca"], r"b\.copeca",
             {"b.copeca": folder}, codes=k),
        Case("verify-escape", ["verify", "{d}/b.copeca"], r"unsafe member name",
             {"b.copeca": bundle_with({"../evil": b"x"})}, codes=k),
        Case("verify-no-manifest", ["verify", "{d}/b.copeca"], r"manifest\.json",
             {"b.copeca": bundle_with({"plan.json": b"{}"})}, codes=k),
        Case("verify-truncated", ["verify", "{d}/b.copeca"], r"not a zip|unreadable",
             {"b.copeca": lambda p: (bundle_with({"a.txt": b"x" * 1000})(p),
                                     p.write_bytes(p.read_bytes()[:200]))}, codes=k),
        Case("verify-pubkey-missing", ["verify", "{d}/b.copeca", "--pubkey", "{d}/none.pub"],
             r"--pubkey", {"b.copeca": "x"}, codes=k),
        Case("verify-pubkey-garbage", ["verify", "{d}/b.copeca", "--pubkey", "{d}/b.copeca"],
             r"--pubkey|not a zip", {"b.copeca": "x"}, codes=k),
        Case("verify-scenario-missing", ["verify", "{d}/b.copeca", "--scenario",
                                         "{d}/none.yaml"], r"none\.yaml|not a zip",
             {"b.copeca": "x"}, codes=k),
        Case("merge-shard-missing", ["merge", "{d}/a.copeca", "--out", "{d}/m.copeca",
                                     "--allow-unsigned"], r"a\.copeca", codes=k),
        Case("merge-shard-text", ["merge", "{d}/a.copeca", "--out", "{d}/m.copeca",
                                  "--allow-unsigned"], r"not a zip", {"a.copeca": "x"},
             codes=k),
        Case("merge-out-is-a-shard", ["merge", "{d}/a.copeca", "--out", "{d}/a.copeca",
                                      "--allow-unsigned"], r"--out", {"a.copeca": "x"},
             codes=k),
        Case("merge-no-trusted-key", ["merge", "{d}/a.copeca", "--out", "{d}/m.copeca"],
             r"--pubkey|--allow-unsigned", {"a.copeca": "x"}, codes=k),
        Case("merge-key-garbage", ["merge", "{d}/a.copeca", "--out", "{d}/m.copeca", "--key",
                                   "{d}/bad.key"], r"--key", {"a.copeca": "x",
                                                             "bad.key": PEM_GARBAGE}, codes=k),
        Case("merge-no-shards", ["merge", "--out", "{d}/m.copeca"], r"SHARD|shards"),
        Case("keygen-overwrite", ["keygen", "--out", "{d}/k"], r"exist|overwrit",
             {"k/copeca-signing.key": "x", "k/copeca-signing.pub": "x"}),
        Case("keygen-out-a-file", ["keygen", "--out", "{d}/k"], r"k", {"k": "x"}),
    ]


def report_cases() -> list[Case]:
    results = "results.jsonl"
    return [
        Case("analyze-missing", ["analyze", "{d}/results.jsonl"], r"results\.jsonl"),
        Case("analyze-garbage", ["analyze", "{d}/results.jsonl"], r"results\.jsonl:?\d*",
             {results: "not json\n{}\n"}),
        Case("analyze-folder", ["analyze", "{d}"], r"analyze|results|folder|\{d\}|/"),
        Case("analyze-fifo", ["analyze", "{d}/results.jsonl"],
             r"results\.jsonl.*not a regular file", {results: fifo}),
        Case("analyze-resamples-huge", ["analyze", "{d}/results.jsonl", "--resamples",
                                        str(10**12)], r"--resamples", {results: ""}),
        Case("analyze-resamples-zero", ["analyze", "{d}/results.jsonl", "--resamples", "0"],
             r"--resamples", {results: ""}),
        Case("analyze-resamples-negative", ["analyze", "{d}/results.jsonl", "--resamples",
                                            "-5"], r"--resamples", {results: ""}),
        Case("analyze-seed-text", ["analyze", "{d}/results.jsonl", "--seed", "x"], r"--seed",
             {results: ""}),
        Case("analyze-format-unknown", ["analyze", "{d}/results.jsonl", "--format", "pdf"],
             r"--format", {results: ""}),
        Case("badge-missing", ["badge", "{d}/report.json"], r"report\.json"),
        Case("badge-not-json", ["badge", "{d}/report.json"], r"report\.json",
             {"report.json": "<html>"}),
        Case("badge-json-list", ["badge", "{d}/report.json"], r"report\.json",
             {"report.json": "[1, 2]"}),
        Case("context-pred-missing", ["context", "--pred", "{d}/p.json", "--gold",
                                      "{d}/g.json", "--repo", "{d}"], r"p\.json",
             {"g.json": "{}"}),
        Case("context-gold-missing", ["context", "--pred", "{d}/p.json", "--gold",
                                      "{d}/g.json", "--repo", "{d}"], r"g\.json",
             {"p.json": "{}"}),
        Case("context-pred-garbage", ["context", "--pred", "{d}/p.json", "--gold",
                                      "{d}/g.json", "--repo", "{d}"], r"p\.json",
             {"p.json": "{{{", "g.json": "{}"}),
        Case("context-without-repo", ["context", "--pred", "{d}/p.json", "--gold",
                                      "{d}/g.json"], r"--repo",
             {"p.json": json.dumps({"pred_files": ["fastapi/utils.py"]}),
              "g.json": json.dumps({"gold_context": [{"file": "fastapi/utils.py",
                                                      "lines": [1, 5]}]})}),
        Case("context-repo-missing", ["context", "--pred", "{d}/p.json", "--gold",
                                      "{d}/g.json", "--repo", "{d}/none"], r"--repo|none",
             {"p.json": "{}", "g.json": "{}"}),
    ]


def corpus_cases() -> list[Case]:
    v = (1, 2)
    val = ["validate", "--corpus", "{d}/c", "{d}/c/tasks/fastapi/bad-task.yaml"]
    tasks = "tasks/fastapi/bad-task.yaml"
    return [
        Case("validate-id-unlike-file", val, r"bad-task\.yaml.*id",
             {"c": corpus_with({tasks: task(id="fastapi/other-name")})}, v),
        Case("validate-unknown-placeholder", val, r"\{nope\}|placeholder",
             {"c": corpus_with({tasks: task(type="edit", category="fix", grading={"test": {
                 "command": ["{nope}", "-c", "1"], "timeout_s": 30}})})}, v),
        Case("validate-ext-url", ["validate", "--corpus", "{d}/c", "{d}/c/repos.yaml"],
             r"repos\.yaml.*ext::",
             {"c": lambda p: (corpus_with({})(p), (p / "repos.yaml").write_text(
                 "repos:\n  evil:\n    language: python\n    git:\n      url: "
                 "'ext::sh -c touch% /tmp/pwned'\n      commit: "
                 f"{'a' * 40}\n"))}, v),
        Case("validate-correct-yes", val, r"bad-task\.yaml.*(expect|correct|bool)",
             {"c": corpus_with({tasks: task(control="yes")})}, v),
        Case("validate-missing-prompt", val, r"bad-task\.yaml.*prompt",
             {"c": corpus_with({tasks: task(prompt=None)})}, v),
        Case("validate-unknown-category", val, r"bad-task\.yaml:\d+: category",
             {"c": corpus_with({tasks: task(category="poetry")})}, v),
        Case("validate-two-gradings", val, r"bad-task\.yaml.*grading",
             {"c": corpus_with({tasks: task(grading={"answer": {"required": ["x"]},
                                                     "test": {"command": ["true"]}})})}, v),
        Case("validate-task-nul", val, r"bad-task\.yaml",
             {"c": corpus_with({tasks: "id: a\0b\n"})}, v),
        Case("validate-unknown-repo", val, r"bad-task\.yaml.*repo",
             {"c": corpus_with({tasks: task(repo="no-such-repo")})}, v),
        Case("validate-scripts-missing", ["validate", "--corpus", "{d}/c", "{d}/s.yaml"],
             r"scripts", {"c": corpus_with({}), "s.yaml": scenario(scripts="nowhere")}, v),
        Case("init-kind-unknown", ["init", "{d}/t", "--kind", "spell"], r"--kind"),
        Case("init-dir-a-file", ["init", "{d}/t", "--kind", "mcp"], r"t", {"t": "x"}),
        Case("schema-out-a-file", ["schema", "--out", "{d}/f"], r"f|--out", {"f": "x"}),
        Case("scripted-check-missing", ["scripted", "check", "{d}/none"], r"none"),
        Case("scripted-check-garbage", ["scripted", "check", "{d}/sc"], r"x\.yaml",
             {"sc/x.yaml": "version: 1\nscripts: 5\n"}),
        Case("eval-unknown-name", ["eval", "-n", "nope-name", "--corpus", "{d}/c"], r"nope",
             {"c": corpus_with({})}),
        Case("check-task-missing", ["check-task", "{d}/t.yaml", "--repo-dir", "{d}"],
             r"t\.yaml"),
        Case("check-task-not-a-task-file", ["check-task", "{d}/notes.txt", "--repo-dir", "{d}"],
             r"notes\.txt: a file that is no task file", {"notes.txt": "hello\n"}),
        Case("check-task-a-folder", ["check-task", "{d}/sub", "--repo-dir", "{d}"],
             r"sub: a folder", {"sub/x.txt": "x\n"}),
        Case("unknown-command", ["frobnicate"], r"frobnicate|invalid choice"),
    ]


CASES = scenario_cases() + flag_cases() + bundle_cases() + report_cases() + corpus_cases()


def _materialise(case: Case, where: Path) -> list[str]:
    where.mkdir(parents=True)
    for rel, content in case.files.items():
        path = where / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if callable(content):
            content(path)
        elif isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content)
    return [a.replace("{d}", str(where)) for a in case.argv]


@dataclass
class Outcome:
    code: int | None
    output: str
    seconds: float


def _run(case: Case, where: Path) -> Outcome:
    import time

    argv = _materialise(case, where)
    env = {k: v for k, v in os.environ.items() if k != "COPECA_SIGNING_KEY"}
    env["COPECA_CACHE_DIR"] = str(where / "cache")  # nothing is fetched before refusing
    start = time.monotonic()
    try:
        proc = subprocess.run([str(CLI), *argv], capture_output=True, timeout=TIMEOUT_S,
                              cwd=where, env=env, stdin=subprocess.DEVNULL, check=False)
    except subprocess.TimeoutExpired as exc:
        out = (exc.stdout or b"") + (exc.stderr or b"")
        return Outcome(None, out.decode(errors="replace"), time.monotonic() - start)
    output = (proc.stderr + proc.stdout).decode(errors="replace")
    return Outcome(proc.returncode, output, time.monotonic() - start)


@pytest.fixture(scope="module")
def outcomes(request: pytest.FixtureRequest,
             tmp_path_factory: pytest.TempPathFactory) -> dict[str, Outcome]:
    """The selected cases, run concurrently (COPECA_BAD_INPUT_WORKERS at once, default 3)."""
    root = tmp_path_factory.mktemp("bad-inputs")
    # Only this module's parametrised items: other modules name a parameter "case" too.
    chosen = {item.callspec.params["case"].id for item in request.session.items
              if item.module is request.module and hasattr(item, "callspec")
              and isinstance(item.callspec.params.get("case"), Case)}
    workers = int(os.environ.get("COPECA_BAD_INPUT_WORKERS", "3"))
    with concurrent.futures.ThreadPoolExecutor(workers) as pool:
        futures = {c.id: pool.submit(_run, c, root / c.id) for c in CASES if c.id in chosen}
        return {cid: f.result() for cid, f in futures.items()}


def test_there_are_at_least_100_distinct_bad_inputs() -> None:
    assert len(CASES) >= 100
    assert len({c.id for c in CASES}) == len(CASES)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_bad_input_gives_a_clear_error(case: Case, outcomes: dict[str, Outcome]) -> None:
    got = outcomes[case.id]
    if case.needs_cli and "not found in $COPECA_RUNNERS_BIN" in got.output:
        pytest.skip("the agent CLI is not installed (make node)")
    assert got.code is not None, f"hung past {TIMEOUT_S} s:\n{got.output[-2000:]}"
    assert "Traceback" not in got.output, got.output[-3000:]
    assert got.code in case.codes, f"exit {got.code}:\n{got.output[-2000:]}"
    assert re.search(case.expect, got.output, re.IGNORECASE | re.DOTALL), got.output[-2000:]
