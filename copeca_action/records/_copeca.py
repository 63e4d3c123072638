"""copeca's record layout, the parts both results readers share and that need neither
numpy nor pydantic: the format of a file, repeated cells, what the reader tells the report.
The fast reader (`_columns`) loads only this."""

from __future__ import annotations

from typing import Any, Literal

Format = Literal["copeca-action", "copeca"]


def detect_format(row: dict[str, Any]) -> Format:
    """Ours carries `schema_version` and `run_id`; copeca's carries `task` and `mode`."""
    if "run_id" in row or "schema_version" in row:
        return "copeca-action"
    if "task" in row and "mode" in row:
        return "copeca"
    return "copeca-action"


NO_COST = "the copeca record has no total_cost_usd"
UNPRICED = ("copeca recorded $0 for a run that used tokens: its CLI reports no cost (codex, "
            "gemini) and copeca had no price for the model, so it wrote the CLI's 0")


def unpriced(cost: Any, source: Any, tokens: tuple[Any, Any, Any, Any]) -> bool:
    """A copeca cost of $0 that is not a price: copeca takes the CLI's own figure as the
    `vendor` cost when it has no price for the model, and codex and gemini report none
    (their parsers write 0.0). A run that used tokens cost something; a `modeled` $0 is a
    price of 0 the user gave (a free local model), and a run with no token spent nothing."""
    return cost == 0 and source == "vendor" and any(tokens)


def renumber(tasks: list[str], arms: list[str], models: list[str],
             repetitions: list[int]) -> tuple[list[int], int]:
    """Repetitions with repeated copeca cells numbered as further repetitions, in file
    order, and how many repeats there were.

    copeca's single-task `run` appends every run of a cell with `repetition: 0`, so one cell
    (task, mode, model, repetition) can appear many times. Each line is a run that was paid
    for: the first keeps its repetition, each repeat takes the next number after the largest
    the cell uses anywhere in the file, in file order, so no run replaces another."""
    if len(set(zip(tasks, arms, models, repetitions, strict=True))) == len(tasks):
        return list(repetitions), 0  # every cell once: the usual file
    used: dict[tuple[str, str, str], int] = {}
    for cell, rep in zip(zip(tasks, arms, models, strict=True), repetitions, strict=True):
        used[cell] = max(used.get(cell, -1), rep)
    seen: set[tuple[str, str, str, int]] = set()
    out = list(repetitions)
    repeats = 0
    for i, cell in enumerate(zip(tasks, arms, models, strict=True)):
        key = (*cell, out[i])
        if key in seen:
            repeats += 1
            used[cell] += 1
            out[i] = used[cell]
            key = (*cell, used[cell])
        seen.add(key)
    return out, repeats


def copeca_messages(records: int, repeats: int, control: bool, versions: bool) -> list[str]:
    """What the reader had to decide about a copeca file: `repeats` cells counted as
    further repetitions; no record with a `control` key; no record with a CLI version."""
    notes = []
    if repeats:
        notes.append(f"{repeats} copeca records repeated a cell (task, mode, model, "
                     "repetition) already seen: each was counted as a further repetition, in "
                     "file order (copeca's single-task run writes repetition 0 every time)")
    if records and not control:
        notes.append("these copeca records carry no control flag (copeca writes one since "
                     "June 2026): the control delta is unavailable")
    if records and not versions:
        notes.append("these copeca records carry no CLI version: version checks are "
                     "unavailable")
    return notes
