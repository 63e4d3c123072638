"""Spend the statistics do not see: attempts that were excluded or retried (their money was
still spent), and counted runs whose cost is unknown (left out of the statistics, never
counted as 0: the comparisons of their arms are then `invalid`, and so is the verdict unless
a comparison they take no part in is a regression)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from copeca_action.records._columns import Coded, Columns, count_values
from copeca_action.records._kinds import MAX_RUN_COST_USD as MAX_RUN_COST_USD
from copeca_action.records._kinds import NOT_REACHED as _NOT_COUNTED
from copeca_action.report._model import Comparison, Verdict


@dataclass(frozen=True)
class SpendAccount:
    excluded_usd: float = 0.0
    """Known spend of attempts outside the statistics: infra errors after the agent ran,
    interrupted runs, attempts a retry superseded."""
    excluded_attempts: int = 0
    """Such attempts that spent anything (or whose spend is unknown)."""
    excluded_unknown: int = 0
    """Of those, attempts whose cost is unknown (not in `excluded_usd`): None, or above
    MAX_RUN_COST_USD (no price: its figure would be the whole sum)."""
    unknown_runs: tuple[str, ...] = ()
    """Counted runs (they reached the agent) whose cost is unknown: left out of the
    statistics."""
    unknown_models: tuple[str, ...] = ()
    unknown_arms: tuple[str, ...] = ()
    unknown_reasons: tuple[str, ...] = ()
    sources: tuple[tuple[str, int], ...] = ()
    """(cost_source, counted runs) over the counted runs."""
    lower_bound_attempts: int = 0
    """Attempts, counted or not, that the harness stopped mid-run (timeout, interrupt) or
    died during (flag `cost_lower_bound`): a model request in flight when they stopped is
    billed by the vendor but was reported to no CLI, so their cost, and the total, may be
    low."""
    died_attempts: int = 0
    """Attempts the harness died during (SIGKILL, a crash, a lost machine; flag
    `harness_died`), recorded on resume from their output and run again."""
    died_lower_bound: int = 0
    """Of those, the ones whose agent was still running (also `cost_lower_bound`); the
    others had finished their agent (their cost is exact) and were not graded."""


LOWER_BOUND_FLAG = "cost_lower_bound"
DIED_FLAG = "harness_died"


def _died(flag_sets: Mapping[tuple[str, ...], int]) -> tuple[int, int]:
    """(attempts flagged harness_died, of them flagged cost_lower_bound)."""
    died = sum(n for flags, n in flag_sets.items() if DIED_FLAG in flags)
    low = sum(n for flags, n in flag_sets.items()
              if DIED_FLAG in flags and LOWER_BOUND_FLAG in flags)
    return died, low


def excluded_spend(costs: Iterable[float | None]) -> tuple[float, int, int]:
    """(USD, attempts, of them of unknown cost) of the attempts outside the statistics whose
    costs are `costs` (in file order: the sum is the one the rows give). An attempt spent
    something when its cost is unknown or above zero; a cost above MAX_RUN_COST_USD is no
    price, so it is of unknown cost too, never summed."""
    usd, attempts, unknown = 0.0, 0, 0
    for cost in costs:
        if cost is None or cost > 0:
            attempts += 1
            if cost is None or not cost <= MAX_RUN_COST_USD:
                unknown += 1
            else:
                usd += float(cost)
    return usd, attempts, unknown


def account_spend(rows: Sequence[Mapping[str, Any]],
                  latest: Mapping[str, Mapping[str, Any]]) -> tuple[list[Mapping[str, Any]],
                                                                    SpendAccount]:
    """The rows the statistics may read (unknown-cost runs left out) and the account."""
    final = {id(r) for r in latest.values()}
    stopped = sum(1 for row in rows if LOWER_BOUND_FLAG in (row.get("flags") or ()))
    died, died_low = _died(Counter(tuple(row.get("flags") or ()) for row in rows))
    excluded_usd, attempts, unknown_excluded = excluded_spend(
        row.get("cost_usd", 0.0) for row in rows
        if not (id(row) in final and row.get("outcome") not in _NOT_COUNTED))
    kept: list[Mapping[str, Any]] = []
    unknown: list[Mapping[str, Any]] = []
    sources: dict[str, int] = {}
    for row in latest.values():
        counted = row.get("outcome") not in _NOT_COUNTED
        if counted and "cost_usd" in row and row["cost_usd"] is None:
            unknown.append(row)
            continue
        if counted:
            source = str(row.get("cost_source") or "none")
            sources[source] = sources.get(source, 0) + 1
        kept.append(row)
    return kept, SpendAccount(
        excluded_usd=excluded_usd, excluded_attempts=attempts,
        excluded_unknown=unknown_excluded,
        unknown_runs=tuple(sorted(str(r["run_id"]) for r in unknown)),
        unknown_models=tuple(sorted({str(r.get("served_model") or r.get("model"))
                                     for r in unknown})),
        unknown_arms=tuple(sorted({str(r.get("arm")) for r in unknown})),
        unknown_reasons=tuple(sorted({str(r.get("cost_unknown_reason") or "no reason given")
                                      for r in unknown})),
        sources=tuple(sorted(sources.items())), lower_bound_attempts=stopped,
        died_attempts=died, died_lower_bound=died_low)


def account_columns(c: Columns) -> tuple[list[int] | None, SpendAccount]:
    """`account_spend` of records read as columns, every run id once (each record is its
    run's last): the indexes the statistics may read (None: all) and the account.

    Only the rows outside the statistics (not counted, or of unknown cost: few) are visited
    one by one; the cost sources of the counted runs are a count of the whole column less
    those rows'."""
    outside = ([i for i, outcome in enumerate(c.outcome) if outcome in _NOT_COUNTED]
               if not set(c.outcome).isdisjoint(_NOT_COUNTED) else [])
    excluded_usd, attempts, unknown_excluded = excluded_spend(c.cost_usd[i] for i in outside)
    skip = set(outside)
    unknown = ([i for i, cost in enumerate(c.cost_usd) if cost is None and i not in skip]
               if None in c.cost_usd else [])
    counts = count_values(c.cost_source)
    counts.subtract(c.cost_source[i] for i in (*outside, *unknown))
    sources: dict[str, int] = {}
    for source, n in counts.items():
        if n:
            key = str(source or "none")
            sources[key] = sources.get(key, 0) + n
    flag_sets = count_values(c.flags)
    stopped = sum(n for flags, n in flag_sets.items() if LOWER_BOUND_FLAG in flags)
    died, died_low = _died(flag_sets)
    keep = None
    if unknown:
        skip = set(unknown)
        keep = [i for i in range(len(c)) if i not in skip]
    return keep, SpendAccount(
        excluded_usd=excluded_usd, excluded_attempts=attempts,
        excluded_unknown=unknown_excluded,
        unknown_runs=tuple(sorted(c.run_id[i] for i in unknown)),
        unknown_models=tuple(sorted({str(c.served_model[i] or c.model[i]) for i in unknown})),
        unknown_arms=tuple(sorted({c.arm[i] for i in unknown})),
        unknown_reasons=tuple(sorted({str(c.cost_unknown_reason[i] or "no reason given")
                                      for i in unknown})),
        sources=tuple(sorted(sources.items())), lower_bound_attempts=stopped,
        died_attempts=died, died_lower_bound=died_low)


def account_coded(parts: Sequence[Coded]) -> SpendAccount:
    """`account_columns` of the records of the coded parts (`code`), in file order."""
    excluded_usd, attempts, unknown_excluded = excluded_spend(
        c for part in parts for c in part.outside_costs)
    counts: Counter[str | None] = Counter()
    flag_sets: Counter[tuple[str, ...]] = Counter()
    for part in parts:
        counts.update(part.sources)
        flag_sets.update(part.flag_sets)
    sources: dict[str, int] = {}
    for source, n in counts.items():
        if n:
            key = str(source or "none")
            sources[key] = sources.get(key, 0) + n
    stopped = sum(n for flags, n in flag_sets.items() if LOWER_BOUND_FLAG in flags)
    died, died_low = _died(flag_sets)
    unknown = [u for part in parts for u in part.unknown]
    return SpendAccount(
        excluded_usd=excluded_usd, excluded_attempts=attempts,
        excluded_unknown=unknown_excluded,
        unknown_runs=tuple(sorted(u[0] for u in unknown)),
        unknown_models=tuple(sorted({u[1] for u in unknown})),
        unknown_arms=tuple(sorted({u[2] for u in unknown})),
        unknown_reasons=tuple(sorted({u[3] for u in unknown})),
        sources=tuple(sorted(sources.items())), lower_bound_attempts=stopped,
        died_attempts=died, died_lower_bound=died_low)


def unknown_cost_reason(account: SpendAccount) -> str | None:
    if not account.unknown_runs:
        return None
    return (f"{len(account.unknown_runs)} counted run(s) have no known cost (models: "
            f"{', '.join(account.unknown_models)}): spend and cost per correct cannot be "
            f"established; {'; '.join(account.unknown_reasons)}")


@dataclass(frozen=True)
class CostUnknown:
    """A reason the costs of some arms cannot be established (an unknown cost, or one that is
    no price): every comparison of those arms is `invalid` for it."""

    why: str
    arms: frozenset[str]


def spend_unknown(account: SpendAccount) -> CostUnknown | None:
    """The counted runs of unknown cost, if any."""
    why = unknown_cost_reason(account)
    return None if why is None else CostUnknown(why, frozenset(account.unknown_arms))


def invalidate(unknowns: Sequence[CostUnknown], comparisons: list[Comparison]
               ) -> list[Comparison]:
    """Each comparison with an arm in an unknown's `arms` made `invalid` for its `why`
    (the first of several unknowns is the last reason prepended)."""
    for u in unknowns:
        comparisons = [c.model_copy(update={"verdict": "invalid", "reasons": [u.why, *c.reasons]})
                       if {c.tool, c.base} & u.arms else c for c in comparisons]
    return comparisons


def judge_unknowns(unknowns: Sequence[CostUnknown], verdict: Verdict, reasons: list[str],
                   comparisons: list[Comparison], *, regressions: Sequence[str] = (),
                   unknown_hid_a_comparison: bool = False) -> tuple[Verdict, list[str]]:
    """The report's verdict beside costs that cannot be established, once `invalidate` made
    the comparisons of their arms `invalid` and the verdict was summed up from the
    comparisons (`verdict`, `reasons`).

    A regression of a deciding comparison (`regressions`: their names) stands: its arms'
    costs are all known, so it does not depend on the unknown, and it outranks `invalid`
    (another tool's unpriced run must not pass the gate for it); the reasons then say which
    comparisons the unknown made invalid. Any other verdict is `invalid`: spend is not
    established and an improvement needs every tool's. With nothing compared the verdict
    stays `skipped`, unless the unknown-cost runs are what left a comparison out
    (`unknown_hid_a_comparison`: an arm whose every cost is unknown): then it is `invalid`,
    not "no tool arm"."""
    if not unknowns:
        return verdict, reasons
    whys = [u.why for u in reversed(unknowns)]
    if verdict == "skipped" and not comparisons:
        # "no tool arm" would be untrue when the unknown costs are what hid it
        return ("invalid", whys) if unknown_hid_a_comparison else (verdict, reasons)
    if verdict == "regression" and regressions:
        return verdict, [*reasons, *(_beside(u, comparisons, regressions) for u in unknowns)]
    return "invalid", [*(w for w in whys if w not in reasons), *reasons]


def _beside(unknown: CostUnknown, comparisons: list[Comparison],
            regressions: Sequence[str]) -> str:
    """The line that says what `unknown` made invalid, beside a regression it is no part
    of."""
    hit = [c.name for c in comparisons if {c.tool, c.base} & unknown.arms]
    made = (f"so {', '.join(hit)} {'is' if len(hit) == 1 else 'are'} invalid; " if hit
            else "")
    one = len(regressions) == 1
    return (f"{unknown.why}: {made}the regression{'' if one else 's'} of "
            f"{', '.join(regressions)} do{'es' if one else ''} not depend on it "
            f"({'its' if one else 'their'} arms' costs are all known)")




def cost_over(largest_by_arm: Mapping[str, float]) -> CostUnknown | None:
    """The arms with a run above `MAX_RUN_COST_USD`, if any: their comparisons are `invalid`
    as with an unknown cost (∞ or a bound from an overflowed sum would be an invented
    number)."""
    over = {arm: cost for arm, cost in largest_by_arm.items() if not cost <= MAX_RUN_COST_USD}
    if not over:
        return None
    return CostUnknown(
        f"a run of arm(s) {', '.join(sorted(over))} costs ${max(over.values()):.3g}; above "
        f"${MAX_RUN_COST_USD:,.0f} a run is no price, and the sums and squares of such "
        "costs overflow: spend and cost per correct cannot be established", frozenset(over))


def spend_warnings(account: SpendAccount) -> list[str]:
    out = []
    if account.excluded_attempts:
        unknown = (f"; {account.excluded_unknown} of them with unknown cost"
                   if account.excluded_unknown else "")
        out.append(f"${account.excluded_usd:.4f} spent on {account.excluded_attempts} "
                   f"excluded or retried attempt(s) (infra errors after the agent ran, "
                   f"interrupted runs): real spend, outside cost per correct{unknown}")
    if account.unknown_runs:
        out.append(f"{len(account.unknown_runs)} run(s) left out of the statistics: cost "
                   f"unknown ({', '.join(account.unknown_models)})")
    stopped = account.lower_bound_attempts - account.died_lower_bound
    if stopped:
        out.append(f"{stopped} attempt(s) were stopped mid-run (timeout or interrupt): a "
                   "model request in flight is billed by the vendor but was reported to no "
                   "CLI, so their cost, and the spend, may be higher than counted (flag "
                   "cost_lower_bound)")
    if account.died_lower_bound:
        out.append(f"{account.died_lower_bound} attempt(s) were running when the harness "
                   "died (SIGKILL, a crash or a lost machine; recorded on resume from their "
                   "output, flag harness_died, and run again): a model request in flight is "
                   "billed by the vendor but was reported to no CLI, so their cost, and the "
                   "spend, may be higher than counted (flag cost_lower_bound)")
    if ungraded := account.died_attempts - account.died_lower_bound:
        out.append(f"{ungraded} attempt(s) had finished their agent but were not graded when "
                   "the harness died (flag harness_died): their output is complete and their "
                   "cost exact, counted; they were run again")
    sources = dict(account.sources)
    if sources.get("vendor") and sources.get("computed"):
        out.append(f"cost basis differs between runs: {sources['computed']} priced from the "
                   f"runners' tables, {sources['vendor']} from the CLI's own figure")
    return out
