"""The demo tool: a small stdio MCP server with a code-search tool over the working folder.
It is the `codesearch` mode's tool in the bundled demo: `python -m copeca_action.demo_tool`."""

import importlib as _importlib
import typing as _typing

if _typing.TYPE_CHECKING:
    from copeca_action.demo_tool._search import definition, search
    from copeca_action.demo_tool._server import TOOLS, CodeSearchServer, serve

__all__ = [
    "TOOLS",
    "CodeSearchServer",
    "definition",
    "search",
    "serve",
]

_LAZY: dict[str, str] = {
    "CodeSearchServer": "copeca_action.demo_tool._server",
    "TOOLS": "copeca_action.demo_tool._server",
    "definition": "copeca_action.demo_tool._search",
    "search": "copeca_action.demo_tool._search",
    "serve": "copeca_action.demo_tool._server",
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
