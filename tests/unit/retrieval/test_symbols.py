"""Definitions per language, decorated and nested, on small samples and on real fastapi files."""

from __future__ import annotations

import ast
import random
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from copeca_action.retrieval import Repo, definitions, merge
from copeca_action.retrieval._symbols import SymbolIndex, language_of, symbols_overlapping

PY = b"""import os

@app.get("/")
@cached
def handler():
    def inner():
        return 1
    return inner


class Outer:
    @property
    def value(self):
        return 2

    class Inner:
        pass
"""


LANGS = ("python", "javascript", "typescript", "tsx", "go", "rust", "java")


def names(source: bytes, language: str) -> list[tuple[str, str]]:
    return [(s.kind, s.name) for s in definitions(source, language)]


def test_python_decorated_and_nested() -> None:
    found = definitions(PY, "python")
    assert [(s.kind, s.name) for s in found] == [
        ("function_definition", "handler"), ("function_definition", "inner"),
        ("class_definition", "Outer"), ("function_definition", "value"),
        ("class_definition", "Inner")]
    handler = found[0]
    assert PY[handler.start:].startswith(b'@app.get("/")')  # decorators included
    assert PY[handler.end - 1:handler.end] == b"r"  # ...`return inner`, end exclusive
    value = found[3]
    assert PY[value.start:value.end].startswith(b"@property")
    assert PY[value.start:value.end].endswith(b"return 2")


def test_end_is_exclusive() -> None:
    source = b"def f():\n    pass\n"
    (f,) = definitions(source, "python")
    assert (f.start, f.end) == (0, len(b"def f():\n    pass"))


def test_javascript() -> None:
    source = b"""function a() {}
const b = () => 1;
let c = function () {};
const notFn = 3;
class D { m() { function nested() {} } }
"""
    assert names(source, "javascript") == [
        ("function_declaration", "a"), ("variable_declarator", "b"),
        ("variable_declarator", "c"), ("class_declaration", "D"),
        ("method_definition", "m"), ("function_declaration", "nested")]


def test_typescript_and_tsx() -> None:
    source = b"""interface I { x(): void }
type T = { a: number };
enum E { A }
export function f(a: number): number { return a }
export class C { @dec() m(): void {} }
namespace N { export const g = (x: number) => x }
"""
    assert names(source, "typescript") == [
        ("interface_declaration", "I"), ("method_signature", "x"), ("type_alias_declaration", "T"),
        ("enum_declaration", "E"), ("function_declaration", "f"), ("class_declaration", "C"),
        ("method_definition", "m"), ("internal_module", "N"), ("variable_declarator", "g")]
    tsx = b"export function App() { return <div/> }\n"
    assert names(tsx, "tsx") == [("function_declaration", "App")]


def test_typescript_decorators_belong_to_the_member() -> None:
    source = b"@Component({a: 1})\nexport class C {\n  @Input()\n  @Other\n  m(): void {}\n" \
             b"  n() {}\n}\nexport function f() {}\n"
    found = {s.name: s for s in definitions(source, "typescript")}
    assert source[found["C"].start:].startswith(b"@Component")
    assert source[found["m"].start:found["m"].end] == b"@Input()\n  @Other\n  m(): void {}"
    assert source[found["n"].start:].startswith(b"n() {}")
    assert source[found["f"].start:].startswith(b"function f")  # `export` alone is not taken


def test_go() -> None:
    source = b"""package p

type S struct{ X int }
type (
    A int
    B = string
)
func F() { g := func() {}; _ = g }
func (s *S) M() {}
"""
    assert names(source, "go") == [
        ("type_spec", "S"), ("type_spec", "A"), ("type_alias", "B"),
        ("function_declaration", "F"), ("method_declaration", "M")]


def test_rust_attributes_belong_to_the_item() -> None:
    source = b"""#[derive(Debug)]
#[allow(dead_code)]
struct S { x: i32 }
impl S { fn f(&self) {} }
trait T { fn g(&self); }
mod m { pub fn h() {} }
"""
    found = definitions(source, "rust")
    assert [(s.kind, s.name) for s in found] == [
        ("struct_item", "S"), ("impl_item", "S"), ("function_item", "f"), ("trait_item", "T"),
        ("function_signature_item", "g"), ("mod_item", "m"), ("function_item", "h")]
    assert found[0].start == 0  # the #[derive] line starts the struct


def test_java_annotations_and_nesting() -> None:
    source = b"""@Entity
public class A {
    @Override
    public String toString() { return ""; }
    A() {}
    static class B { void m() {} }
    interface I {}
    enum E { X }
}
"""
    found = definitions(source, "java")
    assert [(s.kind, s.name) for s in found] == [
        ("class_declaration", "A"), ("method_declaration", "toString"),
        ("constructor_declaration", "A"), ("class_declaration", "B"),
        ("method_declaration", "m"), ("interface_declaration", "I"), ("enum_declaration", "E")]
    assert found[0].start == 0
    assert source[found[1].start:].startswith(b"@Override")


def test_language_by_suffix() -> None:
    assert language_of("a/b.py") == "python"
    assert language_of("x.TSX") == "tsx"
    assert language_of("README.md") is None


def test_unsupported_files_have_no_symbols(tmp_path: Path) -> None:
    (tmp_path / "notes.md").write_text("# def f():\n")
    source = Repo(tmp_path).file("notes.md")
    assert source is not None and source.symbols() == []


def test_fastapi_utils_generate_unique_id(fastapi_src: Path) -> None:
    repo = Repo(fastapi_src)
    source = repo.file("fastapi/utils.py")
    assert source is not None
    by_name = {s.name: s for s in source.symbols()}
    unique = by_name["generate_unique_id"]
    assert source.line_of(unique.start) == 179
    assert source.line_of(unique.end - 1) == 184
    assert {"create_model_field", "deep_dict_update", "get_value_or_default"} <= set(by_name)


def test_fastapi_routing_classes_and_methods(fastapi_src: Path) -> None:
    source = Repo(fastapi_src).file("fastapi/routing.py")
    assert source is not None
    symbols = source.symbols()
    route = next(s for s in symbols if s.name == "APIRoute" and s.kind == "class_definition")
    methods = [s for s in symbols if route.start < s.start and s.end <= route.end]
    assert "__init__" in {m.name for m in methods}
    # decorated route helpers of APIRouter begin at their decorators
    router = next(s for s in symbols if s.name == "APIRouter")
    inside = [s for s in symbols if router.start < s.start and s.end <= router.end]
    text = (Path(fastapi_src) / "fastapi/routing.py").read_bytes()
    assert all(not text[s.start:s.end].startswith(b" ") for s in inside)
    assert source.line_of(route.start) == 428


@pytest.mark.parametrize("rel", ["fastapi/applications.py", "fastapi/dependencies/utils.py",
                                 "fastapi/params.py", "fastapi/security/oauth2.py",
                                 "fastapi/routing.py", "fastapi/_compat.py"])
def test_fastapi_symbols_match_python_ast(fastapi_src: Path, rel: str) -> None:
    """Python's own parser is the oracle: every def/class with its first line (decorators
    included) and last line, nested ones too."""
    text = (fastapi_src / rel).read_bytes()
    expected = set()
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
            # a decorator's `@` is on the line of its expression (one-line decorators here)
            expected.add((node.name, first, node.end_lineno))
    source = Repo(fastapi_src).file(rel)
    assert source is not None
    found = {(s.name, source.line_of(s.start), source.line_of(s.end - 1))
             for s in source.symbols()}
    assert found == expected
    assert len(expected) > 5


@settings(deadline=None)
@given(st.lists(st.tuples(st.integers(0, len(PY)), st.integers(0, 40)), max_size=4))
def test_index_overlap_matches_the_reference_scan(raw: list[tuple[int, int]]) -> None:
    symbols = definitions(PY, "python")
    spans = merge([(start, start + width) for start, width in raw])
    index = SymbolIndex(symbols)
    assert {index.symbols[i] for i in index.overlapping(spans)} == \
        symbols_overlapping(symbols, spans)


def test_index_overlap_on_fastapi_routing(fastapi_src: Path) -> None:
    source = Repo(fastapi_src).file("fastapi/routing.py")
    assert source is not None
    index = source.symbol_index()
    rng = random.Random(7)
    for _ in range(300):
        start = rng.randrange(source.size)
        spans = merge([(start, start + rng.randint(1, 3000)),
                       (s := rng.randrange(source.size), s + rng.randint(1, 50))])
        assert {index.symbols[i] for i in index.overlapping(spans)} == \
            symbols_overlapping(index.symbols, spans)


FRAGMENTS = [b"def f():\n", b"    ", b"@d\n", b"class A:\n", b"pass\n", b"function g() {", b"}",
             b"#[a]\n", b"fn h() {}\n", b"struct S;", b"impl S {", b"@D export class C {",
             b"m() {}", b"func F() {}\n", b"type T int\n", b"(", b")", b"\xff", b"\n"]


@settings(deadline=None, max_examples=150)
@given(st.sampled_from(LANGS), st.lists(st.sampled_from(FRAGMENTS), max_size=25))
def test_any_source_gives_nested_in_range_symbols(language: str, parts: list[bytes]) -> None:
    """Broken or odd code never raises; every definition lies inside the source, and any two
    are disjoint or nested (the symbol index relies on it)."""
    source = b"".join(parts)
    symbols = definitions(source, language)
    for s in symbols:
        assert 0 <= s.start < s.end <= len(source)
    for a in symbols:
        for b in symbols:
            disjoint = a.end <= b.start or b.end <= a.start
            nested = (a.start <= b.start and b.end <= a.end) or (
                b.start <= a.start and a.end <= b.end)
            assert disjoint or nested
