"""Fixtures for the GitHub layer: the fake API, real webhook payloads, an Actions env."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from fake_github import SPEC_PATH, FakeGitHub
from gh_support import TOKEN

if not SPEC_PATH.is_file():  # pragma: no cover - the contracts live beside the repo
    pytest.skip(f"GitHub contracts not found at {SPEC_PATH} (set COPECA_CONTRACTS)",
                allow_module_level=True)


@pytest.fixture
def fake_github() -> Iterator[FakeGitHub]:
    with FakeGitHub() as fake:
        yield fake
        assert fake.violations == [], "\n".join(fake.violations)


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
            # github-token left at its default, the workflow's token (action.yml compares)
            "COPECA_WORKFLOW_TOKEN": "true",
        }
        for key, value in inputs.items():
            env[f"INPUT_{key.upper()}"] = value
        return env

    return make
