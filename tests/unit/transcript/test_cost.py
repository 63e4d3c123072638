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
    assert cost.vendor_usd == 0.0077475 and not cost.diverged
    # The runner's explicit table is the headline; the CLI's own estimate is kept beside it.
    assert cost.source == "computed" and cost.used_usd == cost.computed_usd


def test_codex_reports_no_cost_so_computed_is_used(fixtures: Path) -> None:
    d = fixtures / "codex_ok"
    t = parse_codex_json(d / "stdout.jsonl", d / "codex_home")
    t = t.model_copy(update={"tokens_by_model": {"gpt-6.1-sol": t.tokens}})
    cost = cost_of(t, CODEX, "gpt-6.1-sol")
    # 2700 × 2 + 4100 × 0.10 + 65 × 10 = 6460 µ$
    assert cost.computed_usd == pytest.approx(0.00646, abs=1e-12)
    assert cost.source == "computed" and cost.used_usd == cost.computed_usd
    assert cost.vendor_usd is None and not cost.diverged


def test_codex_cache_writes_are_priced() -> None:
    # gpt-6.1-sol bills cache writes at 2.50; gpt-5 (no separate write price) as input.
    t = Transcript(parser="codex_json", tokens=Tokens(cache_write=1_000_000),
                   tokens_by_model={"gpt-6.1-sol": Tokens(cache_write=1_000_000)})
    assert cost_of(t, CODEX, "gpt-6.1-sol").used_usd == pytest.approx(2.50)
    t5 = t.model_copy(update={"tokens_by_model": {"gpt-5": Tokens(cache_write=1_000_000)}})
    assert cost_of(t5, CODEX, "gpt-5").used_usd == pytest.approx(1.25)


def test_one_hour_cache_writes_are_priced_apart() -> None:
    tokens = Tokens(cache_write=3_000_000, cache_write_1h=1_000_000)
    cost = cost_of(_t(tokens, None, "claude-sonnet-4-5"), CLAUDE, "claude-sonnet-4-5")
    assert cost.computed_usd == pytest.approx(2 * 3.75 + 6.00)


def test_a_token_class_without_a_price_makes_the_cost_unknown() -> None:
    # OpenAI has no 1-hour cache: such tokens are unknown spend, not free.
    t = Transcript(parser="codex_json", tokens=Tokens(cache_write=10, cache_write_1h=10),
                   tokens_by_model={"gpt-6.1-sol": Tokens(cache_write=10, cache_write_1h=10)})
    cost = cost_of(t, CODEX, "gpt-6.1-sol")
    assert cost.used_usd is None and cost.source == "none"
    assert cost.unknown_reason is not None and "cache_write_1h" in cost.unknown_reason


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


def test_unpriced_model_is_unknown_never_zero() -> None:
    cost = cost_of(_t(Tokens(input=10), None, "mystery-model"), CLAUDE, "mystery-model")
    assert cost.computed_usd is None and cost.source == "none" and cost.used_usd is None
    assert cost.unpriced_models == ["mystery-model"]
    assert cost.unknown_reason is not None and "mystery-model" in cost.unknown_reason
    # A CLI that reports its own cost: that figure stands in, and says so.
    with_vendor = cost_of(_t(Tokens(input=10), 0.5, "mystery-model"), CLAUDE, "mystery-model")
    assert with_vendor.source == "vendor" and with_vendor.used_usd == 0.5
    codex = cost_of(Transcript(parser="codex_json", tokens=Tokens(input=10)), CODEX, "gpt-7")
    assert codex.used_usd is None and "reports no cost" in (codex.unknown_reason or "")


def test_usage_the_cli_did_not_report_is_unknown() -> None:
    t = Transcript(parser="codex_json", usage_complete=False, tokens=Tokens(input=10),
                   tokens_by_model={"gpt-6.1-sol": Tokens(input=10)})
    assert cost_of(t, CODEX, "gpt-6.1-sol").used_usd is None


def test_no_tokens_costs_nothing() -> None:
    cost = cost_of(_t(Tokens()), CODEX, "gpt-6.1-sol")
    assert cost.computed_usd == 0 and cost.source == "computed" and cost.used_usd == 0


def test_exact_ids_and_aliases_only_no_prefix_guessing() -> None:
    assert price_for(CLAUDE, "claude-sonnet-4-5-20250929") == CLAUDE.pricing["claude-sonnet-4-5"]
    assert price_for(CLAUDE, "claude-opus-5-5[1m]") == CLAUDE.pricing["claude-opus-5-5"]
    assert price_for(CLAUDE, "claude-opus-5-5-20261001") is None
    assert price_for(CLAUDE, "claude-sonnet-4-5[1m]") is None  # long context bills higher
    assert price_for(CODEX, "gpt-6.1-sol") != price_for(CODEX, "gpt-6-sol")
    assert price_for(CODEX, "gpt-5-pro") is None  # once priced as gpt-5 (50 × too low)
    assert price_for(CODEX, "gpt-5-mini") != price_for(CODEX, "gpt-5")
    assert price_for(CODEX, "gpt-7") is None


def test_served_model_is_priced_and_flagged() -> None:
    t = Transcript(parser="stream_json", model="claude-sonnet-4-5",
                   served_model="claude-haiku-4-5", tokens=Tokens(output=1_000_000),
                   tokens_by_model={"claude-haiku-4-5": Tokens(output=1_000_000)})
    cost = cost_of(t, CLAUDE, "claude-sonnet-4-5")
    assert cost.used_usd == pytest.approx(5.0) and cost.remapped
    same = t.model_copy(update={"served_model": "claude-sonnet-4-5-20250929",
                                "tokens_by_model": {"claude-sonnet-4-5-20250929":
                                                    Tokens(output=1_000_000)}})
    alias = cost_of(same, CLAUDE, "claude-sonnet-4-5")
    assert alias.used_usd == pytest.approx(15.0) and not alias.remapped


def test_every_shipped_price_is_complete_and_sourced() -> None:
    for runner in (CLAUDE, CODEX):
        for model, price in runner.pricing.items():
            assert price.source.startswith("https://"), model
            assert price.checked <= runner.pricing_updated, model
            assert price.input > 0 and price.output > 0, model
            assert price.cache_read is not None and price.cache_write_5m is not None, model


def test_pricing_older_than_sixty_days_warns() -> None:
    day = CLAUDE.pricing_updated
    assert pricing_age_warning(CLAUDE, day + dt.timedelta(days=60)) is None
    warning = pricing_age_warning(CLAUDE, day + dt.timedelta(days=61))
    assert warning is not None and "61 days" in warning and "runners/claude.yaml" in warning
    assert pricing_age_warning(CLAUDE, day) is None
    assert pricing_age_warning(CLAUDE, day - dt.timedelta(days=1)) is None  # a time zone
    future = pricing_age_warning(CLAUDE, day - dt.timedelta(days=3))  # pricing_updated ahead
    assert future is not None and "3 days after the run's date" in future


def test_budget_stop_costs_agree(fixtures: Path) -> None:
    cost = cost_of(parse_stream_json(fixtures / "claude_budget.jsonl"), CLAUDE,
                   "claude-sonnet-4-5")
    assert cost.computed_usd == pytest.approx(0.0111) and not cost.diverged
