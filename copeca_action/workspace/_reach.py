"""Answers in reach: a task whose own file (prompt, grading answers, gold context) is in the
tree of the repository it runs on shows the agent the answers it is graded on (a benchmark
kept in the repository it benchmarks: a `local:` pin of the tool's own clone, say). The
engine refuses such a run from the snapshots; `validate` asks the same of a `local:` pin's
clone before any snapshot is taken, with the same words."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from copeca_action.errors import WorkspaceError
from copeca_action.scenario import RepoSpec, Task
from copeca_action.workspace._git import rev_parse
from copeca_action.workspace._snapshot import local_clone, origin_of
from copeca_action.workspace._worktree import files_in_tree


def answers_message(task_id: str, repo: str, commit: str, task_file: Path, where: str) -> str:
    """Why a task whose file the repository holds (as `where`) is refused."""
    return (f"task {task_id}: repository {repo!r} at {commit[:12]} holds the task's own file "
            f"({task_file} as {where}), so the agent's checkout shows it the answers it is "
            "graded on; pin a commit without the benchmark, or keep the benchmark outside the "
            "repository")


@dataclass(frozen=True)
class InReach:
    """One task a `local:` pin would show its answers (or whose pin cannot be read)."""

    task_id: str
    repo: str
    message: str
    unreadable: bool = False
    """The pin could not be read (no git repository, no such commit): a run would fail on
    it, but nothing is known about the answers."""


def local_pin_answers(root: Path, repos: Mapping[str, RepoSpec],
                      tasks: Iterable[tuple[Task, Path]]) -> list[InReach]:
    """The tasks (with their files) whose repository a run takes from a `local:` pin and
    whose clone holds their own file at the commit a run would use (its HEAD, or the task's
    `commit`). `root`: the benchmark's folder (the folder of repos.yaml, against which a
    relative pin and the task files' paths are read). A pin that is no git repository, or
    lacks the commit, is named too: a run would fail on it."""
    by_repo: dict[tuple[str, str | None], list[tuple[Task, Path]]] = {}
    for task, path in tasks:
        spec = repos.get(task.repo)
        if spec is None or spec.local is None:
            continue
        try:
            if origin_of(spec, task.commit) != "local":
                continue
        except WorkspaceError:
            continue
        by_repo.setdefault((task.repo, task.commit), []).append((task, path))
    found: list[InReach] = []
    for (repo, commit), pairs in sorted(by_repo.items(), key=lambda kv: (kv[0][0],
                                                                         kv[0][1] or "")):
        pin = repos[repo].local
        assert pin is not None
        try:
            src = local_clone(repo, pin, root)
            at = commit or rev_parse("HEAD", cwd=src)
            files = {t.id: (p, p.resolve().relative_to(root.resolve()).as_posix())
                     for t, p in pairs if p.resolve().is_relative_to(root.resolve())}
            held = files_in_tree(None, at, files, cwd=src)
        except WorkspaceError as exc:
            found += [InReach(t.id, repo, f"task {t.id}: {exc}", unreadable=True)
                      for t, _ in pairs]
            continue
        found += [InReach(task, repo, answers_message(task, repo, at, files[task][0], where))
                  for task, where in sorted(held.items())]
    return found
