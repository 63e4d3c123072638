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


class InputModel(BaseModel):
    """Hand-written YAML input: unknown keys are errors, values are immutable once loaded.

    A number field refuses `true`/`false` (lax pydantic reads `repetitions: true` as 1 and a
    price of `true` as $1), and a true/false field refuses anything but `true`/`false`
    (`vendor_cost: 1` or `"yes"`): each is a typo, never a value to guess."""

    model_config = ConfigDict(extra="forbid", frozen=True,
                              str_strip_whitespace=False, allow_inf_nan=False, strict=False)

    @field_validator("*", mode="before")
    @classmethod
    def _no_bool_for_number(cls, value: Any, info: ValidationInfo) -> Any:
        name = info.field_name
        if name is None:
            return value
        key = (cls, name)
        kinds = _SCALARS.get(key)
        if kinds is None:
            field = cls.model_fields.get(name)
            kinds = _scalar_kinds(field.annotation) if field is not None else frozenset()
            _SCALARS[key] = kinds
        if not kinds:
            return value
        if kinds == {bool}:
            if not isinstance(value, bool) and value is not None:
                raise ValueError(f"Input should be a valid boolean, true or false (got {value!r})")
        elif bool not in kinds and isinstance(value, bool):
            raise ValueError(f"expected a number, not {str(value).lower()}")
        return value


class RecordModel(BaseModel):
    """Persisted data (records, plans, reports): frozen, documented, unknown keys rejected."""

    model_config = ConfigDict(extra="forbid", frozen=True)
