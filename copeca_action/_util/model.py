"""Base classes for every pydantic model: strict inputs, frozen records, field docstrings."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class InputModel(BaseModel):
    """Hand-written YAML input: unknown keys are errors, values are immutable once loaded."""

    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True,
                              str_strip_whitespace=False, allow_inf_nan=False, strict=False)


class RecordModel(BaseModel):
    """Persisted data (records, plans, reports): frozen, documented, unknown keys rejected."""

    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)
