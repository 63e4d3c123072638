"""YAML reading that remembers where every value came from.

Users author tasks and scenarios by hand, so an error must point at the file, the line and the
field. PyYAML's node marks give the line of every key and value; we keep them in a path→line
map and translate pydantic's error locations through it.
"""

from __future__ import annotations

import datetime as dt
import re
import stat
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import yaml
from pydantic import BaseModel, ValidationError

from copeca_action.errors import ConfigError, Problem

MAX_YAML_BYTES = 2 * 1024 * 1024
"""Hand-written inputs are small; anything bigger is a mistake and is refused unread."""
MAX_YAML_NODES = 200_000
"""Values a document may hold once its aliases are expanded (a "billion laughs" file holds
10^9 from a few lines): refused before anything walks or validates it."""
MAX_YAML_DEPTH = 64
"""Nesting levels; hand-written inputs use fewer than ten."""

Loc = tuple[str | int, ...]
M = TypeVar("M", bound=BaseModel)


@dataclass
class YamlDoc:
    """A parsed YAML file plus the line (1-based) of every value in it."""

    path: Path
    data: Any
    lines: dict[Loc, int] = field(default_factory=dict)
    forms: dict[Loc, Problem] = field(default_factory=dict)
    """Values written in a form YAML 1.1 reads as something other than it looks (`yes`,
    `0x10`, `010`, `1:30`): refused by `parse_model`, beside the model's own errors."""

    def line_of(self, loc: Loc) -> int | None:
        """The line of `loc`, or of its nearest enclosing value we know."""
        for cut in range(len(loc), -1, -1):
            line = self.lines.get(tuple(loc[:cut]))
            if line is not None:
                return line
        return None

    def problem(self, loc: Loc, message: str) -> Problem:
        return Problem(str(self.path), message, self.line_of(loc), format_loc(loc) or None)


def format_loc(loc: Loc) -> str:
    """`('grading', 'answer', 'required', 0)` → `grading.answer.required[0]`."""
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += ("." if out else "") + str(part)
    return out


_INT_TAG = "tag:yaml.org,2002:int"
_FLOAT_TAG = "tag:yaml.org,2002:float"
_BOOL_TAG = "tag:yaml.org,2002:bool"
_PLAIN_INT = re.compile(r"[-+]?(0|[1-9][0-9]*)")
_PLAIN_BOOL = {"true", "false"}


def _yaml11_form(node: yaml.ScalarNode) -> str | None:
    """Why an unquoted value YAML 1.1 reads as something other than it looks is refused:
    `yes`/`no`/`on`/`off` (true and false), `0x10` (16), `010` (8: octal), `0b11`, `1_000`,
    `1:30` (90: base 60). YAML 1.2 and every JSON reader see text or another number, so the
    value a person meant is a guess; None when the value is written plainly."""
    if node.style is not None or node.tag not in (_INT_TAG, _FLOAT_TAG, _BOOL_TAG):
        return None  # quoted: text, as written
    text = node.value
    constructor = yaml.constructor.SafeConstructor()
    if node.tag == _BOOL_TAG:
        if text.lower() in _PLAIN_BOOL:
            return None
        value = str(constructor.construct_yaml_bool(node)).lower()
        return (f"{text} is read as {value} by YAML 1.1 but as text by YAML 1.2: write "
                f"{value}, or quote it ('{text}') if you mean the text")
    if node.tag == _INT_TAG:
        if _PLAIN_INT.fullmatch(text):
            return None
        number = constructor.construct_yaml_int(node)
        how = ("hexadecimal" if "x" in text.lower() else "binary" if "b" in text.lower()
               else "base 60" if ":" in text else "octal: a leading 0" if "_" not in text
               else "digits with '_'")
        return (f"{text} is read as the number {number} ({how}): write {number}, or quote "
                f"it ('{text}') if you mean the text")
    if "_" in text or ":" in text:
        real = constructor.construct_yaml_float(node)
        how = "base 60" if ":" in text else "digits with '_'"
        return (f"{text} is read as the number {real!r} ({how}): write {real!r}, or "
                f"quote it ('{text}') if you mean the text")
    return None


def _walk(node: yaml.Node, loc: Loc, doc: YamlDoc, problems: list[Problem]) -> None:
    lines, path = doc.lines, doc.path
    lines.setdefault(loc, node.start_mark.line + 1)
    if isinstance(node, yaml.ScalarNode) and (why := _yaml11_form(node)):
        doc.forms.setdefault(loc, Problem(str(path), why, node.start_mark.line + 1,
                                          format_loc(loc) or None))
    if isinstance(node, yaml.MappingNode):
        seen: dict[Any, int] = {}
        for key_node, value_node in node.value:
            key = key_node.value if isinstance(key_node, yaml.ScalarNode) else str(key_node)
            line = key_node.start_mark.line + 1
            if key in seen:
                problems.append(Problem(str(path), f"duplicate key (first at line {seen[key]})",
                                        line, format_loc((*loc, key))))
            seen[key] = line
            lines[(*loc, key)] = line
            _walk(value_node, (*loc, key), doc, problems)
    elif isinstance(node, yaml.SequenceNode):
        for i, item in enumerate(node.value):
            _walk(item, (*loc, i), doc, problems)


def read_text(path: Path, max_bytes: int = MAX_YAML_BYTES) -> str:
    """Read a UTF-8 text file, refusing huge or non-UTF-8 files, folders, pipes and devices
    (reading a FIFO would wait forever) with a located message."""
    try:
        info = path.stat()
    except OSError as exc:
        raise ConfigError(f"cannot read file: {exc.strerror}", path) from exc
    except ValueError as exc:  # a NUL byte in the path
        raise ConfigError(f"not a usable file name ({exc})", repr(str(path))) from exc
    if stat.S_ISDIR(info.st_mode):
        raise ConfigError("is a folder, expected a YAML file", path)
    if not stat.S_ISREG(info.st_mode):
        raise ConfigError("is not a regular file (a pipe, socket or device?); expected a "
                          "YAML file", path)
    size = info.st_size
    if size > max_bytes:
        raise ConfigError(f"file is {size:,} bytes; inputs are limited to {max_bytes:,} bytes",
                          path)
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise ConfigError(f"cannot read file: {exc.strerror}", path) from exc
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise ConfigError(Problem(str(path), f"not valid UTF-8 (byte 0x{raw[exc.start]:02x} at "
                                  f"offset {exc.start}); save the file as UTF-8", line)) from exc


def parse_yaml(text: str, path: Path) -> YamlDoc:
    """Parse one YAML document from text, recording lines; syntax errors are located."""
    try:
        loader = yaml.SafeLoader(text)
    except yaml.reader.ReaderError as exc:  # a NUL or another unprintable character
        at = text[:exc.position].count("\n") + 1
        raise ConfigError(Problem(str(path), f"character #x{exc.character:04x} at offset "
                                  f"{exc.position} is not allowed in YAML (a NUL byte or "
                                  "another control character); remove it", at)) from exc
    node: yaml.Node | None = None
    try:
        node = loader.get_single_node()
        if node is not None:
            _check_size(node, path)
        data = loader.construct_document(node) if node is not None else None
    except RecursionError as exc:
        raise ConfigError(Problem(str(path), f"nested more than {MAX_YAML_DEPTH} levels "
                                  "deep; inputs are flat")) from exc
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark else None
        what = exc.problem or exc.context or "invalid YAML"
        raise ConfigError(Problem(str(path), f"YAML syntax error: {what}", line)) from exc
    except yaml.YAMLError as exc:
        raise ConfigError(Problem(str(path), f"YAML error: {exc}")) from exc
    except (ValueError, TypeError, OverflowError) as exc:  # `2026-02-30`, `!!int zz`
        bad = _unreadable(node) if node is not None else None
        raise ConfigError(Problem(
            str(path), (f"{bad[1]!r} cannot be read as {bad[2]}: {exc}; write a valid value, "
                        "or quote it if you mean the text") if bad else f"YAML error: {exc}",
            bad[0] if bad else None, (format_loc(bad[3]) or None) if bad else None)) from exc
    finally:
        loader.dispose()
    doc = YamlDoc(path=path, data=data)
    problems: list[Problem] = []
    if node is not None:
        _walk(node, (), doc, problems)
    if problems:
        raise ConfigError(problems)
    return doc


_KINDS = {"tag:yaml.org,2002:timestamp": "a date", _INT_TAG: "a whole number",
          _FLOAT_TAG: "a number", _BOOL_TAG: "true or false"}


def _unreadable(root: yaml.Node) -> tuple[int, str, str, Loc] | None:
    """(line, text, what it was read as, where) of the first value PyYAML cannot build (a
    date that does not exist, `!!int zz`), which it reports without a place."""
    constructor = yaml.constructor.SafeConstructor()
    stack: list[tuple[yaml.Node, Loc]] = [(root, ())]
    while stack:
        node, loc = stack.pop()
        if isinstance(node, yaml.ScalarNode):
            try:
                constructor.construct_object(node, deep=True)
            except (ValueError, TypeError, OverflowError, yaml.YAMLError):
                return (node.start_mark.line + 1, node.value,
                        _KINDS.get(node.tag, node.tag.rsplit(":", 1)[-1]), loc)
        elif isinstance(node, yaml.MappingNode):
            for key_node, value_node in reversed(node.value):
                key = key_node.value if isinstance(key_node, yaml.ScalarNode) else "?"
                stack += [(value_node, (*loc, key)), (key_node, loc)]
        elif isinstance(node, yaml.SequenceNode):
            stack += [(item, (*loc, i)) for i, item in reversed(list(enumerate(node.value)))]
    return None


def _check_size(root: yaml.Node, path: Path) -> None:
    """Count the values the document holds with its aliases expanded, and its depth, without
    expanding anything (an explicit stack, stopped at the caps)."""
    count = 0
    stack: list[tuple[yaml.Node, int]] = [(root, 1)]
    while stack:
        node, depth = stack.pop()
        count += 1
        if count > MAX_YAML_NODES:
            raise ConfigError(Problem(str(path), f"holds more than {MAX_YAML_NODES:,} values "
                                      "once its aliases (*name) are expanded (a \"billion "
                                      "laughs\" file?); write the values out",
                                      node.start_mark.line + 1))
        if depth > MAX_YAML_DEPTH:
            raise ConfigError(Problem(str(path), f"nested more than {MAX_YAML_DEPTH} levels "
                                      "deep; inputs are flat", node.start_mark.line + 1))
        if isinstance(node, yaml.MappingNode):
            for key_node, value_node in node.value:
                stack.append((key_node, depth + 1))
                stack.append((value_node, depth + 1))
        elif isinstance(node, yaml.SequenceNode):
            stack.extend((item, depth + 1) for item in node.value)


def load_yaml(path: Path | str) -> YamlDoc:
    """Read and parse a YAML file with size, encoding and syntax checks."""
    path = Path(path)
    return parse_yaml(read_text(path), path)


def _describe(err: Mapping[str, Any], model: type[BaseModel] | None) -> str:
    kind = err.get("type", "")
    if kind == "extra_forbidden":
        return "unknown key" + (f"; allowed keys: {', '.join(model.model_fields)}"
                                if model is not None else "")
    if kind == "missing":
        return "required field is missing"
    value = err.get("input")
    typed = _as_typed(kind, value)
    if typed is not None:
        return typed
    msg = str(err.get("msg", "invalid value"))
    msg = msg.removeprefix("Value error, ").removeprefix("Assertion failed, ")
    if kind not in ("value_error", "assertion_error") and not isinstance(value, dict | list):
        shown = repr(value)
        if len(shown) > 60:
            shown = shown[:57] + "..."
        msg += f" (got {shown})"
    return msg


_EXPONENT = re.compile(r"[-+]?(\d+\.?\d*|\.\d+)[eE][-+]?\d+")
"""A number with an exponent that YAML 1.1 (PyYAML) reads as text: `1e9`, `1.5e3`, `2E-4`
(it needs a dot and a signed exponent: `1.0e+9`)."""
_EXPECTED = {"int_type": "a whole number", "float_type": "a number",
             "string_type": "text", "date_type": "a date (YYYY-MM-DD)"}


def _yaml_number(number: float) -> str:
    """`number` as YAML reads it back as a number: 1000000000, 0.0002, 1.0e+300."""
    if number.is_integer() and abs(number) < 1e16:
        return f"{number:.0f}"
    shown = repr(number)
    mantissa, e, exponent = shown.partition("e")
    if e and "." not in mantissa:
        shown = f"{mantissa}.0e{exponent}"
    return shown


def _as_typed(kind: str, value: Any) -> str | None:
    """What to say when a value of the wrong type was written (inputs are strict: a number
    in quotes is text, `2.0` is not a whole number); None: pydantic's own message."""
    expected = _EXPECTED.get(kind)
    if expected is None or isinstance(value, dict | list | bool) or value is None:
        return None
    if isinstance(value, str):
        text = repr(value) if len(value) <= 60 else repr(value[:57]) + "..."
        if kind != "date_type" and _EXPONENT.fullmatch(value.strip()):
            return (f"expected {expected}, got the text {text}: YAML reads a number with an "
                    "exponent as text unless it has a dot and a signed exponent; write "
                    f"{_yaml_number(float(value))}")
        return f"expected {expected}, got the text {text} (remove the quotes)"
    if kind == "int_type" and isinstance(value, float):
        return (f"expected a whole number, got {value!r}"
                + (f" (write {value:.0f})" if value.is_integer() else ""))
    if kind == "string_type":
        what = "a date" if isinstance(value, dt.date) else f"the {type(value).__name__}"
        return f"expected text, got {what} {value!s}: quote the value as written"
    return f"expected {expected}, got {value!r}"


def _model_at(model: type[BaseModel], loc: Loc) -> type[BaseModel] | None:
    """The nested model class that owns the last key of `loc`, for 'allowed keys' hints."""
    current: Any = model
    for part in loc[:-1]:
        if isinstance(part, int) or current is None:
            continue
        fields = getattr(current, "model_fields", None)
        if not fields or part not in fields:
            return None
        current = _first_model(fields[part].annotation)
    return current if isinstance(current, type) and issubclass(current, BaseModel) else None


def _first_model(annotation: Any) -> type[BaseModel] | None:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in getattr(annotation, "__args__", ()) or ():
        found = _first_model(arg)
        if found is not None:
            return found
    return None


def _data_loc(loc: Loc, data: Any) -> Loc:
    """`loc` without the parts pydantic adds that are not in the data (a union member's tag
    such as `AnswerGrading` or `str`, the `[key]` of a key's error). A part that is a key of
    the data is kept, whatever its case: an env variable `NO_TELEMETRY=1` or a model id
    `Qwen3` is where the error is."""
    out: list[str | int] = []
    current = data
    for part in loc:
        in_list = isinstance(current, list) and isinstance(part, int) and \
            0 <= part < len(current)
        if in_list or (isinstance(current, dict) and part in current):
            current = current[part]
        elif part == "[key]" or (isinstance(part, str) and part[:1].isupper()):
            continue  # pydantic's own, not the file's
        else:
            current = None  # a missing key: named, nothing below it to follow
        out.append(part)
    return tuple(out)


def problems_from_validation(doc: YamlDoc, exc: ValidationError, model: type[BaseModel],
                             root: Loc = (), data: Any = None) -> list[Problem]:
    """Translate pydantic errors into located problems, one per error."""
    out = []
    for err in exc.errors():
        loc = _data_loc(tuple(err["loc"]), data)
        full = (*root, *loc)
        owner = _model_at(model, loc) if err.get("type") == "extra_forbidden" else None
        out.append(doc.problem(full, _describe(err, owner)))
    return out


HAND_WRITTEN = {"hand_written": True}
"""The validation context of every model read from YAML (`parse_model`): input a person
wrote, where a validator may refuse what is ambiguous as typed (a bare threshold of 10, see
`scenario.Thresholds`) but fine when a program built the same model."""


def parse_model(doc: YamlDoc, model: type[M], root: Loc = (), data: Any = None,
                context: dict[str, Any] | None = None) -> M:
    """Validate `doc` (or `data` found at `root` inside it) into `model`, or raise located."""
    value = doc.data if data is None and not root else data
    if not isinstance(value, dict):
        kind = "empty" if value is None else type(value).__name__
        raise ConfigError(doc.problem(root, f"expected a mapping of keys, got {kind}"))
    forms = {loc: p for loc, p in doc.forms.items() if loc[:len(root)] == root}
    try:
        parsed = model.model_validate(value, context={**HAND_WRITTEN, **(context or {})})
    except ValidationError as exc:
        found = problems_from_validation(doc, exc, model, root, value)
        # a value refused for its form is not named twice (its type error follows from it)
        seen = {(p.line, p.field) for p in forms.values()}
        raise ConfigError([*forms.values(),
                           *(p for p in found if (p.line, p.field) not in seen)]) from exc
    if forms:
        raise ConfigError(list(forms.values()))
    return parsed
