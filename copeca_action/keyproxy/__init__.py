"""The key forwarder: agents talk to a loopback forwarder with a placeholder key, and only the
harness holds the real one (docs/security.md, "The model key")."""

import importlib as _importlib
import typing as _typing

if _typing.TYPE_CHECKING:
    from copeca_action.keyproxy._families import (
        FAMILIES,
        FAMILY_OF_PARSER,
        Family,
        Refused,
        swap_headers,
        swap_query,
    )
    from copeca_action.keyproxy._forwarder import (
        PLACEHOLDER_PREFIX,
        KeyForwarder,
        Route,
    )

__all__ = [
    "FAMILIES",
    "FAMILY_OF_PARSER",
    "PLACEHOLDER_PREFIX",
    "Family",
    "KeyForwarder",
    "Refused",
    "Route",
    "swap_headers",
    "swap_query",
]

_LAZY: dict[str, str] = {
    "FAMILIES": "copeca_action.keyproxy._families",
    "FAMILY_OF_PARSER": "copeca_action.keyproxy._families",
    "Family": "copeca_action.keyproxy._families",
    "KeyForwarder": "copeca_action.keyproxy._forwarder",
    "PLACEHOLDER_PREFIX": "copeca_action.keyproxy._forwarder",
    "Refused": "copeca_action.keyproxy._families",
    "Route": "copeca_action.keyproxy._forwarder",
    "swap_headers": "copeca_action.keyproxy._families",
    "swap_query": "copeca_action.keyproxy._families",
}
"""Each public name and its module, imported on first use (PEP 562)."""


def __getattr__(name: str) -> _typing.Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(_importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))
