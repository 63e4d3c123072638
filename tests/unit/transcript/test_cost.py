from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from copeca_action.records import Tokens
from copeca_action.scenario import load_runner
from copeca_action.transcript import (
    Transcript,
    cost_of,
    parse_codex_json,
    parse_stream_json,
    price_for,
    pricing_age_warning,
)

ROOT = Path(__file__).resolve().parents[3]
CLAUDE = load_runner(ROOT / "runners" / "claude.yaml")
CODEX = load_runner(ROOT / "runners" / "codex.yaml")


def _t(tokens: Tokens, vendor: float | None = None, model: str | None = None,
       by_model: dict[str, Tokens] | None = None) -> Transcript:
    return Transcript(parser="stream_json", tokens=tokens, vendor_cost_usd=vendor,
                      model=model, tokens_by_model=by_model or {})


def test_computed_matches_what_claude_code_charged(fixtures: Path) -> None:
    # 1440 × 3 + 350 × 3.75 + 3200 × 0.30 + 77 × 15 = 7747.5 µ$
    t = parse_stream_json(fixtures / "claude_ok.jsonl")
    cost = cost_of(t, CLAUDE, "claude-sonnet-4-5")
    assert cost.computed_usd == pytest.approx(0.0077475, abs=1e-12)
    assert cost.vendor_usd == 0.0077475 and cost.source == "vendor"
    assert cost.used_usd == 0.0077475 and not cost.diverged


def test_codex_reports_no_cost_so_computed_is_used(fixtures: Path) -> None:
    d = fixtures / "codex_ok"
    t = parse_codex_json(d / "stdout.jsonl", d / "codex_home")
    t = t.model_copy(update={"tokens_by_model": {"gpt-6.1-sol": t.tokens}})
    cost = cost_of(t, CODEX, "gpt-6.1-sol")
    # 2700 × 2 + 4100 × 0.10 + 65 × 10 = 6460 µ$
    assert cost.computed_usd == pytest.approx(0.00646, abs=1e-12)
    assert cost.source == "computed" and cost.used_usd == cost.computed_usd
    assert cost.vendor_usd is None and not cost.diverged


def test_divergence_over_five_percent_is_flagged() -> None:
    tokens = Tokens(input=1_000_000)  # $3.00 computed for sonnet 4.5
    # More than 5% of the larger of the two, either way round.
    assert cost_of(_t(tokens, 3.20, "claude-sonnet-4-5"), CLAUDE, "x").diverged
    assert not cost_of(_t(tokens, 3.15, "claude-sonnet-4-5"), CLAUDE, "x").diverged
    assert not cost_of(_t(tokens, 2.86, "claude-sonnet-4-5"), CLAUDE, "x").diverged
    assert cost_of(_t(tokens, 2.84, "claude-sonnet-4-5"), CLAUDE, "x").diverged


def test_every_model_priced_apart() -> None:
    by_model = {"claude-sonnet-4-5": Tokens(output=1_000_000),
                "claude-haiku-4-5": Tokens(input=1_000_000)}
    cost = cost_of(_t(Tokens(), None, "claude-sonnet-4-5", by_model), CLAUDE,
                   "claude-sonnet-4-5")
    assert cost.computed_usd == pytest.approx(15.0 + 1.0)


def test_unpriced_model_leaves_computed_unknown() -> None:
    cost = cost_of(_t(Tokens(input=10), None, "mystery-model"), CLAUDE, "mystery-model")
    assert cost.computed_usd is None and cost.source == "none" and cost.used_usd == 0
    assert cost.unpriced_models == ["mystery-model"]
    with_vendor = cost_of(_t(Tokens(input=10), 0.5, "mystery-model"), CLAUDE, "mystery-model")
    assert with_vendor.source == "vendor" and with_vendor.used_usd == 0.5


def test_no_tokens_costs_nothing() -> None:
    cost = cost_of(_t(Tokens()), CODEX, "gpt-6.1-sol")
    assert cost.computed_usd == 0 and cost.source == "computed" and cost.used_usd == 0


def test_dated_and_suffixed_model_ids_find_their_price() -> None:
    assert price_for(CLAUDE, "claude-sonnet-4-5-20250929") == CLAUDE.pricing["claude-sonnet-4-5"]
    assert price_for(CLAUDE, "claude-opus-5-5[1m]") == CLAUDE.pricing["claude-opus-5-5"]
    assert price_for(CLAUDE, "claude-opus-5-5-20261001") == CLAUDE.pricing["claude-opus-5-5"]
    assert price_for(CODEX, "gpt-6.1-sol") != price_for(CODEX, "gpt-6-sol")
    assert price_for(CODEX, "gpt-7") is None


def test_pricing_older_than_sixty_days_warns() -> None:
    day = CLAUDE.pricing_updated
    assert pricing_age_warning(CLAUDE, day + dt.timedelta(days=60)) is None
    warning = pricing_age_warning(CLAUDE, day + dt.timedelta(days=61))
    assert warning is not None and "61 days" in warning and "runners/claude.yaml" in warning


def test_budget_stop_costs_agree(fixtures: Path) -> None:
    cost = cost_of(parse_stream_json(fixtures / "claude_budget.jsonl"), CLAUDE,
                   "claude-sonnet-4-5")
    assert cost.computed_usd == pytest.approx(0.0111) and not cost.diverged
