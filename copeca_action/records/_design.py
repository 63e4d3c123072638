"""The statistical design a run was planned under, as its records name it: digests of the
scenario's thresholds and of its adaptive schedule (the settings that decide a verdict beyond
the records). A results file that travels without its scenario still says whether it needs
one: `analyze` judges records of a run with adaptive sampling or its own thresholds only with
a scenario of the same design, never at the defaults' alpha (docs/methodology.md,
Adaptive sampling).

No pydantic here: the fast results reader and `analyze` use it without loading RunRecord.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, NamedTuple

from copeca_action._util.hashing import sha256_json

if TYPE_CHECKING:
    from copeca_action.scenario._settings import Adaptive, Thresholds

DIGEST_PATTERN = r"^[0-9a-f]{16}$"
"""A design digest: the first 16 hex digits of a sha256."""


def _digest(value: Any) -> str:
    return sha256_json(value)[:16]


DEFAULT_THRESHOLDS = _digest({})
"""The digest of the built-in thresholds (every field at its default)."""


class DesignKey(NamedTuple):
    """What a record's `design` says, in any reader's hands."""

    thresholds: str
    """Digest of the thresholds' fields that differ from their defaults (so a threshold a
    later version adds, at its default, leaves the digest of an older run's design alone);
    `DEFAULT_THRESHOLDS`: the built-in ones."""
    adaptive: str | None
    """Digest of the adaptive schedule (its fields that differ from their defaults); None:
    adaptive sampling off, one look at the report's alpha."""

    @property
    def ordinary(self) -> bool:
        """The built-in thresholds, no adaptive sampling: what `analyze` without a scenario
        judges with."""
        return self.thresholds == DEFAULT_THRESHOLDS and self.adaptive is None

    def described(self) -> str:
        """"adaptive sampling and its own thresholds", or either; "the default design"."""
        parts = (["adaptive sampling"] if self.adaptive is not None else []) + (
            ["its own thresholds"] if self.thresholds != DEFAULT_THRESHOLDS else [])
        return " and ".join(parts) or "the built-in thresholds and no adaptive sampling"

    def text(self) -> str:
        """How messages name it: `thresholds 1a2b… adaptive 3c4d…` (`adaptive off`)."""
        return f"thresholds {self.thresholds}, adaptive {self.adaptive or 'off'}"


def design_of(thresholds: Thresholds, adaptive: Adaptive | None) -> DesignKey:
    """The design of a scenario's (effective) thresholds and adaptive schedule."""
    on = adaptive is not None and adaptive.enabled
    return DesignKey(_digest(thresholds.model_dump(mode="json", exclude_defaults=True)),
                     _digest(adaptive.model_dump(mode="json", exclude_defaults=True))
                     if on and adaptive is not None else None)


def design_key(value: Any) -> DesignKey | None:
    """A record's `design` as any reader holds it (a mapping, a model, a struct); None for
    none."""
    if value is None:
        return None
    if isinstance(value, dict):
        return DesignKey(value["thresholds"], value.get("adaptive"))
    return DesignKey(value.thresholds, value.adaptive)


def last_design(values: Any) -> DesignKey | None:
    """The design of the last record (in file order) that names one: a resume or an adaptive
    round appends after what came before, so the last is the run's current design."""
    for value in reversed(values):
        if value is not None:
            return design_key(value)
    return None
