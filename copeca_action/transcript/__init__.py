"""Transcript: an agent CLI's raw output parsed into turns, tokens, tool calls and answer,
and what the run cost."""

from copeca_action.transcript._codex_json import parse_codex_json
from copeca_action.transcript._cost import (
    DIVERGENCE,
    PRICING_MAX_AGE_DAYS,
    RunCost,
    canonical,
    cost_of,
    price_for,
    pricing_age_warning,
    tokens_usd,
    unpriced_models,
)
from copeca_action.transcript._model import ToolCall, Transcript, Turn
from copeca_action.transcript._registry import PARSERS, Parser, parse_transcript
from copeca_action.transcript._stream_json import parse_stream_json

__all__ = [
    "DIVERGENCE",
    "PARSERS",
    "PRICING_MAX_AGE_DAYS",
    "Parser",
    "RunCost",
    "ToolCall",
    "Transcript",
    "Turn",
    "canonical",
    "cost_of",
    "parse_codex_json",
    "parse_stream_json",
    "parse_transcript",
    "price_for",
    "pricing_age_warning",
    "tokens_usd",
    "unpriced_models",
]
