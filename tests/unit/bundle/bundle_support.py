"""Helpers for the bundle tests (imported by name: a module called conftest would clash)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from copeca_action._util.scrub import Scrubber
from copeca_action.bundle import (
    BundleContents,
    RenderedReport,
    collect_environment,
    write_bundle,
)
from copeca_action.plan import RunPlan, build_plan
from copeca_action.records import RunRecord, Tokens
from copeca_action.scenario import Corpus, Scenario, Task, load_corpus, load_scenario

Build = Callable[..., Path]


@pytest.fixture(scope="session")
def demo(corpus_root: Path) -> tuple[Scenario, dict[str, Task], Path]:
    corpus = load_corpus(corpus_root).require_ok()
    path = corpus_root / "scenarios" / "demo.yaml"
    return load_scenario(path), corpus.tasks, path


@pytest.fixture(scope="session")
def plan(demo: tuple[Scenario, dict[str, Task], Path]) -> RunPlan:
    scenario, tasks, _ = demo
    return build_plan(scenario, tasks)


@pytest.fixture(scope="session")
def key() -> Ed25519PrivateKey:
    return Ed25519PrivateKey.generate()


def record_for(plan: RunPlan, index: int, batch: str = "a", **update: Any) -> RunRecord:
    run = plan.runs[index]
    fields: dict[str, Any] = dict(
        run_id=run.run_id, scenario=plan.scenario, task_id=run.task_id,
        task_hash=run.task_hash, arm=run.arm, model=run.model, runner=run.runner,
        cli_version="2.1.197", repetition=run.repetition, control=run.control,
        category=run.category, language=run.language, outcome="ok",
        correct=(int(run.run_id, 16) + len(batch)) % 3 != 0,
        tokens=Tokens(input=100 + int(run.run_id[:3], 16), output=50),
        cost_usd=int(run.run_id[:2], 16) / 1000, cost_source="computed", duration_s=1.5,
        run_dir=f"runs/{run.run_id}")
    fields.update(update)
    return RunRecord(**fields)


def run_files(record: RunRecord, batch: str = "a") -> dict[str, bytes]:
    lines = [{"type": "assistant", "batch": batch, "text": f"looking at {record.task_id}"},
             {"type": "result", "result": f"answer for {record.run_id}"}]
    return {"transcript.jsonl": b"".join(json.dumps(x).encode() + b"\n" for x in lines),
            "patch.diff": b"--- a/x\n+++ b/x\n", "eval.json": b'{"passed": true}\n'}


THRESHOLDS = {"alert": 0.05, "fail": 0.1}


def report_for(records: list[RunRecord], scenario_path: Path,
               thresholds: dict[str, float] | None = None) -> RenderedReport | None:
    """The report a writer puts in a bundle of these records (report.json, report.md and
    the signed summary), as `verify` recomputes it; None for records no report can be made
    of (a run id with two results: the tests of what verify finds in such bundles)."""
    from copeca_action.conclude import bundled_scenario, rendered_report
    from copeca_action.errors import ConfigError

    scenario = bundled_scenario(scenario_path.read_text(), thresholds or THRESHOLDS)
    try:
        return rendered_report(records, scenario)[1]
    except ConfigError:
        return None


def contents_for(plan: RunPlan, scenario_path: Path, batch: str = "a",
                 records: list[RunRecord] | None = None,
                 files: dict[str, dict[str, bytes]] | None = None) -> BundleContents:
    """A bundle's contents, with the report its records give (so it passes `verify`)."""
    records = records if records is not None else [
        record_for(plan, i, batch) for i in range(len(plan.runs))]
    files = files if files is not None else {r.run_id: run_files(r, batch) for r in records}
    return BundleContents(
        scenario_yaml=scenario_path.read_bytes(), plan=plan, records=records,
        environment=collect_environment(env={}).model_copy(update={  # this build's
            "cli_versions": {"claude": "2.1.197"}, "repo_commit": "a" * 40}),
        thresholds=THRESHOLDS, run_files=files, report=report_for(records, scenario_path))


@pytest.fixture
def build(tmp_path: Path, plan: RunPlan, demo: tuple[Scenario, dict[str, Task], Path],
          key: Ed25519PrivateKey) -> Build:
    """build(name, batch=..., key=..., contents=...) → the path of a written bundle."""
    def _build(name: str = "b.copeca", batch: str = "a", signed: bool = True,
               contents: BundleContents | None = None, the_plan: RunPlan | None = None,
               signing_key: Ed25519PrivateKey | None = None) -> Path:
        out = tmp_path / name
        contents = contents or contents_for(the_plan or plan, demo[2], batch)
        write_bundle(contents, out, (signing_key or key) if signed else None, Scrubber())
        return out
    return _build


def demo_plan(corpus_root: Path) -> tuple[Path, Scenario, Corpus, RunPlan]:
    """The bundled demo scenario's file, scenario, corpus and plan."""
    scenario_path = corpus_root / "scenarios" / "demo.yaml"
    scenario = load_scenario(scenario_path)
    corpus = load_corpus(corpus_root)
    return scenario_path, scenario, corpus, build_plan(scenario, corpus.tasks)
