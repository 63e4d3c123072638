"""Public packages export what they define in __all__, sorted the way ruff keeps it."""

from __future__ import annotations

import importlib

import pytest

PACKAGES = ["copeca_action", "copeca_action.scenario", "copeca_action.plan",
            "copeca_action.records", "copeca_action.transcript"]


@pytest.mark.parametrize("name", PACKAGES)
def test_all_is_complete_and_sorted(name: str) -> None:
    module = importlib.import_module(name)
    exported = module.__all__
    # isort style, as ruff's RUF022 keeps it: CONSTANTS, then Classes, then functions
    assert exported == sorted(exported, key=lambda s: (not s.isupper(), not s[:1].isupper(), s))
    public = {k for k, v in vars(module).items()
              if not k.startswith("_") and not isinstance(v, type(importlib))}
    assert public - {"annotations"} <= set(exported) | {"__version__"}
    for item in exported:
        assert hasattr(module, item), item
