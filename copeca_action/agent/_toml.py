"""A minimal TOML writer for the config files we generate (tables, strings, numbers, bools,
lists); reading back with `tomllib` is how the tests check it."""

from __future__ import annotations

import json
import re
from typing import Any

_BARE_KEY = re.compile(r"^[A-Za-z0-9_-]+\Z")


def _key(key: str) -> str:
    return key if _BARE_KEY.match(key) else json.dumps(key)


def _value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value)  # JSON string escapes are valid TOML basic-string escapes
    if isinstance(value, list | tuple):
        return "[" + ", ".join(_value(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{_key(str(k))} = {_value(v)}" for k, v in value.items()) + "}"
    raise TypeError(f"cannot write {type(value).__name__} as TOML")


def dumps(doc: dict[str, Any]) -> str:
    """Scalars and lists first, then one `[table]` per nested mapping (recursively)."""
    lines: list[str] = []
    _table(doc, [], lines)
    return "\n".join(lines).strip() + "\n"


def _table(doc: dict[str, Any], path: list[str], lines: list[str]) -> None:
    scalars = {k: v for k, v in doc.items() if not isinstance(v, dict)}
    tables = {k: v for k, v in doc.items() if isinstance(v, dict)}
    if path and (scalars or not tables):
        lines.append("")
        lines.append("[" + ".".join(_key(p) for p in path) + "]")
    for key, value in scalars.items():
        if value is not None:
            lines.append(f"{_key(str(key))} = {_value(value)}")
    for key, value in tables.items():
        _table(value, [*path, str(key)], lines)
