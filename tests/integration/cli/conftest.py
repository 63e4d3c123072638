from __future__ import annotations

from collections.abc import Iterator

import pytest

from copeca_action.scripted import ScriptedServer

from .harness import SCRIPTS


@pytest.fixture(scope="module")
def server() -> Iterator[ScriptedServer]:
    with ScriptedServer(SCRIPTS, seed=11) as srv:
        yield srv
