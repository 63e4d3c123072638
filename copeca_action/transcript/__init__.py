"""Transcript: an agent CLI's raw output parsed into turns, tokens, tool calls and answer,
and what the run cost."""

import importlib as _importlib
import typing as _typing

if _typing.TYPE_CHECKING:
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
    "canonical",
    "cost_of",
    "parse_codex_json",
    "parse_gemini_json",
    "parse_opencode_json",
    "parse_qwen_json",
    "parse_stream_json",
    "parse_transcript",
    "price_for",
    "pricing_age_warning",
    "tokens_usd",
    "unpriced_models",
]

_LAZY: dict[str, str] = {
    "DIVERGENCE": "copeca_action.transcript._cost",
    "PARSERS": "copeca_action.transcript._registry",
    "PRICING_MAX_AGE_DAYS": "copeca_action.transcript._cost",
    "Parser": "copeca_action.transcript._registry",
    "RunCost": "copeca_action.transcript._cost",
    "ToolCall": "copeca_action.transcript._model",
    "Transcript": "copeca_action.transcript._model",
    "Turn": "copeca_action.transcript._model",
    "canonical": "copeca_action.transcript._cost",
    "cost_of": "copeca_action.transcript._cost",
    "parse_codex_json": "copeca_action.transcript._codex_json",
    "parse_gemini_json": "copeca_action.transcript._gemini_json",
    "parse_opencode_json": "copeca_action.transcript._opencode_json",
    "parse_qwen_json": "copeca_action.transcript._qwen_json",
    "parse_stream_json": "copeca_action.transcript._stream_json",
    "parse_transcript": "copeca_action.transcript._registry",
    "price_for": "copeca_action.transcript._cost",
    "pricing_age_warning": "copeca_action.transcript._cost",
    "tokens_usd": "copeca_action.transcript._cost",
    "unpriced_models": "copeca_action.transcript._cost",
}
"""Each public name and its module, imported on first use (PEP 562): importing one
submodule of this package does not load the others."""


def __getattr__(name: str) -> _typing.Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(_importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))
