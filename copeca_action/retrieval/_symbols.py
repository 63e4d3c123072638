"""Definitions (functions, classes, methods, types) in a source file, found with tree-sitter.

A symbol is one definition node: its byte range covers decorators, attributes and annotations
that belong to it (Python `@decorator`, Rust `#[attr]`, Java annotations), ends exclusive.
Nested definitions (methods in classes, closures in functions) are symbols of their own, so a
view inside a method touches both the method and its class, as in ContextBench.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import PurePosixPath
from typing import Any

from copeca_action.retrieval._intervals import Interval, overlaps


@dataclass(frozen=True, order=True)
class Symbol:
    """One definition: `(file, start, end)` identify it; kind and name are for people."""

    file: str
    start: int
    end: int
    """Byte offset just after the definition (exclusive)."""
    kind: str
    name: str


_FUNCTION_VALUES = frozenset({"arrow_function", "function_expression", "function",
                              "generator_function", "class"})

_DEFINITIONS: dict[str, frozenset[str]] = {
    "python": frozenset({"function_definition", "class_definition"}),
    "javascript": frozenset({"function_declaration", "generator_function_declaration",
                             "class_declaration", "method_definition"}),
    "typescript": frozenset({"function_declaration", "generator_function_declaration",
                             "class_declaration", "abstract_class_declaration",
                             "method_definition", "interface_declaration",
                             "type_alias_declaration", "enum_declaration", "function_signature",
                             "method_signature", "abstract_method_signature", "internal_module",
                             "module"}),
    "go": frozenset({"function_declaration", "method_declaration", "type_spec",
                     "type_alias"}),
    "rust": frozenset({"function_item", "function_signature_item", "struct_item", "enum_item",
                       "union_item", "trait_item", "impl_item", "mod_item", "type_item",
                       "macro_definition"}),
    "java": frozenset({"class_declaration", "interface_declaration", "enum_declaration",
                       "record_declaration", "annotation_type_declaration",
                       "method_declaration", "constructor_declaration",
                       "compact_constructor_declaration"}),
}
_DEFINITIONS["tsx"] = _DEFINITIONS["typescript"]

LANGUAGE_BY_SUFFIX: dict[str, str] = {
    ".py": "python", ".pyi": "python",
    ".js": "javascript", ".mjs": "javascript", ".cjs": "javascript", ".jsx": "javascript",
    ".ts": "typescript", ".mts": "typescript", ".cts": "typescript", ".tsx": "tsx",
    ".go": "go", ".rs": "rust", ".java": "java",
}
"""Languages with symbol support; files of other kinds have no symbols (not an error)."""

_GRAMMARS: dict[str, tuple[str, str]] = {
    "python": ("tree_sitter_python", "language"),
    "javascript": ("tree_sitter_javascript", "language"),
    "typescript": ("tree_sitter_typescript", "language_typescript"),
    "tsx": ("tree_sitter_typescript", "language_tsx"),
    "go": ("tree_sitter_go", "language"),
    "rust": ("tree_sitter_rust", "language"),
    "java": ("tree_sitter_java", "language"),
}


def language_of(path: str) -> str | None:
    return LANGUAGE_BY_SUFFIX.get(PurePosixPath(path).suffix.lower())


@cache
def _parser(language: str) -> Any:
    """A parser from the per-language grammar wheel; these carry their grammars (offline)."""
    import tree_sitter

    module_name, attribute = _GRAMMARS[language]
    module = importlib.import_module(module_name)
    grammar: Callable[[], object] = getattr(module, attribute)
    return tree_sitter.Parser(tree_sitter.Language(grammar()))


def definitions(source: bytes, language: str, file: str = "") -> list[Symbol]:
    """Every definition in `source`, in document order (outer before inner)."""
    tree = _parser(language).parse(source)
    kinds = _DEFINITIONS[language]
    return [Symbol(file, start, end, kind, name)
            for start, end, kind, name in _walk(tree.root_node, kinds, language)]


def _walk(root: Any, kinds: frozenset[str],
          language: str) -> Iterator[tuple[int, int, str, str]]:
    stack = [root]
    while stack:
        node = stack.pop()
        found = _definition(node, kinds, language)
        if found is not None:
            yield found
        stack.extend(reversed(node.children))


def _definition(node: Any, kinds: frozenset[str],
                language: str) -> tuple[int, int, str, str] | None:
    kind: str = node.type
    if kind in kinds:
        start = _start_with_attachments(node, language)
        return start, node.end_byte, kind, _name(node)
    if kind == "variable_declarator" and language in ("javascript", "typescript", "tsx"):
        value = node.child_by_field_name("value")
        if value is not None and value.type in _FUNCTION_VALUES:
            return node.start_byte, node.end_byte, kind, _name(node)
    return None


def _start_with_attachments(node: Any, language: str) -> int:
    """Where a definition really begins: its decorators (Python) or attributes (Rust) first."""
    parent = node.parent
    if language == "python" and parent is not None and parent.type == "decorated_definition":
        return int(parent.start_byte)
    start = int(node.start_byte)
    if language == "rust":
        sibling = node.prev_sibling
        while sibling is not None and sibling.type == "attribute_item":
            start = int(sibling.start_byte)
            sibling = sibling.prev_sibling
    return start


def _name(node: Any) -> str:
    for field in ("name", "type"):
        child = node.child_by_field_name(field)
        if child is not None and child.text is not None:
            return bytes(child.text).decode("utf-8", "replace")
    return ""


def symbols_overlapping(symbols: list[Symbol], spans: list[Interval]) -> set[Symbol]:
    """The definitions sharing at least one byte with the normal-form interval set `spans`."""
    if not spans:
        return set()
    return {s for s in symbols if overlaps((s.start, s.end), spans)}
