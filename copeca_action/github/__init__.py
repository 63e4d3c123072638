"""The GitHub layer: event and inputs in; outputs, summary, PR comment, check run, badge out.

It reads a finished result only; the engine is passed to `run_action`/`main`."""

import importlib as _importlib
import typing as _typing

if _typing.TYPE_CHECKING:
    from copeca_action.github._action import (
        OUTPUT_NAMES,
        ActionContext,
        Engine,
        Outcome,
        exit_code,
        host_path,
        main,
        run_action,
    )
    from copeca_action.github._badge import (
        ENDPOINT_KEYS,
        BadgeInput,
        badge_endpoint,
        badge_input,
        badge_svg,
        read_badge_input,
        write_badge,
    )
    from copeca_action.github._checks import create_check_run
    from copeca_action.github._client import GitHubClient, RetryPolicy
    from copeca_action.github._comment_data import (
        AdoptionLine,
        Bounds,
        CapabilityRow,
        CommentData,
        ComparisonRow,
        Estimate,
        FlagRow,
        Footer,
        Headline,
        HistoryLine,
        MetricRow,
        RetrievalRow,
        RunFacts,
        TaskRow,
    )
    from copeca_action.github._comments import (
        MAX_COMMENT_CHARS,
        CommentResult,
        find_comment,
        marker,
        upsert_comment,
    )
    from copeca_action.github._engine import run_engine
    from copeca_action.github._event import EventContext, parse_event, read_event
    from copeca_action.github._files import format_output, mask, write_outputs, write_summary
    from copeca_action.github._from_report import BundleInfo, comment_data, output_values
    from copeca_action.github._gate import Gate, check_gate
    from copeca_action.github._history import (
        DATA_BRANCH,
        ArmPoint,
        History,
        HistoryEntry,
        badge_url,
        history_entry,
        history_line,
        publish_history,
        read_history,
        records_history,
    )
    from copeca_action.github._inputs import PARSERS, ActionInputs, Shard, read_inputs
    from copeca_action.github._markdown import escape_md
    from copeca_action.github._render import headline_text, render_comment

__all__ = [
    "DATA_BRANCH",
    "ENDPOINT_KEYS",
    "MAX_COMMENT_CHARS",
    "OUTPUT_NAMES",
    "PARSERS",
    "ActionContext",
    "ActionInputs",
    "AdoptionLine",
    "ArmPoint",
    "BadgeInput",
    "Bounds",
    "BundleInfo",
    "CapabilityRow",
    "CommentData",
    "CommentResult",
    "ComparisonRow",
    "Engine",
    "Estimate",
    "EventContext",
    "FlagRow",
    "Footer",
    "Gate",
    "GitHubClient",
    "Headline",
    "History",
    "HistoryEntry",
    "HistoryLine",
    "MetricRow",
    "Outcome",
    "RetrievalRow",
    "RetryPolicy",
    "RunFacts",
    "Shard",
    "TaskRow",
    "badge_endpoint",
    "badge_input",
    "badge_svg",
    "badge_url",
    "check_gate",
    "comment_data",
    "create_check_run",
    "escape_md",
    "exit_code",
    "find_comment",
    "format_output",
    "headline_text",
    "history_entry",
    "history_line",
    "host_path",
    "main",
    "marker",
    "mask",
    "output_values",
    "parse_event",
    "publish_history",
    "read_badge_input",
    "read_event",
    "read_history",
    "read_inputs",
    "records_history",
    "render_comment",
    "run_action",
    "run_engine",
    "upsert_comment",
    "write_badge",
    "write_outputs",
    "write_summary",
]

_LAZY: dict[str, str] = {
    "ActionContext": "copeca_action.github._action",
    "ActionInputs": "copeca_action.github._inputs",
    "AdoptionLine": "copeca_action.github._comment_data",
    "ComparisonRow": "copeca_action.github._comment_data",
    "ArmPoint": "copeca_action.github._history",
    "BadgeInput": "copeca_action.github._badge",
    "Bounds": "copeca_action.github._comment_data",
    "BundleInfo": "copeca_action.github._from_report",
    "CapabilityRow": "copeca_action.github._comment_data",
    "CommentData": "copeca_action.github._comment_data",
    "CommentResult": "copeca_action.github._comments",
    "DATA_BRANCH": "copeca_action.github._history",
    "ENDPOINT_KEYS": "copeca_action.github._badge",
    "Engine": "copeca_action.github._action",
    "Estimate": "copeca_action.github._comment_data",
    "EventContext": "copeca_action.github._event",
    "FlagRow": "copeca_action.github._comment_data",
    "Footer": "copeca_action.github._comment_data",
    "Gate": "copeca_action.github._gate",
    "GitHubClient": "copeca_action.github._client",
    "Headline": "copeca_action.github._comment_data",
    "History": "copeca_action.github._history",
    "HistoryEntry": "copeca_action.github._history",
    "HistoryLine": "copeca_action.github._comment_data",
    "MAX_COMMENT_CHARS": "copeca_action.github._comments",
    "MetricRow": "copeca_action.github._comment_data",
    "OUTPUT_NAMES": "copeca_action.github._action",
    "Outcome": "copeca_action.github._action",
    "PARSERS": "copeca_action.github._inputs",
    "RetrievalRow": "copeca_action.github._comment_data",
    "RetryPolicy": "copeca_action.github._client",
    "RunFacts": "copeca_action.github._comment_data",
    "Shard": "copeca_action.github._inputs",
    "TaskRow": "copeca_action.github._comment_data",
    "badge_endpoint": "copeca_action.github._badge",
    "badge_input": "copeca_action.github._badge",
    "badge_svg": "copeca_action.github._badge",
    "badge_url": "copeca_action.github._history",
    "check_gate": "copeca_action.github._gate",
    "comment_data": "copeca_action.github._from_report",
    "create_check_run": "copeca_action.github._checks",
    "escape_md": "copeca_action.github._markdown",
    "exit_code": "copeca_action.github._action",
    "find_comment": "copeca_action.github._comments",
    "format_output": "copeca_action.github._files",
    "headline_text": "copeca_action.github._render",
    "history_entry": "copeca_action.github._history",
    "history_line": "copeca_action.github._history",
    "host_path": "copeca_action.github._action",
    "main": "copeca_action.github._action",
    "marker": "copeca_action.github._comments",
    "mask": "copeca_action.github._files",
    "output_values": "copeca_action.github._from_report",
    "parse_event": "copeca_action.github._event",
    "publish_history": "copeca_action.github._history",
    "read_badge_input": "copeca_action.github._badge",
    "read_event": "copeca_action.github._event",
    "read_history": "copeca_action.github._history",
    "read_inputs": "copeca_action.github._inputs",
    "records_history": "copeca_action.github._history",
    "render_comment": "copeca_action.github._render",
    "run_action": "copeca_action.github._action",
    "run_engine": "copeca_action.github._engine",
    "upsert_comment": "copeca_action.github._comments",
    "write_badge": "copeca_action.github._badge",
    "write_outputs": "copeca_action.github._files",
    "write_summary": "copeca_action.github._files",
}
"""Each public name and its module, imported on first use (PEP 562): importing one
submodule of this package does not load the others."""


def __getattr__(name: str) -> _typing.Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(_importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))
