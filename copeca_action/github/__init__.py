"""The GitHub layer: event and inputs in; outputs, summary, PR comment, check run, badge out.

It reads a finished result only; the engine is passed to `run_action`/`main`.
"""

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
