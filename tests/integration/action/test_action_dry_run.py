"""The entrypoint end to end in dry-run mode: a real webhook payload, the real agent CLIs
against the scripted model on the fastapi snapshot, the real report and signed bundle, and
the contract-checking fake GitHub API receiving the comment."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from copeca_action._util.paths import runners_dir

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "unit" / "github"))
from fake_github import SPEC_PATH, FakeGitHub
from gh_support import TOKEN, parse_outputs, payload

from copeca_action.bundle import keyid_of, verify_bundle
from copeca_action.github import OUTPUT_NAMES, RetryPolicy, main, marker, run_engine
from copeca_action.report import Report

BIN = runners_dir() / "node_modules" / ".bin"
pytestmark = [
    pytest.mark.cli,
    pytest.mark.skipif(not (BIN / "claude").exists(),
                       reason="Claude Code is not installed (run `make node`)"),
    pytest.mark.skipif(not SPEC_PATH.is_file(),
                       reason=f"GitHub contracts not found at {SPEC_PATH}"),
]

KEY = ("Codertocat", "Hello-World", 2)
# The demo, reduced for speed: two tasks (one control), Claude Code only, vendor endpoint
# (dry-run switches it to the scripted model).
SCENARIO = """\
name: pr-dry
tasks:
  include: ["fastapi/locate-unique-id", "fastapi/control-prompt-words"]
modes: [baseline, codesearch]
models: [claude-sonnet-4-5]
model_runner_map:
  claude-sonnet-4-5: claude
repetitions: 2
budget_usd: 5.0
timeout_s: 300
max_turns: 20
workers: 2
seed: 7
thresholds:
  alert: 0.05
  fail: 0.10
  control_tolerance: 0.15
  min_runs: 2
"""


def _env(tmp_path: Path, api_url: str, key_pem: str) -> dict[str, str]:
    ws = tmp_path / "ws"
    (ws / "benchmark").mkdir(parents=True)
    (ws / "benchmark" / "pr.yaml").write_text(SCENARIO)
    return _runner_env(tmp_path, ws, payload("pull_request.opened"), api_url) | {
        "INPUT_SCENARIO": "benchmark/pr.yaml", "INPUT_GITHUB_TOKEN": TOKEN,
        "INPUT_DRY_RUN": "true", "INPUT_FAIL_ON": "never", "INPUT_SIGNING_KEY": key_pem,
        "INPUT_ALERT_THRESHOLD": "4%",
    }


def _runner_env(tmp_path: Path, ws: Path, event: dict[str, object],
                api_url: str | None = None) -> dict[str, str]:
    """What the runner sets for a pull_request job in workspace `ws` (its event written
    beside it); no inputs."""
    path = tmp_path / "event.json"
    path.write_text(json.dumps(event))
    env = {
        "GITHUB_ACTIONS": "true", "GITHUB_EVENT_NAME": "pull_request",
        "GITHUB_EVENT_PATH": str(path), "GITHUB_WORKSPACE": str(ws),
        "GITHUB_OUTPUT": str(tmp_path / "output"),
        "GITHUB_STEP_SUMMARY": str(tmp_path / "summary.md"),
        "GITHUB_REPOSITORY": "Codertocat/Hello-World", "GITHUB_RUN_ID": "4242",
    }
    if api_url is not None:
        env |= {"GITHUB_SERVER_URL": "https://github.com", "GITHUB_API_URL": api_url}
    return env


def test_dry_run_comments_the_real_report_and_writes_a_verified_bundle(
        tmp_path: Path) -> None:
    key = Ed25519PrivateKey.generate()
    pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                            serialization.NoEncryption()).decode()
    with FakeGitHub() as fake:
        env = _env(tmp_path, fake.url, pem)
        code = main(env, run_engine, policy=RetryPolicy(attempts=2, backoff_s=0.01),
                    sleep=lambda _: None)
        assert fake.violations == [], "\n".join(fake.violations)
        comments = fake.comments[KEY]
    assert code == 0
    out = parse_outputs(Path(env["GITHUB_OUTPUT"]))
    assert set(OUTPUT_NAMES) <= set(out)
    report = Report.model_validate_json(Path(out["report-path"]).read_text())
    head = report.headline_comparison
    assert head is not None and report.records == 8
    assert report.thresholds.alert == 0.04  # the input overrides the scenario
    assert out["verdict"] == report.verdict
    assert out["delta"] == f"{head.delta.estimate:.6g}"
    assert head.overall is not None  # one population: the headline's, as in the comment
    assert out["cpc-tool"] == f"{head.overall.cpc_tool:.6g}"
    assert report.simulated and report.endpoints == {"dry_run": 8}
    assert out["simulated"] == "true"

    assert len(comments) == 1
    body = comments[0]["body"]
    (tmp_path / "comment.md").write_text(body)  # kept for a look at a failure
    assert body.startswith(marker("copeca"))
    assert out["comment-url"] == comments[0]["html_url"]
    assert report.verdict in body and "vs baseline" in body
    assert f"{head.delta.estimate * 100:+.1f}%".replace("-", "−") in body
    assert "**Control**" in body  # the control task's row
    assert "fastapi/locate-unique-id" in body.replace("\u200b", "")
    assert "seed 7" in body and out["bundle-sha256"] in body
    # the first screen, before anything folded: verdict, banner, trust warnings, the table
    first = body.split("<details>")[0]
    assert f"copeca-action: {report.verdict}" in first
    assert "**Simulated.**" in first and "(a dry run)" in first
    assert "> [!WARNING]" in first and "only 1 tasks" in first.replace("&#8203;", "")
    assert "| Metric | Baseline | Tool |" in first and "| Turns per run |" in first
    assert first.index("Simulated") < first.index("[!WARNING]") < first.index("| Metric")
    assert "**This run**" in first
    assert keyid_of(key.public_key()) in body

    bundle = Path(out["bundle-path"])
    verified = verify_bundle(bundle, key.public_key())
    assert verified.keyid == keyid_of(key.public_key())
    summary = verified.statement.predicate.summary
    assert summary is not None and summary.verdict == report.verdict
    badge = json.loads(Path(out["badge-path"]).read_text())
    assert set(badge) == {"schemaVersion", "label", "message", "color", "labelColor"}
    assert badge["label"] == "simulated cost per correct"
    summary_md = Path(env["GITHUB_STEP_SUMMARY"]).read_text()
    assert report.verdict in summary_md and "The full report (report.md)" in summary_md
    assert "Simulated" in Path(out["report-path"]).with_name("report.md").read_text()
    assert "Simulated" in Path(out["report-path"]).with_name("report.html").read_text()


def test_dry_run_compare_both_runs_the_base_arm_from_a_worktree_of_the_base(
        tmp_path: Path) -> None:
    """compare: both on a tool checkout with a base and a head commit: three arms, the
    `@base` arm from a worktree of the PR's base commit (removed afterwards)."""
    env = _env(tmp_path, "", "")
    ws = Path(env["GITHUB_WORKSPACE"])
    git = ["git", "-C", str(ws), "-c", "user.name=t", "-c", "user.email=t@example.com"]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "."], check=True)
    subprocess.run([*git, "commit", "-qm", "base"], check=True)
    base = subprocess.run([*git, "rev-parse", "HEAD"], check=True, capture_output=True,
                          text=True).stdout.strip()
    (ws / "tool.txt").write_text("head\n")
    subprocess.run([*git, "add", "."], check=True)
    subprocess.run([*git, "commit", "-qm", "head"], check=True)
    event = json.loads(Path(env["GITHUB_EVENT_PATH"]).read_text())
    event["pull_request"]["base"]["sha"] = base
    Path(env["GITHUB_EVENT_PATH"]).write_text(json.dumps(event))
    env.update(INPUT_COMPARE="both", INPUT_COMMENT="never", INPUT_SIGNING_KEY="")
    assert main(env, run_engine) == 0
    out = parse_outputs(Path(env["GITHUB_OUTPUT"]))
    report = Report.model_validate_json(Path(out["report-path"]).read_text())
    assert sorted(a.arm for a in report.arms) == ["baseline", "codesearch", "codesearch@base"]
    assert report.records == 12 and len(report.comparisons) >= 2
    worktrees = subprocess.run([*git, "worktree", "list"], check=True, capture_output=True,
                               text=True).stdout
    assert len(worktrees.splitlines()) == 1
    assert "unsigned" in Path(env["GITHUB_STEP_SUMMARY"]).read_text()


def test_push_to_main_with_compare_both_records_a_baseline_comparison(tmp_path: Path) -> None:
    """One workflow on `pull_request` and `push` with `compare: both`: the push to main (the
    run that records the history) has no base, and stopped with exit 2 before; it compares
    with the baseline, as the trigger table says, and the comment and summary say so."""
    env = _env(tmp_path, "", "")
    data = payload("push")  # the real payload, made a push to the default branch
    data["ref"], data["repository"]["default_branch"] = "refs/heads/main", "main"
    data["after"] = "c" * 40
    Path(env["GITHUB_EVENT_PATH"]).write_text(json.dumps(data))
    env.update(GITHUB_EVENT_NAME="push", INPUT_COMPARE="both", INPUT_SIGNING_KEY="",
               INPUT_HISTORY="never")
    assert main(env, run_engine) == 0
    out = parse_outputs(Path(env["GITHUB_OUTPUT"]))
    report = Report.model_validate_json(Path(out["report-path"]).read_text())
    assert sorted(a.arm for a in report.arms) == ["baseline", "codesearch"]
    assert report.headline_comparison is not None
    assert report.headline_comparison.base == "baseline"
    assert out["verdict"] == report.verdict and out["delta"] != ""
    summary = Path(env["GITHUB_STEP_SUMMARY"]).read_text().replace("&#8203;", "")
    assert "compare: both needs a pull request&#39;s base, and a push event has none" in summary


def test_dry_run_rerun_with_reuse_copies_every_unchanged_run(tmp_path: Path) -> None:
    """The real CLI twice: the second job gets the first job's signed bundle as `reuse`;
    nothing changed (same probed Claude Code version, runner, modes, tasks, scripts), so every
    run is copied, none is run, and the new bundle verifies on its own."""
    key = Ed25519PrivateKey.generate()
    pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                            serialization.NoEncryption()).decode()
    env = _env(tmp_path, "", pem)
    env["INPUT_COMMENT"] = "never"
    assert main(env, run_engine) == 0
    first = Path(parse_outputs(Path(env["GITHUB_OUTPUT"]))["bundle-path"])
    ws = Path(env["GITHUB_WORKSPACE"])
    (ws / "previous").mkdir()
    (ws / "previous" / first.name).write_bytes(first.read_bytes())
    for child in first.parent.iterdir():  # the next job starts from a fresh output folder
        if child.is_file():
            child.unlink()
        else:
            shutil.rmtree(child)
    Path(env["GITHUB_OUTPUT"]).unlink()
    env["INPUT_REUSE"] = "previous/*.copeca"
    assert main(env, run_engine) == 0
    out = parse_outputs(Path(env["GITHUB_OUTPUT"]))
    verified = verify_bundle(Path(out["bundle-path"]), key.public_key())
    assert len(verified.records) == 8
    assert all(r.reused_from and r.fingerprint for r in verified.records)
    assert not (Path(out["bundle-path"]).parent / "model-requests.jsonl").is_file() or \
        not (Path(out["bundle-path"]).parent / "model-requests.jsonl").read_text().strip()
    report = Report.model_validate_json(Path(out["report-path"]).read_text())
    assert any("8 of 8 run(s) reused" in w for w in report.warnings)


def test_the_actions_dry_run_plays_the_users_own_scripts_through_their_tool(
        tmp_path: Path) -> None:
    """A repository made by `copeca-action init --kind mcp` and the action with `dry-run:
    true`: the benchmark's own scripts drive the real Claude Code through the user's MCP
    server (not the bundled demo's scripts), every tool-arm run adopts it, the verdict is
    decided and commented on the PR, and the check run goes in_progress → completed."""
    from copeca_action.github._scaffold import scaffold

    ws = tmp_path / "ws"
    scaffold(ws, "mcp", name="my-tool")
    with FakeGitHub() as fake:
        env = _runner_env(tmp_path, ws, payload("pull_request.opened"), fake.url) | {
            "INPUT_SCENARIO": "benchmark/scenarios/pr.yaml", "INPUT_TOOL_DIR": ".",
            "INPUT_GITHUB_TOKEN": TOKEN, "INPUT_DRY_RUN": "true", "INPUT_FAIL_ON": "never",
            "INPUT_CHECK_RUN": "true", "INPUT_OUTPUT_DIR": "out",
        }
        code = main(env, run_engine, policy=RetryPolicy(attempts=2, backoff_s=0.01),
                    sleep=lambda _: None)
        assert fake.violations == [], "\n".join(fake.violations)
        comments = fake.comments[KEY]
        checks = fake.check_runs
    assert code == 0
    out = parse_outputs(Path(env["GITHUB_OUTPUT"]))
    report = Report.model_validate_json(Path(out["report-path"]).read_text())
    assert report.verdict in ("improvement", "regression")
    requests = [json.loads(line) for line in
                (ws / "out" / "model-requests.jsonl").read_text().splitlines()]
    played = {r["script"] for r in requests if r.get("script")}
    assert "fastapi/locate-unique-id/my-tool" in played  # the user's script, not codesearch
    assert not any("codesearch" in s for s in played)
    tool_runs = [a for a in report.arms if a.arm == "my-tool"]
    assert tool_runs and len(comments) == 1 and report.verdict in comments[0]["body"]
    [check] = checks
    assert check["history"] == ["in_progress", "completed"]


def test_the_pull_request_that_adds_the_tool_with_compare_base_ref_says_why_it_cannot_run(
        tmp_path: Path) -> None:
    """The first pull request: it adds `copeca-action init`'s benchmark and stand-in tool, and
    the workflow says `compare: base-ref`. The base commit has no tool, so the `@base` arm's
    wrapper is missing: stopped before any run (exit 2), and the error says that this is the
    base commit's arm and what to do, rather than only naming a path in a temp folder."""
    from copeca_action.github._scaffold import scaffold

    ws = tmp_path / "ws"
    ws.mkdir()
    git = ["git", "-C", str(ws), "-c", "user.name=t", "-c", "user.email=t@example.com"]
    (ws / "README.md").write_text("a project\n")
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "."], check=True)
    subprocess.run([*git, "commit", "-qm", "base"], check=True)
    base = subprocess.run([*git, "rev-parse", "HEAD"], check=True, capture_output=True,
                          text=True).stdout.strip()
    scaffold(ws, "wrapper", name="my-tool")
    subprocess.run([*git, "add", "."], check=True)
    subprocess.run([*git, "commit", "-qm", "add copeca-action"], check=True)
    data = payload("pull_request.opened")
    data["pull_request"]["base"]["sha"] = base
    env = _runner_env(tmp_path, ws, data) | {
        "INPUT_SCENARIO": "benchmark/scenarios/pr.yaml", "INPUT_TOOL_DIR": ".",
        "INPUT_DRY_RUN": "true", "INPUT_COMPARE": "base-ref", "INPUT_COMMENT": "never",
    }
    assert main(env, run_engine) == 2
    summary = Path(env["GITHUB_STEP_SUMMARY"]).read_text()
    assert "copeca-action failed" in summary and "nothing was run" in summary
    assert "'my-tool@base' is the tool at the comparison's base commit" in summary
    assert "compare: baseline" in summary
    assert not (ws / ".copeca" / "results.jsonl").exists()
