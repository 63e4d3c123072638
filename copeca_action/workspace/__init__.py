"""Workspaces: pinned snapshots in a cache, one isolated git worktree per run."""

import importlib as _importlib
import typing as _typing

if _typing.TYPE_CHECKING:
    from copeca_action.workspace._buildcache import (
        cache_dir_for,
        copy_build_cache,
        ensure_build_cache,
        read_warm_log,
        tree_id,
    )
    from copeca_action.workspace._content import folder_content_id
    from copeca_action.workspace._pool import WorktreePool, reset_worktree
    from copeca_action.workspace._reach import InReach, answers_message, local_pin_answers
    from copeca_action.workspace._snapshot import (
        ORIGIN_ORDER,
        Origin,
        Snapshot,
        SnapshotStore,
        default_cache_dir,
        origin_of,
    )
    from copeca_action.workspace._worktree import (
        INSTRUCTION_FILES,
        Worktree,
        add_worktree,
        capture_patch,
        check_mutations,
        clean_tree,
        files_in_tree,
        head_of,
        instruction_files,
        plant,
        prune_worktrees,
        read_file_at,
        remove_worktree,
    )

__all__ = [
    "INSTRUCTION_FILES",
    "ORIGIN_ORDER",
    "InReach",
    "Origin",
    "Snapshot",
    "SnapshotStore",
    "Worktree",
    "WorktreePool",
    "add_worktree",
    "answers_message",
    "cache_dir_for",
    "capture_patch",
    "check_mutations",
    "clean_tree",
    "copy_build_cache",
    "default_cache_dir",
    "ensure_build_cache",
    "files_in_tree",
    "folder_content_id",
    "head_of",
    "instruction_files",
    "local_pin_answers",
    "origin_of",
    "plant",
    "prune_worktrees",
    "read_file_at",
    "read_warm_log",
    "remove_worktree",
    "reset_worktree",
    "tree_id",
]

_LAZY: dict[str, str] = {
    "INSTRUCTION_FILES": "copeca_action.workspace._worktree",
    "InReach": "copeca_action.workspace._reach",
    "ORIGIN_ORDER": "copeca_action.workspace._snapshot",
    "Origin": "copeca_action.workspace._snapshot",
    "Snapshot": "copeca_action.workspace._snapshot",
    "SnapshotStore": "copeca_action.workspace._snapshot",
    "Worktree": "copeca_action.workspace._worktree",
    "WorktreePool": "copeca_action.workspace._pool",
    "add_worktree": "copeca_action.workspace._worktree",
    "answers_message": "copeca_action.workspace._reach",
    "cache_dir_for": "copeca_action.workspace._buildcache",
    "capture_patch": "copeca_action.workspace._worktree",
    "check_mutations": "copeca_action.workspace._worktree",
    "clean_tree": "copeca_action.workspace._worktree",
    "copy_build_cache": "copeca_action.workspace._buildcache",
    "default_cache_dir": "copeca_action.workspace._snapshot",
    "ensure_build_cache": "copeca_action.workspace._buildcache",
    "files_in_tree": "copeca_action.workspace._worktree",
    "folder_content_id": "copeca_action.workspace._content",
    "head_of": "copeca_action.workspace._worktree",
    "instruction_files": "copeca_action.workspace._worktree",
    "local_pin_answers": "copeca_action.workspace._reach",
    "origin_of": "copeca_action.workspace._snapshot",
    "plant": "copeca_action.workspace._worktree",
    "prune_worktrees": "copeca_action.workspace._worktree",
    "read_file_at": "copeca_action.workspace._worktree",
    "read_warm_log": "copeca_action.workspace._buildcache",
    "remove_worktree": "copeca_action.workspace._worktree",
    "reset_worktree": "copeca_action.workspace._pool",
    "tree_id": "copeca_action.workspace._buildcache",
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
