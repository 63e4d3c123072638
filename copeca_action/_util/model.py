"""Base classes for every pydantic model: strict inputs, frozen records. Field docstrings
become descriptions when schemas are generated (`_util.docstrings`), not at every start."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class InputModel(BaseModel):
    """Hand-written YAML input: unknown keys are errors, values are immutable once loaded."""

    model_config = ConfigDict(extra="forbid", frozen=True,
                              str_strip_whitespace=False, allow_inf_nan=False, strict=False)


class RecordModel(BaseModel):
    """Persisted data (records, plans, reports): frozen, documented, unknown keys rejected."""

    model_config = ConfigDict(extra="forbid", frozen=True)
