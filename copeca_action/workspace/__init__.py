"""Workspaces: pinned snapshots in a cache, one isolated git worktree per run."""

from copeca_action.workspace._buildcache import (
    cache_dir_for,
    copy_build_cache,
    ensure_build_cache,
    read_warm_log,
    tree_id,
)
from copeca_action.workspace._content import folder_content_id
from copeca_action.workspace._pool import WorktreePool, reset_worktree
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
    "Origin",
    "Snapshot",
    "SnapshotStore",
    "Worktree",
    "WorktreePool",
    "add_worktree",
    "cache_dir_for",
    "capture_patch",
    "check_mutations",
    "clean_tree",
    "copy_build_cache",
    "default_cache_dir",
    "ensure_build_cache",
    "folder_content_id",
    "head_of",
    "instruction_files",
    "origin_of",
    "plant",
    "prune_worktrees",
    "read_file_at",
    "read_warm_log",
    "remove_worktree",
    "reset_worktree",
    "tree_id",
]
