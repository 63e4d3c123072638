"""Adaptive sampling: after each round of repetitions, is the verdict already decided?

Looks happen at min_repetitions, then every `step` repetitions, up to max_repetitions.
Each look k gets a share alpha_k of the overall alpha from the spending function
alpha·t^RHO (t = repetitions / max_repetitions), and judges with a two-sided 1−alpha_k
interval. Since the shares sum to alpha, the union bound keeps the chance of any false
decision over all looks at most alpha, whatever the correlation between looks.
"""

from __future__ import annotations

from collections.abc import Iterable

from copeca_action.records import RunRecord
from copeca_action.report._build import Settings, build_report, resolve_look
from copeca_action.report._model import ReportModel, Verdict
from copeca_action.report._spending import current_look, schedule, spent
from copeca_action.report._table import RecordTable, table_from_records
from copeca_action.scenario import Adaptive, Scenario

DECISIVE: tuple[Verdict, ...] = ("improvement", "regression")


class Decision(ReportModel):
    """What the engine does after a round."""

    stop: bool
    verdict: Verdict
    """The verdict at this look's alpha."""
    reason: str
    repetitions: int
    """Repetitions completed (the highest repetition index seen + 1)."""
    look: int
    """1-based index of this look in the schedule."""
    looks: int
    alpha_look: float
    """This look's share of the overall alpha (with one tool comparison, its intervals are
    1 − alpha_look)."""
    comparisons: int = 1
    """Tool comparisons sharing the look's alpha (Bonferroni, `Report.multiplicity`)."""
    alpha: float
    """What the verdict was judged at: alpha_look / comparisons, the report's `alpha` (every
    interval is 1 − alpha)."""
    alpha_spent: float
    """Alpha spent by this and earlier looks."""
    next_repetitions: int | None
    """Run repetitions up to this count next; None when stopping."""


def decide(records: Iterable[RunRecord] | RecordTable, scenario: Scenario) -> Decision:
    """Called by the engine after each round; pure (the records and scenario decide)."""
    adaptive = scenario.adaptive or Adaptive(enabled=False, min_repetitions=scenario.repetitions,
                                             max_repetitions=scenario.repetitions)
    table = records if isinstance(records, RecordTable) else table_from_records(records)
    reps = schedule(adaptive)
    report = build_report(table, Settings.from_scenario(scenario, adaptive=adaptive,
                                                        power_experiments=0),
                          scenario=scenario.name)
    m = report.multiplicity
    if report.look is not None:
        look, alpha, done = report.look.look, report.look.alpha_look, report.look.repetitions
    else:  # adaptive sampling off: one look after all repetitions, at the report's alpha
        reached = table.repetition[table.reached]
        done = int(reached.max()) + 1 if reached.size else 0
        look, alpha = current_look(adaptive, done), m.alpha_family if m else report.alpha
    last = done >= adaptive.max_repetitions or not adaptive.enabled
    decisive = report.verdict in DECISIVE and done >= adaptive.min_repetitions
    stop = last or decisive
    if decisive:
        reason = f"decided at look {look} of {len(reps)}: {'; '.join(report.verdict_reasons)}"
    elif not adaptive.enabled:
        reason = "adaptive sampling is off: one look after all repetitions"
    elif last:
        reason = "maximum repetitions reached"
    else:
        reason = "not decided yet"
    nxt = None if stop else int(next((r for r in reps if r > done), adaptive.max_repetitions))
    return Decision(stop=stop, verdict=report.verdict, reason=reason, repetitions=done,
                    look=look, looks=len(reps), alpha_look=alpha,
                    comparisons=m.comparisons if m else 1, alpha=report.alpha,
                    alpha_spent=spent(adaptive, reps[look - 1]), next_repetitions=nxt)


def alpha_for(scenario: Scenario | None, table: RecordTable) -> float:
    """The alpha a final report judges with: the last look's share under adaptive sampling
    (so the report's verdict is the engine's stopping decision), else 0.05. `build_report`
    resolves it itself from `Settings.adaptive` (`Settings.from_scenario` sets it)."""
    settings = Settings.from_scenario(scenario) if scenario is not None else Settings()
    return resolve_look(table, settings)[0].alpha

