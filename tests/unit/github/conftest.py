"""Fixtures for the GitHub layer: the fake API, real webhook payloads, an Actions env."""

from __future__ import annotations

import copy
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from fake_github import PAYLOADS, SPEC_PATH, FakeGitHub

TOKEN = "test-token-123"

if not SPEC_PATH.is_file():  # pragma: no cover - the contracts live beside the repo
    pytest.skip(f"GitHub contracts not found at {SPEC_PATH} (set COPECA_CONTRACTS)",
                allow_module_level=True)


@pytest.fixture
def fake_github() -> Iterator[FakeGitHub]:
    with FakeGitHub() as fake:
        yield fake
        assert fake.violations == [], "\n".join(fake.violations)


def payload(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((PAYLOADS / f"{name}.json").read_text())
    return data


def fork_payload() -> dict[str, Any]:
    """pull_request.opened from a fork: the head repo is someone else's (contracts README)."""
    data = copy.deepcopy(payload("pull_request.opened"))
    head = data["pull_request"]["head"]
    head["repo"]["full_name"] = "mallory/Hello-World"
    head["repo"]["name"] = "Hello-World"
    head["repo"]["owner"]["login"] = "mallory"
    head["repo"]["fork"] = True
    head["label"] = "mallory:changes"
    return data


def parse_outputs(path: Path) -> dict[str, str]:
    """Read a $GITHUB_OUTPUT file the way the runner does (name<<DELIM blocks)."""
    out: dict[str, str] = {}
    lines = path.read_text().split("\n")
    i = 0
    while i < len(lines):
        line = lines[i]
        if "<<" in line:
            name, delim = line.split("<<", 1)
            end = lines.index(delim, i + 1)
            out[name] = "\n".join(lines[i + 1:end])
            i = end + 1
        elif "=" in line:
            name, value = line.split("=", 1)
            out[name] = value
            i += 1
        else:
            i += 1
    return out


@pytest.fixture
def actions_env(tmp_path: Path) -> Any:
    """A factory for the env of an Actions step: event payload written, files created."""

    def make(event: str, data: dict[str, Any], api_url: str = "", **inputs: str
             ) -> dict[str, str]:
        event_path = tmp_path / "event.json"
        event_path.write_text(json.dumps(data))
        (tmp_path / "ws").mkdir(exist_ok=True)
        env = {
            "GITHUB_ACTIONS": "true", "GITHUB_EVENT_NAME": event,
            "GITHUB_EVENT_PATH": str(event_path), "GITHUB_WORKSPACE": str(tmp_path / "ws"),
            "GITHUB_OUTPUT": str(tmp_path / "output"),
            "GITHUB_STEP_SUMMARY": str(tmp_path / "summary.md"),
            "GITHUB_REPOSITORY": "Codertocat/Hello-World", "GITHUB_RUN_ID": "4242",
            "GITHUB_SERVER_URL": "https://github.com", "GITHUB_API_URL": api_url,
            "INPUT_SCENARIO": "benchmark/scenarios/pr.yaml", "INPUT_GITHUB_TOKEN": TOKEN,
            "INPUT_ANTHROPIC_API_KEY": "sk-ant-test",
        }
        for key, value in inputs.items():
            env[f"INPUT_{key.upper()}"] = value
        return env

    return make
