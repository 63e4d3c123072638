"""What a run cost: Σ tokens × the runner's prices, beside what the CLI itself reported.

No unknown ever becomes a number: a model without a price, tokens of a class the table
leaves `null`, or usage the CLI did not report make the cost None with a reason."""

from __future__ import annotations

import datetime as dt
from typing import Annotated

from pydantic import Field

from copeca_action._util.model import RecordModel
from copeca_action.records import CostSource, Tokens
from copeca_action.scenario import Pricing, Runner
from copeca_action.transcript._model import Transcript

DIVERGENCE = 0.05
"""Vendor and computed cost differing by more than this share of the larger is flagged."""
PRICING_MAX_AGE_DAYS = 60

Usd = Annotated[float, Field(ge=0)]


class RunCost(RecordModel):
    """Both costs of one run and which one counts in spend."""

    vendor_usd: Usd | None = None
    """What the CLI reported (Claude Code's `total_cost_usd`); None when it reports none."""
    computed_usd: Usd | None = None
    """Σ tokens × pricing; None when a model the run used has no price in the runner, or
    tokens of a class its price leaves null."""
    used_usd: Usd | None = None
    """The runner's `cost_headline` (the other one when the headline is unknown); None:
    unknown, see `unknown_reason`."""
    source: CostSource = "none"
    """Which one `used_usd` is: `vendor`, `computed`, or `none` (unknown)."""
    unknown_reason: str | None = None
    diverged: bool = False
    """Both known and more than 5% apart: a pricing table or a parser is wrong."""
    unpriced_models: list[str] = []
    served_model: str | None = None
    """The model the endpoint served (the CLI's naming), when the transcript shows it."""
    remapped: bool = False
    """The served model is not the requested one (nor one of its aliases)."""


def price_for(runner: Runner, model: str) -> Pricing | None:
    """The runner's price for an exact model id or an alias; never a guess."""
    found = runner.price_of(model)
    return found[1] if found else None


def canonical(runner: Runner, model: str) -> str:
    """The priced id `model` stands for (itself when unpriced)."""
    found = runner.price_of(model)
    return found[0] if found else model


def tokens_usd(tokens: Tokens, price: Pricing) -> tuple[float | None, list[str]]:
    """The tokens' cost, or None and the token classes the price leaves null."""
    parts = {"input": (tokens.input, price.input), "output": (tokens.output, price.output),
             "cache_read": (tokens.cache_read, price.cache_read),
             "cache_write_5m": (max(0, tokens.cache_write - tokens.cache_write_1h),
                                price.cache_write_5m),
             "cache_write_1h": (min(tokens.cache_write_1h, tokens.cache_write),
                                price.cache_write_1h)}
    missing = [name for name, (n, p) in parts.items() if n and p is None]
    if missing:
        return None, missing
    return sum(n * (p or 0.0) for n, p in parts.values()) / 1_000_000, []


def cost_of(transcript: Transcript, runner: Runner, model: str) -> RunCost:
    """Price every model's tokens: the ones the transcript names (the served models), else
    the requested `model`. The runner's `cost_headline` says which cost counts."""
    served = transcript.served_model
    named = served or transcript.model or model
    usage = dict(transcript.tokens_by_model) or (
        {named: transcript.tokens} if transcript.tokens.total else {})
    computed: float | None = 0.0
    unpriced: list[str] = []
    reasons: list[str] = []
    for name, tokens in sorted(usage.items()):
        price = price_for(runner, name)
        if price is None:
            unpriced.append(name)
            continue
        usd, missing = tokens_usd(tokens, price)
        if usd is None:
            reasons.append(f"{name} used {', '.join(missing)} tokens, which "
                           f"runners/{runner.name}.yaml leaves null (no such price)")
        elif computed is not None:
            computed += usd
    if unpriced:
        reasons.insert(0, f"no price for {', '.join(unpriced)} in runners/{runner.name}.yaml")
    if not transcript.usage_complete:
        reasons.append("the CLI's output names model responses without their usage, or "
                       "gives counts no run reaches")
    if reasons:
        computed = None
    vendor = transcript.vendor_cost_usd
    costs: dict[CostSource, float | None] = {"computed": computed, "vendor": vendor}
    order: tuple[CostSource, CostSource] = (
        ("computed", "vendor") if runner.cost_headline == "computed" else ("vendor", "computed"))
    source: CostSource = next((k for k in order if costs[k] is not None), "none")
    used = costs.get(source)
    unknown = None
    if used is None:
        unknown = "; ".join(reasons) or "the CLI reported no cost and no usage"
        if not runner.vendor_cost:
            unknown += " (the CLI reports no cost of its own)"
    remapped = served is not None and canonical(runner, served) != canonical(runner, model)
    return RunCost(vendor_usd=vendor, computed_usd=computed, used_usd=used, source=source,
                   unknown_reason=unknown, diverged=diverges(vendor, computed),
                   unpriced_models=unpriced, served_model=served, remapped=remapped)


def diverges(vendor: float | None, computed: float | None) -> bool:
    if vendor is None or computed is None:
        return False
    return abs(vendor - computed) > DIVERGENCE * max(vendor, computed)


def unpriced_models(runner: Runner, models: list[str]) -> list[str]:
    """The models a runner has no price for (exact id or alias)."""
    return [m for m in models if price_for(runner, m) is None]


def pricing_age_warning(runner: Runner, today: dt.date | None = None) -> str | None:
    """A warning when the runner's prices were last checked more than 60 days before
    `today` (the run's date; default: today), or after it."""
    age = ((today or dt.date.today()) - runner.pricing_updated).days
    if age < -1:  # a typo (2062 for 2026) would silence the age warning for decades; a day
        # ahead is a time zone
        return (f"runner {runner.name!r}: pricing_updated is {runner.pricing_updated}, "
                f"{-age} days after the run's date; its age cannot be told, so computed costs "
                f"may be wrong. Correct the date in runners/{runner.name}.yaml")
    if age <= PRICING_MAX_AGE_DAYS:
        return None
    return (f"runner {runner.name!r}: pricing_updated is {runner.pricing_updated} ({age} days "
            f"before the run, more than {PRICING_MAX_AGE_DAYS}); computed costs may be wrong. "
            f"Check the vendor's price pages and update runners/{runner.name}.yaml")
