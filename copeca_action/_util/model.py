"""Base classes for every pydantic model: strict inputs, frozen records. Field docstrings
become descriptions when schemas are generated (`_util.docstrings`), not at every start."""

from __future__ import annotations

import types
import typing
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationInfo, field_validator

_SCALARS: dict[tuple[type, str], frozenset[type]] = {}


def _scalar_kinds(annotation: Any) -> frozenset[type]:
    """Which of bool, int and float a field's annotation accepts directly (through
    `Annotated` and unions, not inside lists or mappings, whose items are their own)."""
    if annotation in (bool, int, float):
        return frozenset({annotation})
    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:
        return _scalar_kinds(typing.get_args(annotation)[0])
    if origin is typing.Union or origin is types.UnionType:
        found: frozenset[type] = frozenset()
        for arg in typing.get_args(annotation):
            found |= _scalar_kinds(arg)
        return found
    return frozenset()


def _bool_in_numbers(annotation: Any, value: Any) -> bool:
    """Whether `value` holds a true/false where `annotation` takes only numbers, looking
    through `Annotated`, optional values, lists, tuples and mapping values (`lines: [true,
    184]` is a span from line 1)."""
    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:
        return _bool_in_numbers(typing.get_args(annotation)[0], value)
    if origin is typing.Union or origin is types.UnionType:
        members = [a for a in typing.get_args(annotation) if a is not type(None)]
        return len(members) == 1 and _bool_in_numbers(members[0], value)
    if isinstance(value, bool):
        kinds = _scalar_kinds(annotation)
        return bool(kinds) and bool not in kinds
    args = typing.get_args(annotation)
    if origin in (list, tuple) and isinstance(value, list | tuple) and args:
        if origin is tuple and not (len(args) == 2 and args[1] is Ellipsis):
            return any(_bool_in_numbers(a, v) for a, v in zip(args, value, strict=False))
        return any(_bool_in_numbers(args[0], v) for v in value)
    if origin is dict and isinstance(value, dict) and len(args) == 2:
        return any(_bool_in_numbers(args[1], v) for v in value.values())
    return False


class InputModel(BaseModel):
    """Hand-written YAML input: unknown keys are errors, values are immutable once loaded.

    A number field refuses `true`/`false` (lax pydantic reads `repetitions: true` as 1 and a
    price of `true` as $1), and a true/false field refuses anything but `true`/`false`
    (`vendor_cost: 1` or `"yes"`): each is a typo, never a value to guess. Values are taken
    as typed (`strict`): a number in quotes (`repetitions: "2"`, `budget_usd: "5"`) is
    text, not a number, and a whole-number field refuses `2.0`; lax pydantic converted
    both without a word. A field that reads text on purpose (a threshold's `10%`) converts
    it in a validator of its own before this check."""

    model_config = ConfigDict(extra="forbid", frozen=True,
                              str_strip_whitespace=False, allow_inf_nan=False, strict=True)

    @field_validator("*", mode="before")
    @classmethod
    def _no_bool_for_number(cls, value: Any, info: ValidationInfo) -> Any:
        name = info.field_name
        field = cls.model_fields.get(name or "")
        if field is None:
            return value
        key = (cls, name or "")
        kinds = _SCALARS.get(key)
        if kinds is None:
            kinds = _SCALARS[key] = _scalar_kinds(field.annotation)
        if kinds == {bool}:
            if not isinstance(value, bool) and value is not None:
                raise ValueError(f"Input should be a valid boolean, true or false (got {value!r})")
        elif kinds and bool not in kinds and isinstance(value, bool):
            raise ValueError(f"expected a number, not {str(value).lower()}")
        elif isinstance(value, list | tuple | dict) and _bool_in_numbers(field.annotation, value):
            raise ValueError("expected numbers, found true or false among them")
        return value


class RecordModel(BaseModel):
    """Persisted data (records, plans, reports): frozen, documented, unknown keys rejected."""

    model_config = ConfigDict(extra="forbid", frozen=True)
