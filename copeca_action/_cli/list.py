"""`copeca-action list [--repo R] [--category C] [--control]`: the tasks as a table."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from rich.console import Console
from rich.table import Table

from copeca_action.errors import ConfigError
from copeca_action.scenario import corpus_folder, find_corpus_root, load_corpus


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("list", help="list the corpus tasks",
                       description="List the tasks of a benchmark (a corpus folder: "
                       "`copeca-action list benchmark`; by default the one holding the current "
                       "directory or its benchmark/, else the bundled corpus): id, repository, "
                       "category, type, control.")
    p.add_argument("folder", nargs="?", type=Path,
                   help="a benchmark or corpus folder (default: the one holding the current "
                   "directory or its benchmark/, else the bundled corpus)")
    p.add_argument("--corpus", type=Path, help="the same as FOLDER (kept for scripts)")
    p.add_argument("--repo", help="only tasks of this repository (a repos.yaml name)")
    p.add_argument("--category", choices=["locate", "trace", "fix", "debug", "reason"],
                   help="only tasks of this category")
    p.add_argument("--control", action="store_true", help="only control tasks")
    p.add_argument("--json", action="store_true", help="print the tasks as JSON")
    p.set_defaults(func=run, fast_exit=True)


def run(args: argparse.Namespace) -> int:
    named = args.folder or args.corpus
    root = find_corpus_root(Path.cwd())
    if named is not None:  # a folder inside a corpus lists that corpus
        root = find_corpus_root(named.resolve()) if named.is_dir() else None
        if root is None:
            root = corpus_folder(named, "FOLDER" if args.folder else "--corpus")
    corpus = load_corpus(root).require_ok()
    if args.repo and args.repo not in corpus.repos:
        raise ConfigError(f"no repository {args.repo!r} in {corpus.root / 'repos.yaml'} "
                          f"(known: {', '.join(sorted(corpus.repos)) or 'none'})", "--repo")
    tasks = [t for _, t in sorted(corpus.tasks.items())
             if (not args.repo or t.repo == args.repo)
             and (not args.category or t.category == args.category)
             and (not args.control or t.control)]
    if args.json:
        print(json.dumps([t.model_dump(mode="json") for t in tasks], indent=2))
        return 0
    table = Table("id", "repo", "type", "category", "language", "difficulty", "control",
                  "grading", title=f"{len(tasks)} tasks in {corpus.root}")
    for t in tasks:
        table.add_row(t.id, t.repo, t.type, t.category, t.language, t.difficulty,
                      "yes" if t.control else "", t.grading.kind)
    Console().print(table)
    return 0
