"""Transcript: an agent CLI's raw output parsed into turns, tokens, tool calls and answer,
and what the run cost."""

from copeca_action.transcript._codex_json import parse_codex_json
from copeca_action.transcript._cost import (
    DIVERGENCE,
    PRICING_MAX_AGE_DAYS,
    RunCost,
    cost_of,
    price_for,
    pricing_age_warning,
)
from copeca_action.transcript._gemini_json import parse_gemini_json
from copeca_action.transcript._model import ToolCall, Transcript, Turn
from copeca_action.transcript._opencode_json import parse_opencode_json
from copeca_action.transcript._qwen_json import parse_qwen_json
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
    "cost_of",
    "parse_codex_json",
    "parse_gemini_json",
    "parse_opencode_json",
    "parse_qwen_json",
    "parse_stream_json",
    "parse_transcript",
    "price_for",
    "pricing_age_warning",
]
