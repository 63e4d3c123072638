"""Layering: a library package never imports the command-line layer (`_cli`, `cli`); the
GitHub layer and the CLI both call the run pipeline (copeca_action.pipeline)."""

from __future__ import annotations

import ast
from pathlib import Path

import copeca_action

PACKAGE = Path(copeca_action.__file__).parent
CLI_MODULES = ("copeca_action._cli", "copeca_action.cli")


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(), filename=str(path))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
    return names


def test_no_library_module_imports_the_cli_layer() -> None:
    offenders = []
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE)
        if rel.parts[0] in ("_cli", "cli.py"):
            continue
        for name in _imports(path):
            if name.startswith(CLI_MODULES):
                offenders.append(f"{rel} imports {name}")
    assert offenders == []


def test_cli_and_github_layer_share_the_pipeline() -> None:
    assert "copeca_action.pipeline" in _imports(PACKAGE / "github" / "_engine.py")
    assert "copeca_action.pipeline" in _imports(PACKAGE / "_cli" / "run.py")
