"""YAML reading that remembers where every value came from.

Users author tasks and scenarios by hand, so an error must point at the file, the line and the
field. PyYAML's node marks give the line of every key and value; we keep them in a path→line
map and translate pydantic's error locations through it.
"""

from __future__ import annotations

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


def _walk(node: yaml.Node, loc: Loc, lines: dict[Loc, int], problems: list[Problem],
          path: Path) -> None:
    lines.setdefault(loc, node.start_mark.line + 1)
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
            _walk(value_node, (*loc, key), lines, problems, path)
    elif isinstance(node, yaml.SequenceNode):
        for i, item in enumerate(node.value):
            _walk(item, (*loc, i), lines, problems, path)


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
    finally:
        loader.dispose()
    doc = YamlDoc(path=path, data=data)
    problems: list[Problem] = []
    if node is not None:
        _walk(node, (), doc.lines, problems, path)
    if problems:
        raise ConfigError(problems)
    return doc


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
    msg = str(err.get("msg", "invalid value"))
    msg = msg.removeprefix("Value error, ").removeprefix("Assertion failed, ")
    value = err.get("input")
    if kind not in ("value_error", "assertion_error") and not isinstance(value, dict | list):
        shown = repr(value)
        if len(shown) > 60:
            shown = shown[:57] + "..."
        msg += f" (got {shown})"
    return msg


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
    try:
        return model.model_validate(value, context={**HAND_WRITTEN, **(context or {})})
    except ValidationError as exc:
        raise ConfigError(problems_from_validation(doc, exc, model, root, value)) from exc
