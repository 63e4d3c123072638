"""The spend line: every dollar the records account for, counted runs plus excluded and
retried attempts; unknown costs never become a number."""

from __future__ import annotations

import pytest
from report_factory import record

from copeca_action.github._comment_data import CommentData
from copeca_action.github._from_report import run_facts
from copeca_action.github._render import run_text
from copeca_action.records import RunRecord
from copeca_action.render import render_markdown
from copeca_action.report import build_report


def _runs() -> list[RunRecord]:
    out = []
    for task in ("a", "b", "c"):
        for arm, cost in (("baseline", 0.10), ("tool", 0.08)):
            out.append(record(task_id=task, arm=arm, cost_usd=cost, correct=True))
    return out


def test_the_spend_line_adds_excluded_and_retried_attempts_to_the_arms() -> None:
    runs = _runs()
    # a grader crash after the agent ran (superseded by a retry), and a run interrupted
    # for good: both spent, neither is in any arm's cost per correct
    runs.insert(0, record(task_id="a", arm="tool", cost_usd=0.05, outcome="infra_error",
                          correct=False, attempt=1, error="finishing failed"))
    runs.append(record(task_id="d", arm="tool", cost_usd=0.03, outcome="infra_error",
                       correct=False, error="interrupted"))
    report = build_report(runs)
    sp = report.spend
    assert sp is not None
    assert sp.counted_usd == pytest.approx(3 * 0.10 + 3 * 0.08)
    assert sp.excluded_usd == pytest.approx(0.08) and sp.excluded_attempts == 2
    assert sp.total_usd == pytest.approx(0.54 + 0.08)
    assert sp.unknown_attempts == 0
    assert sum(a.spend_usd for a in report.arms) == pytest.approx(sp.counted_usd)
    md = render_markdown(report)
    assert ("**Spend**: $0.6200 in all: $0.5400 on the runs the arms count, $0.0800 on 2 "
            "excluded or retried attempt(s) outside cost per correct.") in md
    facts = run_facts(report, [])
    assert facts.spend_usd == pytest.approx(0.62) and facts.excluded_attempts == 2
    line = str(run_text(CommentData(verdict=report.verdict, run=facts)))
    # the figures report.md states, to its digits (not "$0.62" beside "$0.0800 of it")
    assert "**This run**: $0.6200 on 6 runs (all arms and tasks; $0.0800 of it on 2 " \
           "excluded or retried attempts)" in line


def test_unknown_cost_is_not_in_the_total_and_says_so() -> None:
    runs = _runs()
    runs.append(record(task_id="d", arm="tool", cost_usd=None, correct=True,
                       cost_unknown_reason="no price for gpt-9 in runners/codex.yaml"))
    report = build_report(runs)
    assert report.verdict == "invalid"
    sp = report.spend
    assert sp is not None and sp.unknown_attempts == 1
    assert sp.total_usd == pytest.approx(0.54)  # never a $0 added as if known
    assert "1 attempt(s) of unknown cost are not in it (the total is a lower bound)" in (
        render_markdown(report))


def test_no_excluded_spend_reads_as_one_figure() -> None:
    report = build_report(_runs())
    assert report.spend is not None and report.spend.excluded_attempts == 0
    assert "**Spend**: $0.5400 in all." in render_markdown(report)


def test_the_spend_line_says_where_the_costs_came_from() -> None:
    runs = [r.model_copy(update={"cost_source": "vendor" if r.task_id == "a" else "computed"})
            for r in _runs()]
    report = build_report(runs)
    assert report.spend is not None
    assert report.spend.cost_sources == {"computed": 4, "vendor": 2}
    assert ("Cost of the counted runs: 4 priced from the runners' price tables (tokens × "
            "price), 2 as the CLI itself reported.") in render_markdown(report)


def test_runs_stopped_mid_run_say_the_total_may_be_low() -> None:
    """A timed-out run counts (its known cost is in its arm) and an interrupted attempt is
    excluded; both were stopped with a request possibly in flight, which the vendor bills
    and no CLI reports: every place the spend is read says the total may be low."""
    runs = _runs()
    runs[0] = record(task_id="a", arm="baseline", cost_usd=0.10, correct=False,
                     outcome="timeout", flags=["timeout", "cost_lower_bound"])
    runs.append(record(task_id="d", arm="tool", cost_usd=0.03, outcome="infra_error",
                       correct=False, error="interrupted", flags=["cost_lower_bound"]))
    report = build_report(runs)
    sp = report.spend
    assert sp is not None and sp.lower_bound_attempts == 2
    assert sp.total_usd == pytest.approx(0.57)  # what was reported, nothing invented
    assert any(w.startswith("2 attempt(s) were stopped mid-run") for w in report.warnings)
    assert ("; 2 attempt(s) were stopped mid-run (timeout or interrupt), and a request in "
            "flight then is billed but reported to no CLI (the total may be low).") in (
        render_markdown(report))
    line = str(run_text(CommentData(verdict=report.verdict, run=run_facts(report, []))))
    assert "(2 attempts stopped mid-run may have been billed more than counted)" in line
    clean = build_report(_runs())
    assert clean.spend is not None and clean.spend.lower_bound_attempts == 0
    assert "stopped mid-run" not in render_markdown(clean)


def test_attempts_the_harness_died_during_are_named_as_such() -> None:
    """Attempts recorded on resume after the harness died (flag harness_died) are not
    "stopped mid-run (timeout or interrupt)": the one whose agent was running keeps the
    lower-bound note, the one whose agent had finished is counted at its exact cost; every
    place a person reads the spend says which."""
    runs = _runs()
    runs[0] = record(task_id="a", arm="baseline", cost_usd=0.10, correct=False,
                     outcome="timeout", flags=["timeout", "cost_lower_bound"])
    runs.insert(1, record(task_id="b", arm="tool", cost_usd=0.02, outcome="infra_error",
                          correct=False, attempt=1, error="the harness died while ...",
                          flags=["harness_died", "cost_lower_bound"]))
    runs.insert(1, record(task_id="c", arm="tool", cost_usd=0.04, outcome="infra_error",
                          correct=False, attempt=1, error="the harness died after ...",
                          flags=["harness_died"]))
    report = build_report(runs)
    sp = report.spend
    assert sp is not None
    assert (sp.lower_bound_attempts, sp.died_attempts, sp.died_lower_bound) == (2, 2, 1)
    assert sp.total_usd == pytest.approx(0.60)
    assert any(w.startswith("1 attempt(s) were stopped mid-run (timeout or interrupt)")
               for w in report.warnings), report.warnings
    assert any(w.startswith("1 attempt(s) were running when the harness died")
               and "cost_lower_bound" in w for w in report.warnings)
    assert any(w.startswith("1 attempt(s) had finished their agent but were not graded")
               and "exact" in w for w in report.warnings)
    md = render_markdown(report)
    assert ("; 1 attempt(s) were stopped mid-run (timeout or interrupt), and a request in "
            "flight then is billed but reported to no CLI (the total may be low); 1 "
            "attempt(s) were running when the harness died (SIGKILL, a crash or a lost "
            "machine; counted from their output and run again), and a request in flight "
            "then is billed but reported to no CLI (the total may be low); 1 attempt(s) had "
            "finished their agent but were not graded when the harness died (their cost is "
            "exact, counted; run again).") in md
    from copeca_action.render import render_html

    html = " ".join(render_html(report).split())
    assert "1 attempt(s) were stopped mid-run (timeout or interrupt)" in html
    assert "1 attempt(s) were running when the harness died" in html
    assert "1 attempt(s) had finished their agent but were not graded" in html
    line = str(run_text(CommentData(verdict=report.verdict, run=run_facts(report, []))))
    assert ("(1 attempts stopped mid-run and 1 running when the harness died may have been "
            "billed more than counted); 1 attempts finished but not graded when the harness "
            "died were counted and run again") in line
    only = build_report([r for r in runs if "timeout" not in r.flags])
    assert "stopped mid-run" not in render_markdown(only)


def test_a_remapped_model_is_named_in_the_warnings() -> None:
    runs = _runs()
    runs[1] = record(task_id="a", arm="tool", cost_usd=0.08, served_model="claude-haiku-4-5",
                     model="claude-sonnet-4-5", flags=["model_remapped"])
    report = build_report(runs)
    assert any("answered by another model than the one asked for (claude-haiku-4-5)" in w
               for w in report.warnings), report.warnings


def test_the_columns_account_is_the_rows_account() -> None:
    """`account_columns` (the fast path) visits only the rows outside the statistics; it must
    give `account_spend`'s account, sources included (None and '' both read as none)."""
    import random

    from copeca_action.records._columns import Columns
    from copeca_action.report._spend import account_columns, account_spend

    rng = random.Random(3)
    for _ in range(40):
        rows = [{"run_id": f"r{i}", "arm": rng.choice(["a", "b"]), "model": "m",
                 "served_model": rng.choice([None, "s"]),
                 "outcome": rng.choice(["ok", "ok", "agent_error", "infra_error",
                                        "budget_stop"]),
                 "cost_usd": rng.choice([None, 0.0, 0.5, 1.25, 2.0]),
                 "cost_source": rng.choice([None, "", "vendor", "computed"]),
                 "cost_unknown_reason": rng.choice([None, "no price"]),
                 "flags": rng.choice([(), ("timeout", "cost_lower_bound"), ("tool_storm",),
                                      ("harness_died",), ("harness_died", "cost_lower_bound")])}
                for i in range(rng.randrange(0, 30))]
        columns = Columns(**{k: [r[k] for r in rows] for k in rows[0]} if rows else {})
        keep, account = account_columns(columns)
        kept, expected = account_spend(rows, {r["run_id"]: r for r in rows})
        assert account == expected
        if keep is None:
            assert len(kept) == len(rows)
        else:
            assert [rows[i] for i in keep] == kept


@pytest.mark.parametrize("cost", [1e308, 1e160, 2e9])
def test_a_run_that_costs_no_price_makes_the_verdict_invalid(cost: float) -> None:
    """Each cost finite and valid as a record, but above $1e9 a run: its sums (1e308
    twice) or its squares (1e160, in the studentized error) overflow, and the interval
    came out as [-100%, +∞]; nothing is judged on such a cost."""
    runs = _runs()
    runs += [record(task_id="a", arm="tool", cost_usd=cost, correct=True, repetition=r)
             for r in (1, 2)]
    report = build_report(runs)
    assert report.verdict == "invalid"
    why = report.verdict_reasons[0]
    assert f"a run of arm(s) tool costs ${cost:.3g}; above $1,000,000,000 a run is no price" \
        in why
    assert all(c.verdict == "invalid" for c in report.comparisons)
    assert "a run is no price" in render_markdown(report)


def test_large_but_real_costs_are_judged() -> None:
    runs = _runs()
    runs.append(record(task_id="a", arm="tool", cost_usd=1e6, correct=True, repetition=1))
    report = build_report(runs)
    assert report.verdict != "invalid"
    assert not any("no price" in r for r in report.verdict_reasons)


LEGACY_KILLED = ("the harness died while the agent ran (SIGKILL, a crash or a lost "
                 "machine); the spend its output shows is counted (a lower bound); --resume "
                 "repeats the run")
"""The error a resume gave an attempt the harness died during, before the flag harness_died
existed (its only flag then: cost_lower_bound)."""


@pytest.mark.parametrize("retried", [True, False])
def test_an_attempt_an_older_resume_recorded_is_named_as_the_harness_dying(
        retried: bool, tmp_path, capsys) -> None:  # type: ignore[no-untyped-def]
    """A record written by an older copeca-action's resume (error the harness's own sentence,
    flag cost_lower_bound, no harness_died) read 'stopped mid-run (timeout or interrupt)'
    in report.md, report.html, the warnings and the comment. It is an attempt the harness
    died during, wherever the records are read: as records, or by `analyze` from the file
    (rows, or columns when every run id is once)."""
    from copeca_action.cli import main
    from copeca_action.records import write_records

    runs = _runs()
    died = record(task_id="d", arm="tool", cost_usd=0.02, outcome="infra_error",
                  correct=False, attempt=1, error=LEGACY_KILLED, flags=["cost_lower_bound"])
    runs.insert(0, died)
    if retried:
        runs.append(record(task_id="d", arm="tool", cost_usd=0.08, attempt=2))
    report = build_report(runs)
    sp = report.spend
    assert sp is not None
    assert (sp.lower_bound_attempts, sp.died_attempts, sp.died_lower_bound) == (1, 1, 1)
    md = render_markdown(report)
    assert "stopped mid-run" not in md and "1 attempt(s) were running when the harness died" in md
    line = str(run_text(CommentData(verdict=report.verdict, run=run_facts(report, []))))
    assert "stopped mid-run" not in line and "1 running when the harness died" in line
    assert not any("stopped mid-run" in w for w in report.warnings)
    path = tmp_path / "results.jsonl"
    write_records(path, runs)
    capsys.readouterr()
    assert main(["analyze", str(path), "--format", "md"]) == 0
    analyzed = capsys.readouterr().out
    assert "stopped mid-run" not in analyzed
    assert "1 attempt(s) were running when the harness died" in " ".join(analyzed.split())
