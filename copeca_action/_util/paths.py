"""Where the bundled corpus, runners and schemas live: inside the wheel or in the checkout."""

from __future__ import annotations

from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parent.parent
_DATA = PACKAGE_DIR / "_data"
_CHECKOUT = PACKAGE_DIR.parent


def _bundled(name: str) -> Path:
    """The wheel carries data under copeca_action/_data; a source checkout at its root."""
    packaged = _DATA / name
    return packaged if packaged.is_dir() else _CHECKOUT / name


def corpus_dir() -> Path:
    return _bundled("corpus")


def runners_dir() -> Path:
    return _bundled("runners")


def schemas_dir() -> Path:
    return _bundled("schemas")
