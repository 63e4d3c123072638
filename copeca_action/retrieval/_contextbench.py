"""ContextBench's prediction and gold files, so our numbers can be set beside theirs.

Prediction (one instance; the step data optionally wrapped in `traj_data`, with
`model_patch` beside it or inside it):
`{"pred_steps": [{"files": [...], "spans": {file: [{"type": "line", "start", "end"}]}}],
"pred_files": [...], "pred_spans": {file: [...]}, "model_patch": "..."}`.
Step spans may also be a list of `{"file", "start_line", "end_line"}`.
Gold: ContextBench's annotation (`init_ctx` + `add_ctx` entries of `{file, start_line,
end_line}`, and `patch`, the reference fix, for EditLoc), or ours (`gold_context` of
`{file, lines: [start, end]}` and `gold_edit_lines`), in JSON or YAML.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import yaml

from copeca_action.errors import ConfigError, Problem
from copeca_action.retrieval._editloc import LineKey, edit_lines, line_set
from copeca_action.retrieval._metrics import RunRetrieval, build_context, run_metrics
from copeca_action.retrieval._repo import Repo
from copeca_action.retrieval._viewed import Viewed

LineSpan = tuple[str, tuple[int, int]]


def _load(path: Path) -> Any:
    try:
        text = path.read_text()
    except OSError as exc:
        raise ConfigError(Problem(str(path), f"cannot read: {exc.strerror}")) from exc
    try:
        if path.suffix in (".yaml", ".yml"):
            return yaml.safe_load(text)
        return json.loads(text)
    except (json.JSONDecodeError, yaml.YAMLError) as exc:
        line = getattr(exc, "lineno", None)
        raise ConfigError(Problem(str(path), f"not valid JSON/YAML: {exc}", line)) from exc


def _need(cond: bool, path: Path, field: str, expected: str) -> None:
    if not cond:
        raise ConfigError(Problem(str(path), f"expected {expected}", field=field))


def _line_entries(value: Any, path: Path, field: str,
                  file: str | None = None) -> Iterator[LineSpan]:
    """Line ranges from any of the accepted spellings, checked."""
    _need(isinstance(value, list), path, field, "a list of line spans")
    for i, item in enumerate(value):
        where = f"{field}[{i}]"
        _need(isinstance(item, dict), path, where, "an object")
        name = item.get("file", file)
        _need(isinstance(name, str) and bool(name), path, where + ".file", "a file path")
        if item.get("type", "line") != "line":
            continue  # byte- or symbol-typed spans carry no line range
        if "lines" in item:
            lines = item["lines"]
            _need(isinstance(lines, list) and len(lines) == 2, path, where + ".lines",
                  "[start, end]")
            start, end = lines
        else:
            start = item.get("start", item.get("start_line"))
            end = item.get("end", item.get("end_line", start))
        _need(isinstance(start, int) and isinstance(end, int) and 1 <= start <= end, path,
              where, "1-based start <= end line numbers")
        yield name, (start, end)


def _paths(value: Any, path: Path, field: str) -> list[str]:
    """A list of file paths, checked (a bare string is not read one character a path)."""
    items = value if value is not None else []
    _need(isinstance(items, list), path, field, "a list of file paths")
    for i, name in enumerate(items):
        _need(isinstance(name, str) and bool(name), path, f"{field}[{i}]", "a file path")
    return list(items)


def _spans_field(value: Any, path: Path, field: str) -> list[LineSpan]:
    if isinstance(value, dict):
        return [s for file, items in value.items()
                for s in _line_entries(items, path, f"{field}.{file}", file)]
    return list(_line_entries(value, path, field))


def read_prediction(path: Path, repo: Repo) -> tuple[list[Viewed], list[str], list[LineSpan],
                                                      list[str], str | None]:
    """(viewed items per step, dropped paths, final spans, final files, model patch)."""
    data = _load(path)
    _need(isinstance(data, dict), path, "", "a JSON object")
    patch = data.get("model_patch")
    if isinstance(data.get("traj_data"), dict):
        data = data["traj_data"]
        patch = data.get("model_patch", patch)
    steps = data.get("pred_steps", [])
    _need(isinstance(steps, list), path, "pred_steps", "a list")
    viewed: list[Viewed] = []
    dropped: dict[str, None] = {}

    def place(name: str) -> str | None:
        rel = repo.relative(name)
        if rel is None:
            dropped[name] = None
        return rel

    for index, step in enumerate(steps):
        _need(isinstance(step, dict), path, f"pred_steps[{index}]", "an object")
        for name in _paths(step.get("files"), path, f"pred_steps[{index}].files"):
            if (rel := place(name)) is not None:
                viewed.append(Viewed(step=index, file=rel))
        for name, lines in _spans_field(step.get("spans", []) or [], path,
                                        f"pred_steps[{index}].spans"):
            if (rel := place(name)) is not None:
                viewed.append(Viewed(step=index, file=rel, lines=lines))
    final_spans = [(rel, lines) for name, lines in
                   _spans_field(data.get("pred_spans", {}) or {}, path, "pred_spans")
                   if (rel := place(name)) is not None]
    final_files = [rel for name in _paths(data.get("pred_files"), path, "pred_files")
                   if (rel := place(name)) is not None]
    _need(patch is None or isinstance(patch, str), path, "model_patch",
          "the patch as a string (unified diff)")
    model_patch = patch
    return viewed, list(dropped), final_spans, final_files, model_patch


def _has_steps(path: Path) -> bool:
    data = _load(path)
    if isinstance(data.get("traj_data"), dict):
        data = data["traj_data"]
    return bool(data.get("pred_steps"))


def read_gold(path: Path) -> tuple[list[LineSpan], set[LineKey] | None]:
    """(gold context line spans, gold edit lines or None)."""
    data = _load(path)
    _need(isinstance(data, dict), path, "", "a JSON/YAML object")
    spans: list[LineSpan] = []
    if "gold_context" in data:
        spans = _spans_field(data["gold_context"], path, "gold_context")
    else:
        for key in ("init_ctx", "add_ctx", "gold_ctx"):
            if key in data:
                spans += _spans_field(data[key], path, key)
    _need(bool(spans), path, "gold_context", "a non-empty `gold_context` (ours) or "
          "`init_ctx`/`add_ctx` (ContextBench)")
    edit: set[LineKey] | None = None
    if data.get("gold_edit_lines"):
        edit = line_set(_spans_field(data["gold_edit_lines"], path, "gold_edit_lines"))
    elif isinstance(data.get("patch"), str) and data["patch"].strip():
        edit = edit_lines(data["patch"], f"{path}: patch")
    return spans, edit


def evaluate_files(pred_path: Path, gold_path: Path, repo: Repo) -> RunRetrieval:
    """Metrics of one ContextBench-format prediction against one gold file. A prediction
    with no `pred_steps` at all has its final context (`pred_files`, `pred_spans`) as its one
    step, as ContextBench does: a system that reports only a final context is scored on it
    rather than given AUC 0."""
    viewed, dropped, final_spans, final_files, patch = read_prediction(pred_path, repo)
    if not viewed and not _has_steps(pred_path):
        viewed = [Viewed(step=0, file=f) for f in final_files]
        viewed += [Viewed(step=0, file=f, lines=lines) for f, lines in final_spans]
    gold_spans, gold_edit = read_gold(gold_path)
    final = None
    if final_spans or final_files:
        final = build_context(repo, final_files, final_spans)
    pred_edit = edit_lines(patch, f"{pred_path}: model_patch") if patch is not None else None
    return run_metrics(repo, viewed, gold_spans, gold_edit=gold_edit, pred_edit=pred_edit,
                       final=final, run_id=pred_path.stem, dropped=dropped)
