"""Whatever JSON a client sends, reading the request never raises and the server answers."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from copeca_action.scripted import Script, ScriptedServer
from copeca_action.scripted._request import view_anthropic, view_openai
from tests.unit.scripted.wire import post

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner,
                                                                max_size=4),
    max_leaves=20)
keys = st.sampled_from(["model", "messages", "system", "tools", "input", "instructions",
                        "stream", "content", "role", "type", "text", "name", "id", "call_id"])
bodies = st.dictionaries(keys, json_values, max_size=6)


@given(bodies)
@settings(max_examples=100, deadline=None)
def test_views_never_raise(body: dict[str, Any]) -> None:
    for view in (view_anthropic(body, 10), view_openai(body, 10)):
        assert isinstance(view.prompt, str) and isinstance(view.tools, list)


CATCH_ALL = Script.model_validate({"id": "any", "match": {}, "steps": [{"answer": "ok"}]})


@pytest.fixture(scope="module")
def server() -> Iterator[ScriptedServer]:
    with ScriptedServer([CATCH_ALL]) as srv:
        yield srv


@given(bodies)
@settings(max_examples=40, deadline=None)
def test_server_answers_any_body(server: ScriptedServer, body: dict[str, Any]) -> None:
    for path in ("/v1/messages", "/v1/responses"):
        assert post(server.url, path, body).status in (200, 400)
