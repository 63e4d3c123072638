#!/usr/bin/env python3
"""Build-time: fill the image's snapshot cache ($COPECA_CACHE_DIR) with the corpus's pinned
snapshots, each checked against its sha256, and run each repository's set-up once.

The image then runs the bundled corpus with no network: the engine finds every snapshot, and
every set-up folder, already made in the cache it reads. sdist pins come from PyPI (or the
corpus's own snapshots/ folder), Debian pins from the image's configured mirror through
`apt-get source`, for which a `deb-src` entry is added beside each `deb` one; git pins are
left to run time. A mismatch fails the build: a snapshot that is not the pinned one would
silently change every task's answer.

Usage: fetch_snapshots.py CORPUS_DIR CACHE_DIR [1 | all | "REPO REPO..."]  (default: all)
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from copeca_action.engine._context import expand_tree
from copeca_action.errors import CopecaError
from copeca_action.scenario import RepoSpec, load_repos
from copeca_action.workspace import SnapshotStore, origin_of

SOURCES_DIR = Path("/etc/apt/sources.list.d")
SOURCES_LIST = Path("/etc/apt/sources.list")


def add_deb_src(sources_dir: Path = SOURCES_DIR, sources_list: Path = SOURCES_LIST) -> list[Path]:
    """A `deb-src` entry for every configured `deb` one, in deb822 `.sources` files and in the
    one-line `sources.list`; returns the files changed (entries already there are kept)."""
    changed = []
    for path in sorted(sources_dir.glob("*.sources")):
        text = path.read_text()
        new = re.sub(r"^Types:[ \t]*deb[ \t]*$", "Types: deb deb-src", text, flags=re.M)
        if new != text:
            path.write_text(new)
            changed.append(path)
    if sources_list.is_file():
        lines = sources_list.read_text().splitlines()
        have = {ln.strip() for ln in lines}
        extra = [src for ln in lines if ln.strip().startswith("deb ")
                 if (src := "deb-src " + ln.strip()[4:]) not in have]
        if extra:
            sources_list.write_text("\n".join([*lines, *extra]) + "\n")
            changed.append(sources_list)
    return changed


def enable_deb_src() -> None:
    """`apt-get source` needs the Sources indexes of the configured mirror."""
    add_deb_src()
    subprocess.run(["apt-get", "update", "-qq"], check=True)


def selected(repos: dict[str, RepoSpec], args: list[str]) -> dict[str, RepoSpec]:
    """The repositories named (by words separated by spaces or commas; 1 or all: every one)."""
    names = " ".join(args).replace(",", " ").split()
    if not names or names in (["1"], ["all"]):
        return repos
    unknown = sorted(set(names) - set(repos))
    if unknown:
        raise SystemExit(f"fetch_snapshots: unknown repositories {unknown} "
                         f"(repos.yaml has {sorted(repos)})")
    return {n: repos[n] for n in names}


def fetch(corpus: Path, cache: Path, names: list[str]) -> int:
    repos = load_repos(corpus / "repos.yaml")
    wanted = selected(repos, names)
    if any(origin_of(spec) == "debian" for spec in wanted.values()):
        enable_deb_src()
    store = SnapshotStore(cache, repos)
    failures = 0
    for name, spec in wanted.items():
        origin = origin_of(spec)
        if origin not in ("sdist", "debian"):
            print(f"{name}: {origin} origin; fetched at run time", flush=True)
            continue
        try:
            snap = store.fetch(name, origin)
            problems = store.verify(snap)
            setup = [expand_tree(list(c), {"python": sys.executable}) for c in spec.setup]
            store.ensure_setup(snap, setup, dict(os.environ))
        except CopecaError as exc:
            print(f"{name}: {exc}", flush=True)
            failures += 1
            continue
        if problems:
            print(f"{name}: " + "; ".join(problems), flush=True)
            failures += 1
            continue
        print(f"{name}: {snap.source} → commit {snap.commit[:12]}"
              f"{' (set-up done)' if setup else ''}", flush=True)
    return 1 if failures else 0


if __name__ == "__main__":
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    sys.exit(fetch(Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3:]))
