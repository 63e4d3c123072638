"""Read results.jsonl fast, in our format or in the format of the `copeca` CLI.

Rows come back as RunRecord-shaped dicts. Each line is checked cheaply (required fields,
types, known outcome); a line that fails is re-validated with RunRecord so the error names
the line and the field exactly. copeca records are mapped field by field (see
docs/methodology.md, "Reading copeca results").
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any, Literal

import pydantic_core
from pydantic import ValidationError

from copeca_action.errors import ConfigError, Problem
from copeca_action.records._record import OUTCOMES, RunRecord

Format = Literal["copeca-action", "copeca"]
_REQUIRED = ("run_id", "task_id", "arm", "model", "outcome")
_OUTCOMES = frozenset(OUTCOMES)


def detect_format(row: dict[str, Any]) -> Format:
    """Ours carries `schema_version` and `run_id`; copeca's carries `task` and `mode`."""
    if "run_id" in row or "schema_version" in row:
        return "copeca-action"
    if "task" in row and "mode" in row:
        return "copeca"
    return "copeca-action"


def read_rows(path: Path) -> tuple[list[dict[str, Any]], Format]:
    """Every record of a results file as a RunRecord-shaped dict, and the file's format.
    A truncated last line (a crash mid-append) is skipped, as in read_records."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise ConfigError(f"cannot read results: {exc.strerror}", path) from exc
    lines = data.split(b"\n")
    rows: list[dict[str, Any]] = []
    fmt: Format | None = None
    last = len(lines) - 1
    for number, raw in enumerate(lines, 1):
        if not raw.strip():
            continue
        try:
            row = pydantic_core.from_json(raw)
        except ValueError as exc:
            if number - 1 == last:
                continue
            raise ConfigError(Problem(str(path), f"not JSON: {exc}", number)) from exc
        if not isinstance(row, dict):
            raise ConfigError(Problem(str(path), "expected a JSON object per line", number))
        fmt = fmt or detect_format(row)
        if fmt == "copeca":
            row = from_copeca(row, path.stem, number)
        rows.append(_checked(row, path, number))
    return rows, fmt or "copeca-action"


def _checked(row: dict[str, Any], path: Path, number: int) -> dict[str, Any]:
    ok = (all(isinstance(row.get(k), str) for k in _REQUIRED)
          and row["outcome"] in _OUTCOMES
          and isinstance(row.get("cost_usd", 0.0), int | float)
          and 0 <= row.get("cost_usd", 0.0) < math.inf
          and isinstance(row.get("repetition", 0), int)
          and isinstance(row.get("correct", False), bool))
    if ok:
        return row
    try:
        return RunRecord.model_validate(row).model_dump()
    except ValidationError as exc:
        first = exc.errors()[0]
        field = ".".join(str(p) for p in first["loc"]) or None
        raise ConfigError(Problem(str(path), first["msg"], number, field)) from exc


def from_copeca(row: dict[str, Any], scenario: str = "", line: int = 0) -> dict[str, Any]:
    """A copeca result record as a RunRecord-shaped dict.

    copeca writes one line per run with `task, mode, model, runner, repetition, correct,
    total_cost_usd, cost_source (vendor|modeled), input/output/cache_creation/cache_read
    _tokens, num_turns, num_tool_calls, duration_ms, tool_adopted, error, exit_code,
    adversarial_flags`. A run that raised in its harness has no `total_cost_usd`: an
    infra error. copeca has no control flag and no CLI version.
    """
    flags_in = row.get("adversarial_flags") or {}
    flags = sorted(k for k, v in flags_in.items() if v) if isinstance(flags_in, dict) else []
    if (row.get("metadata") or {}).get("vendor_cost_divergence_warning"):
        flags.append("cost_divergence")
    cost = row.get("total_cost_usd")
    if cost is None:
        outcome = "infra_error"
    elif flags_in.get("timeout") if isinstance(flags_in, dict) else False:
        outcome = "timeout"
    elif row.get("error") or (row.get("exit_code") not in (None, 0)):
        outcome = "agent_error"
    else:
        outcome = "ok"
    task, mode = str(row.get("task", "")), str(row.get("mode", ""))
    model = str(row.get("model", ""))
    rep = row.get("repetition") or 0
    source = row.get("cost_source")
    return {
        "run_id": f"copeca:{task}:{mode}:{model}:{rep}", "scenario": scenario, "task_id": task,
        "task_hash": "", "arm": mode, "model": model, "runner": str(row.get("runner", "")),
        "cli_version": None, "repetition": rep, "control": False,
        "category": str(row.get("category") or ""), "language": str(row.get("language") or ""),
        "outcome": outcome, "correct": bool(row.get("correct")),
        "tokens": {"input": int(row.get("input_tokens") or 0),
                   "output": int(row.get("output_tokens") or 0),
                   "cache_write": int(row.get("cache_creation_tokens") or 0),
                   "cache_read": int(row.get("cache_read_tokens") or 0)},
        "vendor_cost_usd": row.get("vendor_cost_usd"),
        "computed_cost_usd": row.get("computed_cost_usd"),
        "cost_usd": float(cost or 0.0),
        "cost_source": {"vendor": "vendor", "modeled": "computed"}.get(str(source), "none"),
        "duration_s": float(row.get("duration_ms") or 0) / 1000,
        "turns": int(row.get("num_turns") or 0), "tool_calls": int(row.get("num_tool_calls") or 0),
        "tool_adopted": row.get("tool_adopted"), "flags": flags,
        "error": row.get("error"),
    }
