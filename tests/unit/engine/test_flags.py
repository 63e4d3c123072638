from __future__ import annotations

from copeca_action.engine import budget_exhausted, flags_for
from copeca_action.transcript import Transcript


def test_budget_exhausted_from_the_cli_or_the_cap() -> None:
    assert budget_exhausted(Transcript(parser="stream_json", budget_exhausted=True), 0.0, None)
    assert budget_exhausted(Transcript(parser="stream_json", max_turns_reached=True), 0.0, None)
    assert budget_exhausted(Transcript(parser="stream_json"), 0.5, 0.5)
    assert not budget_exhausted(Transcript(parser="stream_json"), 0.4, 0.5)
    # an unknown cost is not judged against the cap (never read as $0)
    assert not budget_exhausted(Transcript(parser="stream_json"), None, 0.5)


def test_no_flags_on_a_quiet_run() -> None:
    assert flags_for(Transcript(parser="stream_json"), correct=True, cost_usd=0.0,
                     run_budget_usd=None, timed_out=False) == []
