"""Field descriptions from attribute docstrings, filled in when a schema is generated.

pydantic's `use_attribute_docstrings` reads and parses each model's source when the class is
created, which cost about 90 ms of every command's start-up; only the JSON Schemas and the
reference pages show the descriptions, so `describe_fields` adds them there, once: each
field without a description takes the string literal that follows its annotation in the
nearest class of the MRO that annotates it (what `use_attribute_docstrings` gives).
"""

from __future__ import annotations

import ast
import functools
import inspect
import sys
from collections.abc import Iterable

from pydantic import BaseModel


def describe_fields(roots: Iterable[type[BaseModel]]) -> None:
    """Give every field of every model reachable from `roots` its docstring description,
    then rebuild the models (innermost first), so their JSON Schemas carry them."""
    models = _reachable(roots)
    changed = False
    for model in models:
        for name, info in model.__pydantic_fields__.items():
            if info.description is None:
                doc = _field_doc(model, name)
                if doc is not None:
                    info.description = doc
                    changed = True
    if changed:
        for _ in range(len(models)):  # until a rebuild changes nothing: nesting depth
            before = [m.__pydantic_core_schema__ for m in models]
            for model in reversed(models):
                model.model_rebuild(force=True)
            if [m.__pydantic_core_schema__ for m in models] == before:
                break


def _reachable(roots: Iterable[type[BaseModel]]) -> list[type[BaseModel]]:
    """The models under `roots` (field types, recursively), parents before children."""
    seen: dict[type[BaseModel], None] = {}
    todo = list(roots)
    while todo:
        model = todo.pop(0)
        if model in seen:
            continue
        seen[model] = None
        for info in model.__pydantic_fields__.values():
            todo += [t for t in _types_in(info.annotation) if t not in seen]
    return list(seen)


def _types_in(annotation: object) -> list[type[BaseModel]]:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation]
    out: list[type[BaseModel]] = []
    for arg in getattr(annotation, "__args__", ()) or ():
        out += _types_in(arg)
    for meta in getattr(annotation, "__metadata__", ()) or ():
        out += _types_in(meta)
    origin = getattr(annotation, "__origin__", None)
    if origin is not None and origin is not annotation:
        out += _types_in(origin)
    return out


def _field_doc(model: type[BaseModel], name: str) -> str | None:
    for cls in model.__mro__:
        docs = _class_docs(cls)
        if docs is not None and name in docs[0]:
            return docs[1].get(name)
    return None


@functools.cache
def _class_docs(cls: type) -> tuple[frozenset[str], dict[str, str]] | None:
    """The names the class body annotates, and the docstrings that follow them."""
    node = _class_node(cls)
    if node is None:
        return None
    annotated: set[str] = set()
    docs: dict[str, str] = {}
    body = node.body
    for here, after in zip(body, [*body[1:], None], strict=True):
        if isinstance(here, ast.AnnAssign) and isinstance(here.target, ast.Name):
            annotated.add(here.target.id)
            if isinstance(after, ast.Expr) and isinstance(after.value, ast.Constant) \
                    and isinstance(after.value.value, str):
                docs[here.target.id] = inspect.cleandoc(after.value.value)
    return frozenset(annotated), docs


def _class_node(cls: type) -> ast.ClassDef | None:
    module = sys.modules.get(cls.__module__)
    if module is None:
        return None
    try:
        tree = _module_tree(inspect.getsourcefile(module) or "")
    except (OSError, TypeError, SyntaxError):
        return None
    scope: list[ast.stmt] = tree.body
    found = None
    for part in cls.__qualname__.split("."):
        found = next((n for n in scope if isinstance(n, ast.ClassDef) and n.name == part),
                     None)
        if found is None:
            return None
        scope = found.body
    return found


@functools.cache
def _module_tree(path: str) -> ast.Module:
    with open(path, encoding="utf-8") as handle:
        return ast.parse(handle.read())
