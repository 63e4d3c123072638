"""The YAML examples in the guides are valid: docs cannot show what the code refuses."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from copeca_action.scenario import validate_paths

DOCS = Path(__file__).resolve().parents[3] / "docs"
BLOCK = re.compile(r"```yaml (task|scenario|mode)\n(.*?)```", re.S)
EXAMPLES = [(f.name, i, kind, text) for f in sorted(DOCS.glob("*.md"))
            for i, (kind, text) in enumerate(BLOCK.findall(f.read_text()))]


def test_guides_have_examples() -> None:
    assert {kind for _, _, kind, _ in EXAMPLES} == {"task", "scenario", "mode"}


@pytest.mark.parametrize(("doc", "index", "kind", "text"), EXAMPLES,
                         ids=[f"{d}-{i}" for d, i, _, _ in EXAMPLES])
def test_example_validates(doc: str, index: int, kind: str, text: str, tmp_path: Path) -> None:
    folder = tmp_path / {"task": "tasks", "scenario": "scenarios", "mode": "modes"}[kind]
    folder.mkdir()
    name = "example"
    if kind == "task":  # a task file is named after its id (validate checks it)
        name = str(yaml.safe_load(text)["id"]).rsplit("/", 1)[-1]
    path = folder / ("codesearch.yaml" if kind == "mode" else f"{name}.yaml")
    path.write_text(text)
    result = validate_paths([path], corpus_root=DOCS.parent / "corpus")
    assert result.ok, [str(e) for e in result.errors]
