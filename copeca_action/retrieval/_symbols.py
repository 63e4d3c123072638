"""Definitions (functions, classes, methods, types) in a source file, found with tree-sitter.

A symbol is one definition node: its byte range covers decorators, attributes and annotations
that belong to it (Python `@decorator`, Rust `#[attr]`, Java annotations), ends exclusive.
Nested definitions (methods in classes, closures in functions) are symbols of their own, so a
view inside a method touches both the method and its class, as in ContextBench.
"""

from __future__ import annotations

import bisect
import importlib
from collections.abc import Callable
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


@cache
def _query(language: str) -> Any:
    """One query capturing every definition node (matching runs in C, not a Python walk),
    plus what attaches to definitions from outside: Python decorators, Rust attributes."""
    import tree_sitter

    grammar = _parser(language).language
    known = [k for k in sorted(_DEFINITIONS[language]) if grammar.id_for_node_kind(k, True)]
    patterns = " ".join(f"({k})" for k in known)
    source = f"[{patterns}] @definition"
    if language in ("javascript", "typescript", "tsx"):
        values = " ".join(f"({k})" for k in sorted(_FUNCTION_VALUES)
                          if grammar.id_for_node_kind(k, True))
        source += f" (variable_declarator value: [{values}]) @definition"
    elif language == "python":
        source += " (decorated_definition) @decorated"
    elif language == "rust":
        source += " (attribute_item) @attribute"
    if language in ("typescript", "tsx"):
        source += " (decorator) @attribute"  # class members' decorators are their siblings
    return tree_sitter.Query(grammar, source)


def definitions(source: bytes, language: str, file: str = "") -> list[Symbol]:
    """Every definition in `source`, in document order, an enclosing one before those inside.

    Node parents and siblings are never asked for: in tree-sitter they are found by walking
    down from the root, which makes large flat files quadratic."""
    import tree_sitter

    tree = _parser(language).parse(source)
    captures = tree_sitter.QueryCursor(_query(language)).captures(tree.root_node)
    starts: dict[int, int] = {}  # a definition's own start -> where it really starts
    for node in captures.get("decorated", []):
        inner = node.child_by_field_name("definition")
        if inner is not None:
            starts[inner.start_byte] = node.start_byte
    attribute_at_end = {n.end_byte: n.start_byte for n in captures.get("attribute", [])}
    found = set()
    for node in captures.get("definition", []):
        start = starts.get(node.start_byte, node.start_byte)
        if attribute_at_end:
            start = _attributes_before(source, start, attribute_at_end)
        found.add((start, node.end_byte, node.type, _name(node)))
    return [Symbol(file, start, end, kind, name)
            for start, end, kind, name in sorted(found, key=lambda d: (d[0], -d[1], d[2]))]


_BETWEEN = (b"export", b"default")
"""Keywords that may stand between a decorator and its definition (`@d export class C`)."""


def _attributes_before(source: bytes, start: int, attribute_at_end: dict[int, int]) -> int:
    """Extend `start` over the attributes or decorators written just before it."""
    while True:
        k = _skip_space_back(source, start)
        for word in _BETWEEN:
            before = k - len(word)
            if source.endswith(word, 0, k) and (before == 0 or not source[before - 1:before]
                                                .isalnum()):
                k = _skip_space_back(source, before)
        if k not in attribute_at_end:
            return start
        start = attribute_at_end[k]


def _skip_space_back(source: bytes, k: int) -> int:
    while k > 0 and source[k - 1] in b" \t\r\n":
        k -= 1
    return k


def _name(node: Any) -> str:
    for field in ("name", "type"):
        child = node.child_by_field_name(field)
        if child is not None and child.text is not None:
            return bytes(child.text).decode("utf-8", "replace")
    return ""


class SymbolIndex:
    """One file's definitions, ordered by (start, −end), with each one's enclosing definition,
    so the definitions overlapping a span are found without scanning the file's list."""

    def __init__(self, symbols: list[Symbol]) -> None:
        self.symbols = sorted(symbols, key=lambda s: (s.start, -s.end, s.kind))
        self.starts = [s.start for s in self.symbols]
        self.ends = [s.end for s in self.symbols]
        self.parents: list[int] = []
        stack: list[int] = []
        for i, s in enumerate(self.symbols):
            while stack and self.ends[stack[-1]] < s.end:
                stack.pop()
            self.parents.append(stack[-1] if stack else -1)
            stack.append(i)

    def overlapping(self, spans: list[Interval], base: int = 0) -> set[int]:
        """`base` + indices of the definitions sharing a byte with the normal-form set `spans`:
        those starting inside a span, plus those open at its start (the enclosing chain of the
        last definition starting before it; definitions nest, so no other can be open there)."""
        out: set[int] = set()
        starts, ends, parents = self.starts, self.ends, self.parents
        for a, b in spans:
            lo = bisect.bisect_left(starts, a)
            out.update(range(base + lo, base + bisect.bisect_left(starts, b)))
            j = lo - 1
            while j >= 0:
                if ends[j] > a:
                    out.add(base + j)
                j = parents[j]
        return out


def symbols_overlapping(symbols: list[Symbol], spans: list[Interval]) -> set[Symbol]:
    """The definitions sharing at least one byte with the normal-form interval set `spans`
    (the reference the index is tested against)."""
    if not spans:
        return set()
    return {s for s in symbols if overlaps((s.start, s.end), spans)}
