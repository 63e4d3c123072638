"""Builds a throwaway corpus (git origin, tasks, modes, a fake runner) for scheduler tests."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import yaml
from workspace_helpers import make_origin

from copeca_action.engine import EngineConfig, OutputDir
from copeca_action.scenario import Scenario, load_corpus
from copeca_action.workspace import SnapshotStore

FAKE_AGENT = Path(__file__).with_name("fake_agent.py")


def fake(**spec: Any) -> str:
    """A prompt the fake agent obeys."""
    return "Answer the question. FAKE" + json.dumps(spec)


def price(input: float, output: float, cache_read: float | None = 0.0,
          cache_write_5m: float | None = 0.0,
          cache_write_1h: float | None = None) -> dict[str, Any]:
    """A complete price-table entry (every field is required)."""
    return {"input": input, "output": output, "cache_read": cache_read,
            "cache_write_5m": cache_write_5m, "cache_write_1h": cache_write_1h,
            "source": "https://example.invalid/prices", "checked": "2026-11-01"}


def write(path: Path, data: Any) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def make_corpus(root: Path, tasks: dict[str, dict[str, Any]],
                modes: dict[str, dict[str, Any]] | None = None) -> Path:
    """root/corpus (repos, tasks, modes) + root/runners/fake.yaml; returns the corpus dir."""
    origin = root / "origin"
    commit = make_origin(origin)[1]
    corpus = root / "corpus"
    write(corpus / "repos.yaml", {"repos": {"app": {
        "language": "python", "git": {"url": str(origin), "commit": commit}}}})
    for name, body in tasks.items():
        task: dict[str, Any] = {"id": f"app/{name}", "repo": "app", "type": "comprehension",
                                "category": "locate", "language": "python",
                                "source": {"origin": "original"},
                                "grading": {"answer": {"required": ["42"]}}}
        task.update(body)
        write(corpus / "tasks" / "app" / f"{name}.yaml", task)
    write(corpus / "modes" / "baseline.yaml", {"name": "baseline"})
    for name, body in (modes or {}).items():
        write(corpus / "modes" / f"{name}.yaml", {"name": name, **body})
    script = root / "runners" / "fake-agent"
    script.parent.mkdir(parents=True, exist_ok=True)
    script.write_text(f"#!{sys.executable}\n" + FAKE_AGENT.read_text())
    script.chmod(0o755)
    write(root / "runners" / "fake.yaml", {
        "name": "fake", "binary": str(script), "argv": ["-p", "{prompt}"],
        "model_args": ["--model", "{model}"], "config_dir_env": "FAKE_CONFIG_DIR",
        "parser": "stream_json", "vendor_cost": True, "cost_headline": "vendor",
        "pricing_updated": "2026-11-01",
        "pricing": {"fake-model": price(1.0, 2.0)}})
    return corpus


def scenario(**overrides: Any) -> Scenario:
    data: dict[str, Any] = {"name": "t", "tasks": {"include": ["app/*"]},
                            "modes": ["baseline"], "models": ["fake-model"],
                            "model_runner_map": {"fake-model": "fake"}, "repetitions": 1,
                            "timeout_s": 30, "workers": 2}
    data.update(overrides)
    return Scenario.model_validate(data)


def config(root: Path, corpus_dir: Path, sc: Scenario, out: str = "out") -> EngineConfig:
    corpus = load_corpus(corpus_dir).require_ok()
    store = SnapshotStore(root / "cache", corpus.repos)
    store.fetch("app")
    return EngineConfig(scenario=sc, corpus=corpus, out=OutputDir(root / out), store=store,
                        host_env={"PATH": "/usr/bin:/bin"})
