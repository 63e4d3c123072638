"""A scenario's statistical settings: thresholds and adaptive sampling. Apart from the rest
of the scenario so the report (and `analyze`) can use them without loading every scenario
model."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, StrictBool, ValidationInfo, field_validator, model_validator

from copeca_action._util.model import InputModel
from copeca_action._util.percent import threshold_fraction


def _not_a_percentage(value: object, example: str) -> object:
    """A share written as a percentage (`min_adoption: 50`, `alpha: 5`) is refused saying
    so; the field's own bounds check the rest (a value above 100 is no percentage either)."""
    if isinstance(value, int | float) and not isinstance(value, bool) and 1 < value <= 100:
        raise ValueError(f"{value:g} is more than 1: this is a fraction, not a percentage "
                         f"({example}); write {value / 100:g} for {value:g}%")
    return value


class Thresholds(InputModel):
    """When a delta alerts, fails the PR, or makes the experiment invalid."""

    alert: Annotated[float, Field(ge=0, le=10)] = 0.05
    """Delta above which the comment warns (0.05 = 5% dearer per correct answer). Written
    as a fraction below 1 or a percentage (`5%`); in a YAML file a bare number of 1 or more is
    refused as ambiguous (write `10%`, or `1000%` for +1000%)."""
    fail: Annotated[float, Field(ge=0, le=10)] = 0.10
    """A regression when the CI's lower bound is above this. At most 10 (eleven times the
    base's cost per correct): past it no interval could ever call a regression, and the
    gate would be off without saying so. Written as `alert` is (`10%` or `0.10`)."""
    control_tolerance: Annotated[float, Field(gt=0, le=1)] = 0.15
    """The verdict is invalid when the control delta's CI leaves ±this. At most 1 (±100%):
    wider, the control check would never fire."""
    min_runs: Annotated[int, Field(ge=1)] = 6
    """Fewer non-infra runs per arm than this: inconclusive."""
    min_adoption: Annotated[float, Field(ge=0, le=1)] = 0.5
    """The tool arm used its tool in fewer runs than this share: invalid."""
    compare_across: list[Literal["model", "cli_version", "cost_source"]] = []
    """Differences between compared arms that this scenario makes on purpose (e.g.
    `[cli_version]` to compare two CLI releases). Arms answered by different models (the
    served model when records carry it) or CLI versions, or whose costs share no basis
    (`cost_source`: every run of one arm the CLI's own figure, every run of the other tokens
    × the price table), are otherwise `invalid`: the difference, not the tool, could explain
    the delta."""

    @field_validator("alert", "fail", mode="before")
    @classmethod
    def _as_written(cls, value: object, info: ValidationInfo) -> object:
        """`10%` is 0.1. Written in a YAML file (context `hand_written`), a bare number of 1
        or more is refused as ambiguous (`threshold_fraction`): `fail: 10` is meant as 10%
        far more often than as +1000%, which would turn the gate off without a word. A
        program's 10.0 (an action input of `1000%`, a report read back) stays +1000%."""
        if isinstance(value, str) and value.strip().endswith("%"):
            return threshold_fraction(value)
        written = info.context is not None and info.context.get("hand_written")
        if written and isinstance(value, int | float) and not isinstance(value, bool):
            return threshold_fraction(value)
        return value

    @field_validator("control_tolerance", "min_adoption", mode="before")
    @classmethod
    def _a_share(cls, value: object, info: ValidationInfo) -> object:
        return _not_a_percentage(value, "0.15 is ±15%" if info.field_name == "control_tolerance"
                                 else "0.5 is 50%")

    @model_validator(mode="after")
    def _ordered(self) -> Thresholds:
        if self.fail < self.alert:
            raise ValueError(f"fail ({self.fail}) must be at least alert ({self.alert})")
        return self


class Adaptive(InputModel):
    """Run repetitions in rounds and stop once the verdict is decided."""

    enabled: StrictBool = True
    min_repetitions: Annotated[int, Field(ge=1, le=1000)] = 2
    """Repetitions run before the first look."""
    step: Annotated[int, Field(ge=1, le=1000)] = 1
    """Repetitions added per round."""
    max_repetitions: Annotated[int, Field(ge=1, le=1000)] = 10
    """The most repetitions run; at most 1000, as `repetitions` (which adaptive sampling
    replaces)."""
    alpha: Annotated[float, Field(gt=0, lt=0.5)] = 0.05
    """Overall error rate, spent across looks (see docs/methodology.md)."""

    @field_validator("alpha", mode="before")
    @classmethod
    def _a_rate(cls, value: object) -> object:
        return _not_a_percentage(value, "0.05 is 5%")

    @model_validator(mode="after")
    def _ordered(self) -> Adaptive:
        if self.max_repetitions < self.min_repetitions:
            raise ValueError("max_repetitions must be at least min_repetitions")
        return self
