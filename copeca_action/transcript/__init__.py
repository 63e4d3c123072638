"""Transcript: an agent CLI's raw output parsed into turns, tokens, tool calls and answer."""

from copeca_action.transcript._model import ToolCall, Transcript, Turn

__all__ = ["ToolCall", "Transcript", "Turn"]
