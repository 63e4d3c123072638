"""What a run cost: Σ tokens × the runner's prices, beside what the CLI itself reported."""

from __future__ import annotations

import datetime as dt
import re
from typing import Annotated

from pydantic import Field

from copeca_action._util.model import RecordModel
from copeca_action.records import CostSource, Tokens
from copeca_action.scenario import Pricing, Runner
from copeca_action.transcript._model import Transcript

DIVERGENCE = 0.05
"""Vendor and computed cost differing by more than this share of the larger is flagged."""
PRICING_MAX_AGE_DAYS = 60
_DATE_SUFFIX = re.compile(r"(-\d{8}|@\d{8}|-latest|\[1m\])$")

Usd = Annotated[float, Field(ge=0)]


class RunCost(RecordModel):
    """Both costs of one run and which one counts in spend."""

    vendor_usd: Usd | None = None
    """What the CLI reported (Claude Code's `total_cost_usd`); None when it reports none."""
    computed_usd: Usd | None = None
    """Σ tokens × pricing; None when a model the run used has no price in the runner."""
    used_usd: Usd = 0.0
    source: CostSource = "none"
    """`vendor` when the CLI reported a cost, else `computed`, else `none`."""
    diverged: bool = False
    """Both known and more than 5% apart: a pricing table or a parser is wrong."""
    unpriced_models: list[str] = []


def price_for(runner: Runner, model: str) -> Pricing | None:
    """The runner's price for a model id: exact, then without a date/alias suffix, then the
    longest priced id the model id starts with (`claude-sonnet-4-5-20250929`)."""
    if model in runner.pricing:
        return runner.pricing[model]
    base = _DATE_SUFFIX.sub("", model)
    if base in runner.pricing:
        return runner.pricing[base]
    prefixes = [k for k in runner.pricing if base.startswith(k + "-")]
    return runner.pricing[max(prefixes, key=len)] if prefixes else None


def tokens_usd(tokens: Tokens, price: Pricing) -> float:
    return (tokens.input * price.input + tokens.output * price.output
            + tokens.cache_write * price.cache_write
            + tokens.cache_read * price.cache_read) / 1_000_000


def cost_of(transcript: Transcript, runner: Runner, model: str) -> RunCost:
    """Price every model's tokens (the requested `model` when the CLI named none)."""
    usage = dict(transcript.tokens_by_model) or (
        {transcript.model or model: transcript.tokens} if transcript.tokens.total else {})
    computed: float | None = 0.0
    unpriced: list[str] = []
    for name, tokens in sorted(usage.items()):
        price = price_for(runner, name) or (price_for(runner, model)
                                            if name == transcript.model else None)
        if price is None:
            unpriced.append(name)
        elif computed is not None:
            computed += tokens_usd(tokens, price)
    if unpriced:
        computed = None
    vendor = transcript.vendor_cost_usd
    source: CostSource
    if vendor is not None:
        used, source = vendor, "vendor"
    elif computed is not None:
        used, source = computed, "computed"
    else:
        used, source = 0.0, "none"
    return RunCost(vendor_usd=vendor, computed_usd=computed, used_usd=used,
                   source=source,
                   diverged=diverges(vendor, computed), unpriced_models=unpriced)


def diverges(vendor: float | None, computed: float | None) -> bool:
    if vendor is None or computed is None:
        return False
    return abs(vendor - computed) > DIVERGENCE * max(vendor, computed)


def pricing_age_warning(runner: Runner, today: dt.date | None = None) -> str | None:
    """A warning when the runner's prices were last checked more than 60 days ago."""
    age = ((today or dt.date.today()) - runner.pricing_updated).days
    if age <= PRICING_MAX_AGE_DAYS:
        return None
    return (f"runner {runner.name!r}: pricing_updated is {runner.pricing_updated} ({age} days "
            f"ago, more than {PRICING_MAX_AGE_DAYS}); computed costs may be wrong. Check the "
            f"vendor's price page and update runners/{runner.name}.yaml")
