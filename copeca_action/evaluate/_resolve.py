"""From a log folder to what evaluating it needs: the corpus tasks of its features, the
repository checkout, the sandbox, and the repository's test-file rules.

Feature N of task TASK in repository REPO is the corpus task `REPO/TASK/fN`, graded by `patch`
(its tests patch and command are the feature's hidden tests).
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from copeca_action.errors import ConfigError, CopecaError
from copeca_action.evaluate._apply import ApplyOptions
from copeca_action.evaluate._docker import build_image, docker_client
from copeca_action.evaluate._evaluate import evaluate_solo, now_iso
from copeca_action.evaluate._git import BaseRepo, base_repo
from copeca_action.evaluate._logs import LoggedRun, Resolved
from copeca_action.evaluate._models import EvalResult, FeatureSpec
from copeca_action.evaluate._sandbox import Sandbox, make_sandbox
from copeca_action.evaluate._taskfiles import beside_task
from copeca_action.evaluate._testfiles import TestFileRules
from copeca_action.scenario import Corpus, Task, leaves_folder


def feature_task_id(repo: str, task: str, feature: int) -> str:
    return f"{repo}/{task}/f{feature}"


def feature_spec(task: Task, task_file: Path, number: int) -> FeatureSpec:
    """The hidden tests of a `patch` task as a feature."""
    spec = task.grading.patch
    if spec is None:
        raise CopecaError(f"{task_file}: task {task.id} is not graded by `patch`")
    tests = beside_task(task_file, spec.tests_patch, "grading.patch.tests_patch")
    return FeatureSpec(id=number, tests_patch=tests.read_bytes().decode("utf-8",
                                                                        "surrogateescape"),
                       command=list(spec.command), timeout_s=spec.timeout_s,
                       tests=tuple(spec.tests))


def parse_repo_dirs(values: list[str]) -> dict[str, Path]:
    """`--repo-dir PATH` (every repository) or `--repo-dir REPO=PATH`; key "" is the default."""
    found: dict[str, Path] = {}
    for value in values:
        name, sep, path = value.partition("=")
        key, where = (name, Path(path)) if sep and "/" not in name else ("", Path(value))
        if not where.is_dir():
            raise ConfigError(f"--repo-dir {value}: {where} is not a directory", file="--repo-dir")
        found[key] = where
    return found


class CorpusResolver:
    """Resolves runs against a corpus, checkouts and one sandbox kind; thread-safe."""

    def __init__(self, corpus: Corpus, repo_dirs: Mapping[str, Path], backend: str = "local",
                 image: str | None = None, sandbox_options: dict[str, Any] | None = None,
                 apply_options: ApplyOptions | None = None) -> None:
        self.corpus = corpus
        self.apply_options = apply_options or ApplyOptions()
        self.repo_dirs = dict(repo_dirs)
        self.backend = backend
        self.image = image
        self.options = sandbox_options or {}
        self._lock = threading.Lock()
        self._sandboxes: dict[str, Sandbox] = {}
        self._bases: dict[str, BaseRepo] = {}
        self._client: Any = None

    def checkout(self, repo: str) -> Path:
        where = self.repo_dirs.get(repo) or self.repo_dirs.get("")
        if where is None:
            raise ConfigError(f"--repo-dir: no checkout for repository {repo!r}; pass "
                              f"--repo-dir {repo}=PATH", file="--repo-dir")
        return where

    def rules(self, repo: str, protected: list[str] | None = None) -> TestFileRules:
        """The repository's test patterns, plus the feature tasks' `protected` globs."""
        spec = self.corpus.repos.get(repo)
        return TestFileRules.from_patterns(spec.test_patterns if spec else [], protected or [])

    def sandbox(self, repo: str) -> Sandbox:
        with self._lock:
            key = repo if self.backend == "docker" else ""
            if key not in self._sandboxes:
                self._sandboxes[key] = self._make_sandbox(repo)
            return self._sandboxes[key]

    def _make_sandbox(self, repo: str) -> Sandbox:
        if self.backend != "docker":
            return make_sandbox(self.backend, **self.options)
        image = self.image
        spec = self.corpus.repos.get(repo)
        dockerfile = spec.dockerfile if image is None and spec is not None else None
        root = self.corpus.root
        # The Dockerfile's folder is the build context sent to the engine: a link leading
        # out of the corpus would send that folder (/etc, a home) instead.
        if dockerfile and (why := leaves_folder(dockerfile, root, {"the corpus": root})):
            raise ConfigError(f"{root / 'repos.yaml'}: repos.{repo}.dockerfile: {why}")
        if self._client is None:
            self._client = docker_client()
        if dockerfile:
            image = build_image(self._client, root / dockerfile)
        return make_sandbox("docker", image=image, client=self._client, **self.options)

    def base(self, repo: str) -> BaseRepo:
        with self._lock:
            if repo not in self._bases:
                self._bases[repo] = base_repo(self.checkout(repo))
            return self._bases[repo]

    def __call__(self, run: LoggedRun) -> Resolved:
        features = []
        protected: list[str] = []
        for number in dict.fromkeys(run.features):
            task_id = feature_task_id(run.repo, run.task, number)
            if task_id not in self.corpus.tasks:
                raise CopecaError(f"no corpus task {task_id!r} for feature {number} of "
                                  f"{run.name} (corpus {self.corpus.root})")
            task = self.corpus.tasks[task_id]
            features.append(feature_spec(task, self.corpus.task_files[task_id], number))
            if task.grading.patch is not None:
                protected += task.grading.patch.protected
        return Resolved(base=self.base(run.repo), features=features,
                        sandbox=self.sandbox(run.repo), rules=self.rules(run.repo, protected),
                        options=self.apply_options)

    def close(self) -> None:
        for sandbox in self._sandboxes.values():
            sandbox.close()


def evaluate_task_patch(task: Task, task_file: Path, checkout: Path, patch: str,
                        sandbox: Sandbox, rules: TestFileRules | None = None) -> EvalResult:
    """Grade one `patch` task's run: the agent's patch (from `extract_patch`) against the
    task's hidden tests on a clean tree made from `checkout` (what the engine calls)."""
    return evaluate_task_patch_at(base_repo(checkout, task.commit), task, task_file, patch,
                                  sandbox, rules)


def evaluate_task_patch_at(base: BaseRepo, task: Task, task_file: Path, patch: str,
                           sandbox: Sandbox, rules: TestFileRules | None = None) -> EvalResult:
    """`evaluate_task_patch` from a known base (the engine's snapshot repo and start commit).
    A task file problem (tests patch missing) comes back as the result's error."""
    try:
        spec = feature_spec(task, task_file, 1)
    except CopecaError as exc:
        return EvalResult(repo=task.repo, task_id=task.id, features=[1], setting="solo",
                          error=str(exc), evaluated_at=now_iso())
    return evaluate_solo(base, [spec], patch, sandbox, repo=task.repo, task_id=task.id,
                         rules=rules)
