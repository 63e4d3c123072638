"""Fixtures: a snapshot cache holding the real fastapi 0.115.6 sdist, and a small git origin."""

from __future__ import annotations

from pathlib import Path

import pytest
from workspace_helpers import make_origin

from copeca_action.scenario import load_repos
from copeca_action.workspace import Snapshot, SnapshotStore


@pytest.fixture(scope="session")
def fastapi_store(tmp_path_factory: pytest.TempPathFactory, corpus_root: Path) -> SnapshotStore:
    repos = load_repos(corpus_root / "repos.yaml")
    return SnapshotStore(tmp_path_factory.mktemp("cache"), repos)


@pytest.fixture(scope="session")
def fastapi_snapshot(fastapi_store: SnapshotStore) -> Snapshot:
    return fastapi_store.fetch("fastapi", network=False)


@pytest.fixture()
def origin_repo(tmp_path: Path) -> tuple[Path, list[str]]:
    repo = tmp_path / "origin"
    return repo, make_origin(repo)
