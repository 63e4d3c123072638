"""Behaviour flags: cheap signals that a run went wrong in a way worth a look, each with a
threshold a reader can check against the run's own numbers."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from copeca_action.transcript import Transcript


@dataclass(frozen=True)
class FlagRules:
    snowball_min_turns: int = 4
    """Token snowball: at least this many turns, and ..."""
    snowball_growth: float = 3.0
    """... the last turn's context (input + cache) at least this multiple of the first's."""
    talkative_output_tokens: int = 2000
    """Talkative failure: an incorrect run that still wrote at least this many output tokens."""
    storm_tool_calls: int = 40
    """Tool storm: at least this many tool calls in one run, or ..."""
    storm_repeats: int = 5
    """... the same call (name and input) made at least this many times."""


DEFAULT_RULES = FlagRules()


def _context(turn_tokens: object) -> int:
    t = turn_tokens
    return int(getattr(t, "input", 0) + getattr(t, "cache_read", 0) + getattr(t, "cache_write", 0))


def token_snowball(transcript: Transcript, rules: FlagRules = DEFAULT_RULES) -> bool:
    turns = [t for t in transcript.turns if _context(t.tokens) > 0]
    if len(turns) < rules.snowball_min_turns:
        return False
    first, last = _context(turns[0].tokens), _context(turns[-1].tokens)
    return last >= rules.snowball_growth * first


def talkative_failure(transcript: Transcript, correct: bool,
                      rules: FlagRules = DEFAULT_RULES) -> bool:
    return not correct and transcript.tokens.output >= rules.talkative_output_tokens


def tool_storm(transcript: Transcript, rules: FlagRules = DEFAULT_RULES) -> bool:
    calls = transcript.tool_calls
    if len(calls) >= rules.storm_tool_calls:
        return True
    repeats = Counter((c.name, repr(sorted(c.input.items()))) for c in calls)
    return bool(repeats) and max(repeats.values()) >= rules.storm_repeats


def budget_exhausted(transcript: Transcript, cost_usd: float | None,
                     run_budget_usd: float | None) -> bool:
    """The run stopped on its own limit: max turns reached, the CLI's per-run budget stop, or
    spend at the per-run cap (not judged when the cost is unknown)."""
    if transcript.max_turns_reached or transcript.budget_exhausted:
        return True
    return run_budget_usd is not None and cost_usd is not None and cost_usd >= run_budget_usd


def flags_for(transcript: Transcript, *, correct: bool, cost_usd: float | None,
              run_budget_usd: float | None, timed_out: bool,
              rules: FlagRules = DEFAULT_RULES) -> list[str]:
    """Every flag that fires, in a fixed order."""
    out = []
    if token_snowball(transcript, rules):
        out.append("token_snowball")
    if talkative_failure(transcript, correct, rules):
        out.append("talkative_failure")
    if tool_storm(transcript, rules):
        out.append("tool_storm")
    if budget_exhausted(transcript, cost_usd, run_budget_usd):
        out.append("budget_exhausted")
    if timed_out:
        out.append("timeout")
    return out
