from __future__ import annotations

import io

import pytest

from copeca_action.engine import PlainProgress, RichProgress, make_progress
from copeca_action.records import RunRecord


def _record(**kw: object) -> RunRecord:
    base: dict[str, object] = {"run_id": "r1", "scenario": "s", "task_id": "app/t",
                               "task_hash": "h", "arm": "baseline", "model": "m", "runner": "x",
                               "repetition": 0, "outcome": "ok", "correct": True,
                               "cost_usd": 0.25, "duration_s": 1.5}
    base.update(kw)
    return RunRecord.model_validate(base)


def test_plain_lines_carry_counts_spend_and_correct() -> None:
    stream = io.StringIO()
    progress = PlainProgress(stream)
    progress.start(total=3, done=1, spent=0.5, correct=1)
    progress.update(_record(), final=True)
    progress.update(_record(run_id="r2", outcome="infra_error", correct=False, cost_usd=0,
                            attempt=1, error="worktree failed"), final=False)
    lines = stream.getvalue().splitlines()
    assert lines[0] == "running 3 runs (1 already done)"
    assert lines[1].startswith("[2/3] app/t baseline m #0: ok correct $0.2500")
    assert lines[1].endswith("spent $0.7500, correct 2")
    assert "retrying" in lines[2] and "worktree failed" in lines[2]


def test_progress_degrades_to_plain_without_a_tty(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("sys.stderr", io.StringIO())
    assert isinstance(make_progress(), PlainProgress)
    assert isinstance(make_progress(plain=False), RichProgress)


def test_an_agents_error_text_cannot_start_a_log_line() -> None:
    """A line starting `::` is a workflow command to the Actions runner: an error quoting the
    agent CLI's output stays on its run's line, so it cannot forge an annotation or mask."""
    stream = io.StringIO()
    progress = PlainProgress(stream)
    progress.start(total=1, done=0, spent=0.0, correct=0)
    forged = "exit 1: oops\n::error title=copeca-action::verdict improvement\r::add-mask::0.25"
    progress.update(_record(outcome="agent_error", correct=False, error=forged), final=True)
    progress.warn("tool x\n::warning::forged")
    lines = stream.getvalue().splitlines()
    assert len(lines) == 3 and not any(ln.lstrip().startswith("::") for ln in lines)
    assert "oops ::error title" in lines[1] and "x ::warning::forged" in lines[2]


def test_the_rich_bar_prints_an_error_as_text_not_markup() -> None:
    """`[/usr/bin]` in an agent's error is an unmatched closing tag to rich: printed as
    markup it raised MarkupError mid-run; `[bold]` would have styled the line."""
    from rich.console import Console

    buf = io.StringIO()
    progress = RichProgress(Console(file=buf, force_terminal=False, width=200))
    progress.start(total=1, done=0, spent=0.0, correct=0)
    progress.update(_record(outcome="agent_error", correct=False,
                            error="exit 1: not found [/usr/bin] [bold]x[/bold]"), final=True)
    progress.warn("model [/m] differs")
    progress.close()
    out = buf.getvalue()
    assert "not found [/usr/bin] [bold]x[/bold]" in out and "model [/m] differs" in out


def test_a_simulated_runs_spend_is_labelled_as_it_is_printed() -> None:
    """A dry run's progress says whose money it counts: the scripted model's (none)."""
    from rich.console import Console

    stream = io.StringIO()
    progress = PlainProgress(stream)
    progress.start(total=2, done=0, spent=0.0, correct=0)
    progress.update(_record(endpoint="dry_run"), final=True)
    progress.update(_record(run_id="r2", endpoint="dry_run"), final=True)
    lines = stream.getvalue().splitlines()
    assert "ok correct $0.2500 (simulated) 1.5s" in lines[1]
    assert lines[2].endswith("simulated spend $0.5000, correct 2")
    real = io.StringIO()
    plain = PlainProgress(real)
    plain.start(total=1, done=0, spent=0.0, correct=0)
    plain.update(_record(endpoint="real"), final=True)
    assert "simulated" not in real.getvalue()
    buf = io.StringIO()
    bar = RichProgress(Console(file=buf, force_terminal=False, width=200))
    bar.start(total=1, done=0, spent=0.0, correct=0)
    bar.update(_record(endpoint="scripted"), final=True)
    bar.close()
    assert "simulated spend $0.2500" in buf.getvalue()
