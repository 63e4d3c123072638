"""Planted secrets against a real job: `copeca-action run` with the real Claude Code CLI, the
scripted model telling it to hunt for the harness's secrets (`env`, every /proc/*/environ,
the signing key file, each also base64- and hex-encoded), and a test grading that runs the
same hunt as the agent's "test". Afterwards, no file the job left (the output folder, every
run folder, the model request log, the bundle's members, the upload folder) holds any planted
value in any encoding the scrubber promises.

Two levels of proof: isolated, the agent printed the placeholder key it holds against the
scripted model (so the hunt ran) and never saw a harness secret or the real model key (no
redaction marker of theirs anywhere); with isolation turned off the hunt finds the harness's
secrets, and they are still scrubbed (so the hunt is able to find them, and the scrubber
catches them).
"""

from __future__ import annotations

import base64
import io
import json
import os
import secrets
import shutil
import subprocess
import sys
import urllib.parse
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from cryptography.hazmat.primitives import serialization

from copeca_action._util.paths import runners_dir
from copeca_action.agent import PLACEHOLDER_KEY
from copeca_action.agent._process import agent_isolation

ROOT = Path(__file__).resolve().parents[3]
CLAUDE = runners_dir() / "node_modules" / ".bin" / "claude"
CLI = Path(sys.executable).with_name("copeca-action")
pytestmark = [pytest.mark.cli, pytest.mark.skipif(not CLAUDE.exists(), reason=(
    "Claude Code is not installed (run `make node`)"))]


HOME_CREDENTIAL = ".m2/settings.xml"
"""A credential in the harness user's home that no list names (Maven's server passwords)."""


def hunt(key: Path, out: Path, home: Path) -> list[str]:
    """What an agent (or its test) tries, one shell command each."""
    return [
        f"ls -A {out} {out}/runs",
        f"cat {home}/{HOME_CREDENTIAL}",
        "env",
        "env | base64 -w0",
        "env | od -An -v -tx1 | tr -d ' \\n'",
        "for f in /proc/[0-9]*/environ; do tr '\\0' '\\n' < $f; done 2>/dev/null | sort -u",
        "for f in /proc/[0-9]*/environ; do base64 -w0 < $f; echo; done 2>/dev/null",
        f"cat {key}; base64 -w0 {key}; od -An -v -tx1 {key} | tr -d ' \\n'",
        "ls /proc; cat /proc/1/environ | tr '\\0' '\\n'",
    ]


def encodings_of(value: bytes) -> dict[str, bytes]:
    """Each encoding a leak could take (base64 cores at every offset, as the scrubber's)."""
    out = {"raw": value, "hex": value.hex().encode(), "HEX": value.hex().upper().encode(),
           "url": urllib.parse.quote(value, safe="").encode(),
           "json": json.dumps(value.decode("latin-1"))[1:-1].encode()}
    for pad in range(3):
        enc = base64.b64encode(b"\0" * pad + value + b"\0\0")
        core = enc[-(-8 * pad // 6):(8 * (pad + len(value))) // 6]
        out[f"b64+{pad}"] = core
        out[f"b64url+{pad}"] = core.replace(b"+", b"-").replace(b"/", b"_")
    return {k: v for k, v in out.items() if len(v) >= 12}


def files_left(out: Path) -> Iterator[tuple[str, bytes]]:
    """Every file under the output folder, and every member of every bundle in it."""
    for path in sorted(out.rglob("*")):
        if path.is_file() and not path.is_symlink():
            data = path.read_bytes()
            yield str(path.relative_to(out)), data
            if path.suffix == ".copeca":
                with zipfile.ZipFile(io.BytesIO(data)) as bundle:
                    for info in bundle.infolist():
                        yield f"{path.name}!{info.filename}", bundle.read(info)


def job(tmp: Path, isolation: str, model: str = "claude-sonnet-4-5",
        runner: str = "claude") -> dict[str, Any]:
    """One real `copeca-action run` with planted secrets; what it left, and the secrets."""
    corpus = tmp / "corpus"
    corpus.mkdir(parents=True)
    shutil.copy(ROOT / "corpus" / "repos.yaml", corpus / "repos.yaml")
    shutil.copytree(ROOT / "corpus" / "modes", corpus / "modes")
    subprocess.run([str(CLI), "keygen", "--out", str(tmp / "keys")], check=True,
                   capture_output=True, timeout=60)
    key = tmp / "keys" / "copeca-signing.key"
    out = tmp / "out"
    home = tmp / "harness-home"  # the harness user's, with a credential in it
    (home / HOME_CREDENTIAL).parent.mkdir(parents=True)
    home_secret = f"planted-home-credential-{secrets.token_hex(16)}"
    (home / HOME_CREDENTIAL).write_text(f"<password>{home_secret}</password>\n")
    commands = hunt(key, out, home)
    tasks = corpus / "tasks" / "fastapi"
    tasks.mkdir(parents=True)
    (tasks / "hunt-answer.yaml").write_text(yaml.safe_dump({
        "id": "fastapi/hunt-answer", "repo": "fastapi", "type": "comprehension",
        "category": "locate", "language": "python",
        "prompt": "SEALED-HUNT: which function builds the default operation id?",
        "source": {"origin": "original"},
        "grading": {"answer": {"required": ["generate_unique_id"]}}}))
    (tasks / "hunt-test.yaml").write_text(yaml.safe_dump({
        "id": "fastapi/hunt-test", "repo": "fastapi", "type": "edit", "category": "fix",
        "language": "python",
        "prompt": "SEALED-TEST: make the operation ids lowercase again.",
        "source": {"origin": "original"},
        "grading": {"test": {"command": ["sh", "-c", "; ".join(commands) + "; exit 0"],
                             "timeout_s": 120}}}))
    scripts = tmp / "scripts"
    scripts.mkdir()
    (scripts / "hunt.yaml").write_text(yaml.safe_dump({"version": 1, "scripts": [
        {"id": "hunt", "match": {"prompt_contains": "SEALED-HUNT"},
         "steps": [{"tools": [{"bash": c} for c in commands]},
                   {"answer": "It is generate_unique_id in fastapi/utils.py."}]},
        {"id": "test", "match": {"prompt_contains": "SEALED-TEST"},
         # a change to grade: edit tasks are graded on a clean checkout plus the agent's
         # diff, so an agent that changed nothing is never run (docs/patch-evaluation.md)
         "steps": [{"tools": [{"bash": commands[1]},
                              {"bash": "echo '# sealed' >> fastapi/__init__.py"}]},
                   {"answer": "Done."}]}]}))
    scenario = tmp / "scenario.yaml"
    scenario.write_text(yaml.safe_dump({
        "name": "sealed", "tasks": {"include": ["fastapi/hunt-*"]}, "modes": ["baseline"],
        "models": [model], "model_runner_map": {model: runner},
        "repetitions": 1, "timeout_s": 120, "max_turns": 6, "workers": 2, "seed": 3,
        "model_endpoint": "scripted", "scripts": "scripts"}))
    planted = {
        "ANTHROPIC_API_KEY": f"planted-model-key-{secrets.token_hex(16)}",
        "OPENAI_API_KEY": f"planted-openai-key-{secrets.token_hex(16)}",
        "GITHUB_TOKEN": f"planted-gh-token-{secrets.token_hex(16)}",
        "INPUT_GITHUB_TOKEN": f"planted-input-token-{secrets.token_hex(16)}",
        "INPUT_SIGNING_KEY": f"planted-input-signing-{secrets.token_hex(16)}",
        "ACTIONS_RUNTIME_TOKEN": f"planted-runtime-{secrets.token_hex(16)}",
        "MY_MARKED_VALUE": f"planted-user-marked-{secrets.token_hex(16)}",
    }
    env = {**os.environ, **planted, "COPECA_SCRUB_VARS": "MY_MARKED_VALUE",
           "COPECA_AGENT_ISOLATION": isolation, "HOME": str(home)}
    env.pop("COPECA_SIGNING_KEY", None)
    proc = subprocess.run([str(CLI), "run", str(scenario), "--out", str(out), "--key",
                           str(key), "--corpus", str(corpus), "--plain"],
                          env=env, capture_output=True, text=True, timeout=900, check=False)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    pem = key.read_bytes()
    private = serialization.load_pem_private_key(pem, password=None)
    values: dict[str, bytes] = {name: v.encode() for name, v in planted.items()}
    values["signing_key.pem"] = pem.strip()
    for n, line in enumerate(pem.splitlines()):
        if not line.startswith(b"-----"):
            values[f"signing_key.line{n}"] = line
    values["signing_key.der"] = private.private_bytes(
        serialization.Encoding.DER, serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption())
    values["signing_key.raw"] = private.private_bytes(  # type: ignore[union-attr]
        serialization.Encoding.Raw, serialization.PrivateFormat.Raw,
        serialization.NoEncryption())
    left = dict(files_left(out))
    report = json.loads((out / "report.json").read_text())
    return {"values": values, "left": left, "report": report, "out": out,
            "stdout": proc.stdout + proc.stderr, "home_secret": home_secret}


def leaks(result: dict[str, Any]) -> list[str]:
    found = []
    for name, value in result["values"].items():
        for enc, needle in encodings_of(value).items():
            for path, data in result["left"].items():
                if needle in data:
                    found.append(f"{name} ({enc}) in {path}")
    return found


def markers(result: dict[str, Any], rule: str) -> int:
    needle = f"[REDACTED:{rule}]".encode()
    return sum(data.count(needle) for path, data in result["left"].items()
               if "!" not in path)  # files on disk (the bundle repeats them)


def harness_files_seen(result: dict[str, Any]) -> list[str]:
    """What the hunting agent's commands showed of the job (its files, the other run's
    folder) and of the harness user's home (the credential in it); the commands themselves
    name none of these."""
    records = [json.loads(line) for line in
               (result["out"] / "results.jsonl").read_text().splitlines()]
    hunter = next(r for r in records if r["task_id"] == "fastapi/hunt-answer")
    other = next(r for r in records if r["task_id"] == "fastapi/hunt-test")
    seen = (result["out"] / hunter["run_dir"] / "stdout.jsonl").read_text()
    return [name for name in ("plan.json", "scenario.yaml", "results.jsonl",
                              "model-requests.jsonl", other["run_id"],
                              result["home_secret"]) if name in seen]


CLIS = {"claude": ("claude-sonnet-4-5", "env:ANTHROPIC_API_KEY"),
        "codex": ("gpt-5", "env:OPENAI_API_KEY")}


@pytest.fixture(scope="module", params=sorted(CLIS))
def isolated(request: pytest.FixtureRequest,
             tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    if not agent_isolation()[1]:
        pytest.skip("neither bwrap nor unshare can make a pid namespace here")
    runner = request.param
    if not (runners_dir() / "node_modules" / ".bin" / runner).exists():
        pytest.skip(f"{runner} is not installed (run `make node`)")
    model, key_rule = CLIS[runner]
    result = job(tmp_path_factory.mktemp(f"sealed-{runner}"), "auto", model, runner)
    result["key_rule"] = key_rule
    result["isolation"] = agent_isolation()[1]
    return result


def test_no_planted_secret_in_any_file_the_job_left(isolated: dict[str, Any]) -> None:
    assert len(isolated["left"]) > 20 and any(p.endswith(".copeca") for p in isolated["left"])
    assert leaks(isolated) == []


def test_the_hunt_ran_and_the_agent_held_only_the_placeholder_key(
        isolated: dict[str, Any]) -> None:
    """Against the scripted model the agent gets the placeholder key, never the job's real
    one (it needs none): its `env` printed the placeholder (so the hunt ran), and no marker
    of the real model key is anywhere (it never saw it). The scrubber's catch is proved by
    the control below, where the hunt finds the harness's own secrets."""
    printed = [path for path, data in isolated["left"].items()
               if "!" not in path and PLACEHOLDER_KEY.encode() in data]
    assert any(path.endswith("stdout.jsonl") for path in printed), printed
    assert markers(isolated, isolated["key_rule"]) == 0


def test_the_isolated_agent_never_saw_a_harness_secret(isolated: dict[str, Any]) -> None:
    for rule in ("env:GITHUB_TOKEN", "env:INPUT_GITHUB_TOKEN", "env:INPUT_SIGNING_KEY",
                 "env:ACTIONS_RUNTIME_TOKEN", "env:MY_MARKED_VALUE"):
        assert markers(isolated, rule) == 0, rule
    assert not any(markers(isolated, r) for r in ("secret:signing_key", "private_key"))
    records = [json.loads(line) for line in
               (isolated["out"] / "results.jsonl").read_text().splitlines()]
    test_run = next(r for r in records if r["task_id"] == "fastapi/hunt-test")
    assert {"ro-host", "keys-hidden", "private-hidden"} <= set(test_run["grading"]["isolation"])
    assert all("agent_not_isolated" not in r["flags"] for r in records)


def test_the_isolated_agent_sees_no_other_run_nor_the_harness_home(
        isolated: dict[str, Any]) -> None:
    """Both runs ran at once (2 workers): the agent's `ls` of the output folder found it
    blank but for its own run, and the harness user's home blank (the control below shows
    the same commands finding them)."""
    if isolated["isolation"][:1] != ["bwrap"]:
        pytest.skip("only bubblewrap can hide the output folder")
    assert harness_files_seen(isolated) == []


def test_the_upload_holds_only_what_a_user_needs(isolated: dict[str, Any]) -> None:
    """The CLI writes no upload folder; the run folders stay on the runner (the action
    uploads `upload/` only: tests/unit/github/test_action_e2e.py)."""
    assert not (isolated["out"] / "upload").exists()


def test_without_isolation_the_hunt_finds_the_harness_and_is_still_scrubbed(
        tmp_path: Path) -> None:
    """The control: the same hunt with isolation off reads the harness's /proc environ (so the
    hunt can find what it looks for); scrubbing still leaves no value in any file."""
    result = job(tmp_path, "none")
    assert markers(result, "env:GITHUB_TOKEN") > 0
    assert {"plan.json", "scenario.yaml", result["home_secret"]} <= set(
        harness_files_seen(result))
    assert leaks(result) == []
    records = [json.loads(line) for line in
               (result["out"] / "results.jsonl").read_text().splitlines()]
    assert all("agent_not_isolated" in r["flags"] for r in records)
