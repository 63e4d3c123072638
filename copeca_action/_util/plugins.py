"""No pydantic plugin in the command's process.

pydantic looks up the `pydantic` entry point group of every installed distribution when it
builds its first validator, and imports what it finds: `importlib.metadata` and the
scan of the environment's metadata cost 30 ms of every start (a one-record `analyze` takes
about 200 ms), and an installed package's plugin would be imported into a process that
holds API keys and the signing key, seeing every value validated. The command's own
process (`cli.console`) wants neither; a program importing copeca_action as a library
keeps its plugins."""

from __future__ import annotations

import sys
import types

LOADER = "pydantic.plugin._loader"
"""The module pydantic's `create_schema_validator` imports `get_plugins` from (a test
holds pydantic to it)."""


def no_pydantic_plugins() -> None:
    """Makes pydantic find no plugin, before it first looks; nothing once it has looked
    (its loader is then imported, and its answer kept)."""
    if LOADER in sys.modules:
        return
    loader = types.ModuleType(LOADER, "No pydantic plugins (copeca_action._util.plugins).")
    loader.get_plugins = _none  # type: ignore[attr-defined]
    sys.modules[LOADER] = loader


def _none() -> tuple[()]:
    return ()
