"""Progress while a scenario runs: a rich bar on a terminal, one plain line per run when not
(CI logs, pipes)."""

from __future__ import annotations

import sys
import time
from typing import Protocol, TextIO

from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

from copeca_action._util.text import one_line
from copeca_action.records import SIMULATED, RunRecord


class ProgressSink(Protocol):
    def start(self, total: int, done: int, spent: float, correct: int) -> None: ...

    def update(self, record: RunRecord, final: bool) -> None: ...

    def warn(self, text: str) -> None: ...

    def close(self) -> None: ...


class _Tally:
    def __init__(self) -> None:
        self.total = self.done = self.correct = 0
        self.spent = 0.0
        self.simulated = False
        """Some run's spend was the scripted model's (a dry run, a scripted scenario)."""

    @property
    def spent_label(self) -> str:
        return "simulated spend" if self.simulated else "spent"

    def add(self, record: RunRecord, final: bool) -> None:
        self.simulated |= record.endpoint in SIMULATED
        if final:
            self.done += 1
            self.correct += record.correct
        if record.cost_usd is not None:  # every attempt's spend, retried ones too
            self.spent += record.cost_usd




def _usd(cost: float | None) -> str:
    return "$?" if cost is None else f"${cost:.4f}"


def _simulated(record: RunRecord) -> str:
    """A simulated run's cost is labelled where it is printed (the scripted model's)."""
    return " (simulated)" if record.endpoint in SIMULATED else ""


class PlainProgress:
    """`[ 3/24] fastapi/locate-unique-id codesearch claude-sonnet-4-5 #0: ok correct $0.0123`"""

    def __init__(self, stream: TextIO | None = None) -> None:
        self.stream = stream or sys.stderr
        self.tally = _Tally()

    def start(self, total: int, done: int, spent: float, correct: int) -> None:
        t = self.tally
        t.total, t.done, t.spent, t.correct = total, done, spent, correct
        resumed = f" ({done} already done)" if done else ""
        print(f"running {total} runs{resumed}", file=self.stream, flush=True)

    def update(self, record: RunRecord, final: bool) -> None:
        t = self.tally
        t.add(record, final)
        width = len(str(t.total))
        verdict = "correct" if record.correct else "wrong"
        retry = "" if final else f" (attempt {record.attempt}, retrying)"
        err = f" — {record.error}" if record.error and not record.correct else ""
        print(one_line(f"[{t.done:>{width}}/{t.total}] {record.task_id} {record.arm} "
                       f"{record.model} #{record.repetition}: {record.outcome} {verdict} "
                       f"{_usd(record.cost_usd)}{_simulated(record)} {record.duration_s:.1f}s"
                       f"{retry}{err[:200]} | {t.spent_label} ${t.spent:.4f}, "
                       f"correct {t.correct}"),
              file=self.stream, flush=True)

    def close(self) -> None:
        pass

    def warn(self, text: str) -> None:
        print(one_line(f"warning: {text}"), file=self.stream, flush=True)


class RichProgress:
    def __init__(self, console: Console | None = None) -> None:
        self.console = console or Console(stderr=True)
        self.tally = _Tally()
        self.progress = Progress(
            TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
            TextColumn("{task.fields[label]} ${task.fields[spent]:.4f}"),
            TextColumn("correct {task.fields[correct]}"), TimeRemainingColumn(),
            console=self.console, transient=False)
        self._task = self.progress.add_task("runs", total=0, spent=0.0, correct=0,
                                            label="spent")
        self._t0 = time.monotonic()

    def start(self, total: int, done: int, spent: float, correct: int) -> None:
        t = self.tally
        t.total, t.done, t.spent, t.correct = total, done, spent, correct
        self.progress.update(self._task, total=total, completed=done, spent=spent,
                             correct=correct)
        self.progress.start()

    def update(self, record: RunRecord, final: bool) -> None:
        self.tally.add(record, final)
        t = self.tally
        self.progress.update(self._task, completed=t.done, spent=t.spent, correct=t.correct,
                             label=t.spent_label)
        if record.outcome not in ("ok", "budget_stop"):
            # escaped: an error quoting the CLI (`[/usr/bin]`) is no rich markup, and an
            # unmatched closing tag would raise MarkupError and stop the run
            self.progress.console.print(escape(one_line(
                f"{record.task_id} {record.arm} #{record.repetition}: {record.outcome} "
                f"{(record.error or '')[:160]}")))

    def close(self) -> None:
        self.progress.stop()

    def warn(self, text: str) -> None:
        self.console.print(f"[yellow]warning:[/] {escape(text)}", soft_wrap=True)


def make_progress(plain: bool | None = None) -> ProgressSink:
    """Rich when stderr is a terminal (and not forced plain), else plain lines."""
    if plain is None:
        plain = not sys.stderr.isatty()
    return PlainProgress() if plain else RichProgress()


class NullProgress:
    def start(self, total: int, done: int, spent: float, correct: int) -> None:
        pass

    def update(self, record: RunRecord, final: bool) -> None:
        pass

    def close(self) -> None:
        pass

    def warn(self, text: str) -> None:
        pass
