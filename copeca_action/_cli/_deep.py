"""`validate --deep`: run check-task on every edit task whose toolchain is present here.

A task is skipped, with the reason, when there is no checkout of its repository under
`--repos-dir` or its language's toolchain is missing; everything else is checked for real
(clean passes, mutated fails; or hidden tests fail without and pass with the reference fix).
"""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from copeca_action._util.scrub import register_readable_dir
from copeca_action.errors import CopecaError
from copeca_action.evaluate import CacheUse, TestFileRules, check_task
from copeca_action.evaluate._git import base_repo, clone_tree
from copeca_action.evaluate._resolve import CorpusResolver
from copeca_action.scenario import Corpus, Task
from copeca_action.workspace import default_cache_dir, ensure_build_cache, tree_id

# What each language's test commands need besides the checkout (docs/corpus.md).
TOOLCHAINS: dict[str, list[tuple[str, str]]] = {
    "python": [],
    "javascript": [("bin", "node")],
    "typescript": [("bin", "node")],
    # Debian's default-jdk-headless, junit5 and libjsr305-java (jsoup's test commands)
    "java": [("bin", "javac"), ("path", "/usr/share/java/junit-platform-console-standalone.jar"),
             ("path", "/usr/share/java/jsr305.jar")],
    "go": [("bin", "go"), ("dir", "/usr/share/gocode/src")],
    "rust": [("path", "/usr/bin/cargo"), ("dir", "/usr/share/cargo/registry")],
}
NODE_LANGUAGES = ("javascript", "typescript")
"""Their test commands take the set-up's node_modules (the repository's `setup`)."""


@dataclass(frozen=True)
class DeepResult:
    task_id: str
    status: str
    """`ok`, `fail` or `skip`."""
    detail: str = ""


def missing_toolchain(task: Task, checkout: Path) -> str | None:
    """Why this task's command cannot run here, or None when it can."""
    for kind, what in TOOLCHAINS.get(task.language, []):
        if kind == "bin" and shutil.which(what) is None:
            return f"{what} is not on PATH"
        if kind == "path" and not Path(what).exists():
            return f"{what} is missing"
        if kind == "dir" and not Path(what).is_dir():
            return f"{what} is missing (the Debian packages in docs/corpus.md provide it)"
    if task.language in NODE_LANGUAGES and not _node_modules(checkout):
        return f"{checkout} has no node_modules (run the repository's setup there)"
    return None


def _node_modules(checkout: Path) -> Path | None:
    found = checkout / "node_modules"
    return found if found.is_dir() else None


def expand_command(task: Task) -> Task:
    """`{python}` in a command is the harness's own interpreter, as at run time."""
    def sub(argv: list[str]) -> list[str]:
        return [sys.executable if a == "{python}" else a for a in argv]
    g = task.grading
    if g.test is not None:
        grading = g.model_copy(update={"test": g.test.model_copy(
            update={"command": sub(g.test.command)})})
    elif g.patch is not None:
        grading = g.model_copy(update={"patch": g.patch.model_copy(
            update={"command": sub(g.patch.command)})})
    else:
        return task
    return task.model_copy(update={"grading": grading})


@contextmanager
def _env(name: str, value: str | None) -> Iterator[None]:
    old = os.environ.get(name)
    if value is not None:
        os.environ[name] = value
    try:
        yield
    finally:
        if old is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = old


WARM_ENV = ("PATH", "LANG", "LC_ALL", "LC_CTYPE", "TZ")


def _rules(corpus: Corpus, task: Task) -> TestFileRules:
    """The rules the engine grades this task with: the repository's test patterns and the
    task's protected globs."""
    spec = corpus.repos.get(task.repo)
    protected = task.grading.test.protected if task.grading.test else []
    return TestFileRules.from_patterns(spec.test_patterns if spec else [], protected)


def build_cache_for(corpus: Corpus, task: Task, checkout: Path, backend: str,
                    root: Path | None = None) -> CacheUse | None:
    """The warm build cache of the checkout's tree (warmed now on first use), shared with the
    run engine's grading of the same files (same folder, same key); None when the repository
    declares none, the toolchain is missing, the warm-up failed, or the backend cannot
    mount it."""
    spec = corpus.repos[task.repo].build_cache if task.repo in corpus.repos else None
    if spec is None or backend != "local":
        return None
    base = base_repo(checkout, task.commit)
    env = {k: os.environ[k] for k in WARM_ENV if k in os.environ}
    warm = ensure_build_cache(root or default_cache_dir() / "build-cache", task.repo,
                              tree_id(base.path, base.commit), spec,
                              lambda dest: clone_tree(base, dest), env)
    return CacheUse(spec.env, warm) if warm is not None else None


def deep_check(corpus: Corpus, repos_dir: Path, backend: str = "local",
               image: str | None = None, cache_root: Path | None = None
               ) -> Iterator[DeepResult]:
    """Check every edit task of the corpus, in id order, yielding each result as it is known.
    The checkouts hold what the tests need beside the tree (express's node_modules): the
    sandbox shows them read-only even when they sit in a place it blanks (/tmp)."""
    register_readable_dir(repos_dir.resolve())
    for task_id in sorted(corpus.tasks):
        task = corpus.tasks[task_id]
        if task.grading.kind == "answer":
            continue
        checkout = repos_dir / task.repo
        if not checkout.is_dir():
            yield DeepResult(task_id, "skip", f"no checkout at {checkout}")
            continue
        reason = missing_toolchain(task, checkout)
        if reason is not None:
            yield DeepResult(task_id, "skip", reason)
            continue
        modules = _node_modules(checkout)
        resolver = CorpusResolver(corpus, {task.repo: checkout}, backend, image)
        try:
            cache = build_cache_for(corpus, task, checkout, backend, cache_root)
            with _env("NODE_PATH", str(modules.resolve()) if modules else None):
                result = check_task(expand_command(task), corpus.task_files[task_id], checkout,
                                    resolver.sandbox(task.repo), cache,
                                    _rules(corpus, task))
        except CopecaError as exc:
            yield DeepResult(task_id, "fail", str(exc))
            continue
        finally:
            resolver.close()
        failed = [f"{s.name}: expected {s.expect}, exit {s.exit_code}" + (
            f"\n{s.detail[-400:]}" if s.detail else "") for s in result.steps if not s.ok]
        yield DeepResult(task_id, "ok" if result.ok else "fail", "\n".join(failed))
