"""`copeca-action snapshot fetch|list|verify`: the cache of pinned repository snapshots."""

from __future__ import annotations

import argparse
from pathlib import Path

from rich.console import Console
from rich.table import Table

from copeca_action.errors import ConfigError, WorkspaceError
from copeca_action.scenario import corpus_folder, find_corpus_root, load_corpus
from copeca_action.workspace import ORIGIN_ORDER, SnapshotStore, default_cache_dir


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("snapshot", help="fetch, list and verify pinned repository snapshots",
                       description="Snapshots are bare git repos in a cache; every run gets a "
                       "worktree from one. Fetching may use the network (PyPI for sdist pins, "
                       "the git URL for git pins); runs never do.")
    verbs = p.add_subparsers(dest="verb", metavar="VERB", required=True,
                             help="fetch, list or verify")
    fetch = verbs.add_parser("fetch", help="make snapshots available (default: every repo)")
    fetch.add_argument("repos", nargs="*", help="repository names from repos.yaml")
    fetch.add_argument("--origin", choices=ORIGIN_ORDER, help="which pin to fetch")
    fetch.add_argument("--offline", action="store_true",
                       help="only use files already here (corpus/snapshots, the cache)")
    fetch.add_argument("--refresh", action="store_true", help="fetch again even if cached")
    fetch.add_argument("--sdist-dir", type=Path, action="append", default=[],
                       help="folder holding sdist files to use before downloading")
    fetch.set_defaults(func=run_fetch)
    listing = verbs.add_parser("list", help="show cached snapshots")
    listing.set_defaults(func=run_list)
    verify = verbs.add_parser("verify", help="check cached snapshots against their pins")
    verify.add_argument("repos", nargs="*", help="repository names (default: every cached one)")
    verify.set_defaults(func=run_verify)
    for q in (fetch, listing, verify):
        q.add_argument("--cache", type=Path, help="cache folder (default: $COPECA_CACHE_DIR "
                       "or ~/.cache/copeca-action)")
        q.add_argument("--corpus", type=Path, help="corpus folder holding repos.yaml")


def _store(args: argparse.Namespace) -> SnapshotStore:
    root = (corpus_folder(args.corpus, "--corpus") if args.corpus
            else find_corpus_root(Path.cwd()))
    if args.cache is not None and args.cache.exists() and not args.cache.is_dir():
        raise ConfigError(f"{args.cache}: is a file, expected the cache folder", "--cache")
    corpus = load_corpus(root).require_ok()
    return SnapshotStore(args.cache or default_cache_dir(), corpus.repos,
                         sdist_dirs=getattr(args, "sdist_dir", None), repos_dir=corpus.root)


def run_fetch(args: argparse.Namespace) -> int:
    store = _store(args)
    names = args.repos or sorted(store.repos)
    failed = 0
    for name in names:
        try:
            snap = store.fetch(name, args.origin, network=not args.offline,
                               refresh=args.refresh)
        except WorkspaceError as exc:
            failed += 1
            print(f"{name}: FAILED: {exc}")
            continue
        print(f"{name}: {snap.origin} {snap.commit} ({snap.source})")
    return 1 if failed else 0


def run_list(args: argparse.Namespace) -> int:
    store = _store(args)
    table = Table("repo", "origin", "commit", "source", "fetched")
    for snap in store.snapshots():
        table.add_row(snap.repo, snap.origin, snap.commit[:12], snap.source,
                      snap.fetched_at.isoformat())
    Console().print(table)
    print(f"cache: {store.root}")
    return 0


def run_verify(args: argparse.Namespace) -> int:
    store = _store(args)
    snaps = [s for s in store.snapshots() if not args.repos or s.repo in args.repos]
    if not snaps:
        print("no snapshots to verify")
        return 1
    bad = 0
    for snap in snaps:
        problems = store.verify(snap)
        bad += bool(problems)
        print(f"{snap.repo} ({snap.origin} {snap.commit[:12]}): "
              + ("ok" if not problems else "; ".join(problems)))
    return 1 if bad else 0
