"""The committed JSON Schemas are exactly what the models generate."""

from __future__ import annotations

from pathlib import Path

import pytest

from copeca_action._cli.schema import SCHEMAS, generated_files, schema_text


@pytest.mark.parametrize("name", sorted(SCHEMAS))
def test_committed_schema_equals_generated(name: str, root: Path) -> None:
    committed = root / "schemas" / f"{name}.schema.json"
    assert committed.is_file(), "run `copeca-action schema --out schemas`"
    assert committed.read_text() == schema_text(SCHEMAS[name]), (
        f"{committed} is stale: run `copeca-action schema --out schemas`")


def test_reference_docs_match_the_models(root: Path) -> None:
    files = generated_files(root / "schemas", root / "docs" / "reference")
    stale = [str(p) for p, text in files.items() if not p.is_file() or p.read_text() != text]
    assert not stale, "run `copeca-action schema --out schemas --docs docs/reference`"
