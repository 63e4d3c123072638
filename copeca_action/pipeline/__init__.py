"""The run pipeline (prepare → execute → conclude), shared by the CLI and the GitHub layer."""

import importlib as _importlib
import typing as _typing

if _typing.TYPE_CHECKING:
    from copeca_action.pipeline._pipeline import (
        Prepared,
        conclude_prepared,
        execute,
        model_endpoint,
        prepare_scenario,
        reuse_offer,
    )

__all__ = [
    "Prepared",
    "conclude_prepared",
    "execute",
    "model_endpoint",
    "prepare_scenario",
    "reuse_offer",
]

_LAZY: dict[str, str] = {
    "Prepared": "copeca_action.pipeline._pipeline",
    "conclude_prepared": "copeca_action.pipeline._pipeline",
    "execute": "copeca_action.pipeline._pipeline",
    "model_endpoint": "copeca_action.pipeline._pipeline",
    "prepare_scenario": "copeca_action.pipeline._pipeline",
    "reuse_offer": "copeca_action.pipeline._pipeline",
}
"""Each public name and its module, imported on first use (PEP 562): importing one
submodule of this package does not load the others."""


def __getattr__(name: str) -> _typing.Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(_importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))
