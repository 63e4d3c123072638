"""`copeca-action check-task TASK --repo-dir PATH`: prove a task's grading works both ways."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from copeca_action._cli._deep import build_cache_for
from copeca_action._util.scrub import register_readable_dir
from copeca_action.errors import ConfigError
from copeca_action.evaluate import check_task, sandbox_names
from copeca_action.evaluate._resolve import CorpusResolver
from copeca_action.scenario import corpus_folder, load_corpus, load_task


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("check-task", help="check that a task's tests tell right from wrong",
                       description="test tasks: the command fails on the mutated snapshot and "
                       "passes once the real fix, sanitised and applied as grading does, is in. "
                       "patch tasks: the hidden tests fail without the reference fix and pass "
                       "with it.")
    p.add_argument("task", help="task id (in --corpus) or path to a task YAML")
    p.add_argument("--repo-dir", type=Path, required=True,
                   help="checkout of the task's repository at its pinned commit")
    p.add_argument("--corpus", type=Path, help="corpus (default: bundled)")
    p.add_argument("--backend", choices=sandbox_names(), default="local",
                   help="where the tests run: local (a sandbox on this machine) or docker")
    p.add_argument("--image", help="docker backend: local image")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    corpus = load_corpus(corpus_folder(args.corpus, "--corpus") if args.corpus
                         else None).require_ok()
    as_path = Path(args.task)
    if as_path.suffix in (".yaml", ".yml") and as_path.is_file():
        task, task_file = load_task(as_path), as_path
    elif args.task in corpus.tasks:
        task, task_file = corpus.tasks[args.task], corpus.task_files[args.task]
    elif as_path.is_file():
        raise ConfigError(f"check-task {args.task}: a file that is no task file (expected a "
                          f"task's .yaml or a task id of {corpus.root})", file="TASK")
    elif as_path.is_dir():
        raise ConfigError(f"check-task {args.task}: a folder (expected a task's .yaml file or a "
                          f"task id of {corpus.root})", file="TASK")
    else:
        raise ConfigError(f"check-task {args.task}: no such task id in {corpus.root} and no such "
                          "task file", file="TASK")
    if not args.repo_dir.is_dir():
        raise ConfigError(f"--repo-dir {args.repo_dir}: not a directory", file="--repo-dir")
    register_readable_dir(args.repo_dir.resolve())  # its node_modules etc., even under /tmp
    resolver = CorpusResolver(corpus, {"": args.repo_dir}, args.backend, args.image)
    try:
        cache = build_cache_for(corpus, task, args.repo_dir, args.backend)
        result = check_task(task, task_file, args.repo_dir, resolver.sandbox(task.repo), cache)
    finally:
        resolver.close()
    if args.json:
        print(json.dumps(result.model_dump(mode="json"), indent=2))
    else:
        for step in result.steps:
            mark = "ok  " if step.ok else "FAIL"
            print(f"{mark} {step.name}: expected {step.expect}, exit {step.exit_code}"
                  + (" (timed out)" if step.timed_out else ""))
            if not step.ok and step.detail:
                print("     " + step.detail[-600:].replace("\n", "\n     "))
        print(("ok: " if result.ok else "not ok: ") + f"{task.id} ({result.kind})"
              + (f": {result.note}" if result.note else ""))
    return 0 if result.ok else 1
