"""The snapshot cache: one bare git repo per repository origin, from which every run gets a
worktree. Git pins are mirrors, sdist and Debian pins one deterministic commit, local pins a
mirror of the user's clone. Fetching may use the network; everything after it is offline."""

from __future__ import annotations

import datetime as dt
import json
import os
import shlex
import subprocess
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Literal

from copeca_action._util.hashing import sha256_json
from copeca_action._util.model import RecordModel
from copeca_action._util.paths import corpus_dir
from copeca_action.errors import WorkspaceError
from copeca_action.scenario import LocalPin, RepoSpec
from copeca_action.workspace._debian import download_orig, find_local_orig, snapshot_debian
from copeca_action.workspace._git import git, has_commit, rev_parse
from copeca_action.workspace._lock import file_lock
from copeca_action.workspace._sdist import (
    download_sdist,
    find_local_sdist,
    snapshot_sdist,
)
from copeca_action.workspace._worktree import add_worktree

Origin = Literal["sdist", "debian", "local", "git"]
ORIGIN_ORDER: tuple[Origin, ...] = ("sdist", "debian", "local", "git")
"""A repository's snapshot comes from the first origin it has, in this order (the ones that
work offline from a registry file first)."""


class Snapshot(RecordModel):
    """One fetched repository origin: where its bare repo is and the commit it pins."""

    repo: str
    origin: Origin
    git_dir: str
    """Absolute path of the bare repository worktrees are added from."""
    commit: str
    """The pinned commit (sdist, debian: the deterministic snapshot commit)."""
    source: str
    """The URL, sdist/Debian file name + sha256, or local path it came from."""
    fetched_at: dt.datetime


def default_cache_dir() -> Path:
    """COPECA_CACHE_DIR, else $XDG_CACHE_HOME/copeca-action, else ~/.cache/copeca-action."""
    if env := os.environ.get("COPECA_CACHE_DIR"):
        return Path(env)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "copeca-action"


def origin_of(spec: RepoSpec, commit_override: str | None = None) -> Origin:
    """The origin a run uses: a task that overrides the commit needs git (or a local clone)."""
    order: Sequence[Origin] = ("local", "git") if commit_override else ORIGIN_ORDER
    for origin in order:
        if getattr(spec, origin) is not None:
            return origin
    raise WorkspaceError("a task overrides the commit but its repository has no git or local "
                         "origin to take that commit from")


class SnapshotStore:
    """The cache folder: `downloads/` (sdist and Debian tarballs), `repos/<repo>.<origin>.git`
    (bare repos) with a `.json` beside each, `setup/` (per-snapshot set-up folders)."""

    def __init__(self, root: Path, repos: Mapping[str, RepoSpec],
                 sdist_dirs: Sequence[Path] | None = None,
                 repos_dir: Path | None = None) -> None:
        self.root = root.resolve()
        self.repos = dict(repos)
        self.repos_dir = repos_dir
        """The folder of repos.yaml: a relative `local.path` is read from there (None: the
        current folder)."""
        self.downloads = self.root / "downloads"
        default_dirs = [corpus_dir() / "snapshots", self.downloads]
        self.sdist_dirs = [Path(d) for d in (sdist_dirs or [])] + default_dirs

    # ---------------------------------------------------------------- paths

    def spec(self, repo: str) -> RepoSpec:
        try:
            return self.repos[repo]
        except KeyError:
            known = ", ".join(sorted(self.repos)) or "none"
            raise WorkspaceError(f"repository {repo!r} is not in repos.yaml (known: {known})"
                                 ) from None

    def git_dir(self, repo: str, origin: Origin) -> Path:
        return self.root / "repos" / f"{repo}.{origin}.git"

    def _meta_path(self, repo: str, origin: Origin) -> Path:
        return self.root / "repos" / f"{repo}.{origin}.json"

    # ---------------------------------------------------------------- fetch / get

    def fetch(self, repo: str, origin: Origin | None = None, *, network: bool = True,
              refresh: bool = False) -> Snapshot:
        """Make the snapshot available (idempotent). `network=False` uses only files already
        on this machine (the corpus's snapshots/ folder, the download cache, local clones)."""
        spec = self.spec(repo)
        origin = origin or origin_of(spec)
        with file_lock(self.root / "locks" / f"{repo}.{origin}.lock"):
            existing = self._read_meta(repo, origin)
            if existing is not None and not refresh and self._still_valid(existing, spec):
                return existing
            if origin == "sdist":
                return self._fetch_sdist(repo, spec, network)
            if origin == "debian":
                return self._fetch_debian(repo, spec, network)
            if origin == "git":
                return self._fetch_git(repo, spec, network)
            return self._fetch_local(repo, spec)

    def get(self, repo: str, commit_override: str | None = None) -> Snapshot:
        """The snapshot a run needs, fetched offline if possible; never uses the network."""
        spec = self.spec(repo)
        origin = origin_of(spec, commit_override)
        try:
            snap = self.fetch(repo, origin, network=False)
        except WorkspaceError as exc:
            raise WorkspaceError(f"no snapshot of {repo!r} ({origin}) in {self.root}: {exc}. "
                                 f"Run `copeca-action snapshot fetch {repo}` first") from exc
        if commit_override and not has_commit(Path(snap.git_dir), commit_override):
            raise WorkspaceError(f"commit {commit_override} is not in the {origin} snapshot of "
                                 f"{repo!r} ({snap.source}); fetch it again or fix the task's "
                                 "`commit`")
        if commit_override:
            snap = snap.model_copy(update={"commit": commit_override})
        return snap

    def _still_valid(self, snap: Snapshot, spec: RepoSpec) -> bool:
        gd = Path(snap.git_dir)
        if not gd.is_dir() or not has_commit(gd, snap.commit):
            return False
        if snap.origin == "git":
            return spec.git is not None and snap.commit == spec.git.commit
        if snap.origin == "sdist":
            return spec.sdist is not None and spec.sdist.sha256 in snap.source
        if snap.origin == "debian":
            return spec.debian is not None and spec.debian.sha256 in snap.source
        return True  # local: refreshed explicitly (refresh=True) to pick up a new HEAD

    def _fetch_sdist(self, repo: str, spec: RepoSpec, network: bool) -> Snapshot:
        pin = spec.sdist
        assert pin is not None
        return self._fetch_archive(
            repo, "sdist", pin.sha256, f"the sdist {pin.name} {pin.version}", network,
            find=lambda: find_local_sdist(pin, self.sdist_dirs),
            download=lambda: download_sdist(pin, self.downloads),
            snapshot=lambda archive, git_dir: snapshot_sdist(archive, pin, git_dir))

    def _fetch_debian(self, repo: str, spec: RepoSpec, network: bool) -> Snapshot:
        pin = spec.debian
        assert pin is not None
        return self._fetch_archive(
            repo, "debian", pin.sha256, f"the Debian tarball {pin.filename}", network,
            find=lambda: find_local_orig(pin, self.sdist_dirs),
            download=lambda: download_orig(pin, self.downloads),
            snapshot=lambda archive, git_dir: snapshot_debian(archive, pin, git_dir))

    def _fetch_archive(self, repo: str, origin: Origin, sha256: str, label: str,
                       network: bool, *, find: Callable[[], Path | None],
                       download: Callable[[], Path],
                       snapshot: Callable[[Path, Path], str]) -> Snapshot:
        """A pinned archive (sdist or Debian tarball): found locally or downloaded, checked,
        unpacked into one deterministic commit."""
        archive = find()
        if archive is None:
            if not network:
                raise WorkspaceError(f"{label} (sha256 {sha256[:12]}…) is not in "
                                     + ", ".join(str(d) for d in self.sdist_dirs))
            archive = download()
        git_dir = self.git_dir(repo, origin)
        commit = snapshot(archive, git_dir)
        return self._write_meta(Snapshot(
            repo=repo, origin=origin, git_dir=str(git_dir), commit=commit,
            source=f"{archive.name} sha256:{sha256}", fetched_at=_now()))

    def _fetch_git(self, repo: str, spec: RepoSpec, network: bool) -> Snapshot:
        pin = spec.git
        assert pin is not None
        git_dir = self.git_dir(repo, "git")
        if not git_dir.is_dir():
            if not network and not _is_local_url(pin.url):
                raise WorkspaceError(f"no mirror of {pin.url} yet")
            git_dir.parent.mkdir(parents=True, exist_ok=True)
            git(["clone", "--quiet", "--mirror", pin.url, str(git_dir)])
        elif not has_commit(git_dir, pin.commit) and (network or _is_local_url(pin.url)):
            # the pin's URL, not the mirror's `origin` (whose config the harness never reads)
            git(["fetch", "--quiet", "--prune", pin.url, "+refs/*:refs/*"], git_dir=git_dir)
        if not has_commit(git_dir, pin.commit):
            raise WorkspaceError(f"commit {pin.commit} is not in the mirror of {pin.url}: the "
                                 "pin is wrong, or the commit was removed upstream")
        return self._write_meta(Snapshot(repo=repo, origin="git", git_dir=str(git_dir),
                                         commit=pin.commit, source=pin.url, fetched_at=_now()))

    def _fetch_local(self, repo: str, spec: RepoSpec) -> Snapshot:
        pin = spec.local
        assert pin is not None
        src = local_clone(repo, pin, self.repos_dir)
        head = rev_parse("HEAD", cwd=src)
        git_dir = self.git_dir(repo, "local")
        if not git_dir.is_dir():
            git_dir.parent.mkdir(parents=True, exist_ok=True)
            git(["clone", "--quiet", "--mirror", str(src.resolve()), str(git_dir)])
        if not has_commit(git_dir, head):
            git(["fetch", "--quiet", str(src.resolve()), head], git_dir=git_dir)
        git(["update-ref", "refs/copeca/local-head", head], git_dir=git_dir)
        return self._write_meta(Snapshot(repo=repo, origin="local", git_dir=str(git_dir),
                                         commit=head, source=str(src.resolve()),
                                         fetched_at=_now()))

    # ---------------------------------------------------------------- metadata

    def _read_meta(self, repo: str, origin: Origin) -> Snapshot | None:
        path = self._meta_path(repo, origin)
        if not path.is_file():
            return None
        try:
            return Snapshot.model_validate_json(path.read_text())
        except ValueError:
            return None

    def _write_meta(self, snap: Snapshot) -> Snapshot:
        path = self._meta_path(snap.repo, snap.origin)
        tmp = path.with_suffix(".json.tmp")
        tmp.write_text(snap.model_dump_json(indent=2) + "\n")
        os.replace(tmp, path)
        return snap

    def snapshots(self) -> list[Snapshot]:
        out = []
        for path in sorted((self.root / "repos").glob("*.json")):
            try:
                out.append(Snapshot.model_validate_json(path.read_text()))
            except ValueError:
                continue
        return out

    # ---------------------------------------------------------------- verify

    def verify(self, snap: Snapshot) -> list[str]:
        """Problems with one snapshot (empty = sound): the pin still matches, the commit is
        present and its objects are intact; an sdist is re-hashed and re-derived."""
        problems: list[str] = []
        gd = Path(snap.git_dir)
        spec = self.repos.get(snap.repo)
        if not gd.is_dir():
            return [f"{snap.repo}: bare repo {gd} is missing"]
        if not has_commit(gd, snap.commit):
            return [f"{snap.repo}: commit {snap.commit} is missing from {gd}"]
        fsck = git(["fsck", "--no-dangling", "--connectivity-only"], git_dir=gd, check=False)
        if fsck.returncode != 0:
            problems.append(f"{snap.repo}: git fsck failed: {fsck.stderr.strip()[:300]}")
        if spec is None:
            problems.append(f"{snap.repo}: no longer in repos.yaml")
        elif snap.origin == "git" and (spec.git is None or spec.git.commit != snap.commit):
            problems.append(f"{snap.repo}: the git pin changed; fetch again")
        elif snap.origin == "sdist":
            problems += self._verify_sdist(snap, spec)
        elif snap.origin == "debian":
            problems += self._verify_debian(snap, spec)
        return problems

    def _verify_debian(self, snap: Snapshot, spec: RepoSpec) -> list[str]:
        pin = spec.debian
        if pin is None:
            return [f"{snap.repo}: the Debian pin changed; fetch again"]
        return self._verify_archive(snap, "Debian tarball", pin.sha256,
                                    lambda: find_local_orig(pin, self.sdist_dirs),
                                    lambda archive, probe: snapshot_debian(archive, pin, probe))

    def _verify_sdist(self, snap: Snapshot, spec: RepoSpec) -> list[str]:
        pin = spec.sdist
        if pin is None:
            return [f"{snap.repo}: the sdist pin changed; fetch again"]
        return self._verify_archive(snap, "sdist", pin.sha256,
                                    lambda: find_local_sdist(pin, self.sdist_dirs),
                                    lambda archive, probe: snapshot_sdist(archive, pin, probe))

    def _verify_archive(self, snap: Snapshot, kind: str, sha256: str,
                        find: Callable[[], Path | None],
                        unpack: Callable[[Path, Path], str]) -> list[str]:
        """A pinned archive (`find` returns it only when its sha256 matches) must still
        unpack to the snapshot's commit."""
        if sha256 not in snap.source:
            return [f"{snap.repo}: the {kind} pin changed; fetch again"]
        archive = find()
        if archive is None:
            return [f"{snap.repo}: the {kind} with sha256 {sha256[:12]}… is gone from the "
                    "cache (the snapshot itself is intact)"]
        probe = self.root / "repos" / f".verify-{snap.repo}.git"
        try:
            again = unpack(archive, probe)
        finally:
            _rmtree(probe)
        if again != snap.commit:
            return [f"{snap.repo}: unpacking the {kind} again gives commit {again}, the cache "
                    f"holds {snap.commit}"]
        return []

    # ---------------------------------------------------------------- set-up once

    def ensure_setup(self, snap: Snapshot, commands: Sequence[Sequence[str]],
                     env: Mapping[str, str], timeout_s: float = 1800) -> Path | None:
        """Run the repository's `setup` commands once per snapshot (not per run), in a folder
        of their own checked out at the snapshot commit; returns that folder (None when the
        repository has no set-up). A failure raises WorkspaceError and is retried next time."""
        if not commands:
            return None
        key = sha256_json([snap.commit, [list(c) for c in commands]])[:12]
        folder = self.root / "setup" / f"{snap.repo}-{snap.commit[:12]}-{key}"
        stamp = folder.with_suffix(".done")
        with file_lock(folder.with_suffix(".lock")):
            if stamp.is_file():
                return folder
            add_worktree(Path(snap.git_dir), snap.commit, folder)
            log = []
            for argv in commands:
                expanded = [a.replace("{setup_dir}", str(folder)) for a in argv]
                try:
                    proc = subprocess.run(expanded, cwd=folder, env=dict(env), text=True,
                                          capture_output=True, timeout=timeout_s, check=False,
                                          stdin=subprocess.DEVNULL)
                except (OSError, subprocess.TimeoutExpired) as exc:
                    raise WorkspaceError(f"{snap.repo}: set-up command {shlex.join(expanded)} "
                                         f"could not run: {exc}") from exc
                log.append({"argv": expanded, "exit_code": proc.returncode})
                if proc.returncode != 0:
                    raise WorkspaceError(f"{snap.repo}: set-up command {shlex.join(expanded)} "
                                         f"failed (exit {proc.returncode}): "
                                         f"{(proc.stderr or proc.stdout).strip()[-500:]}")
            stamp.write_text(json.dumps({"commands": log, "at": _now().isoformat()}) + "\n")
        return folder


def local_clone(repo: str, pin: LocalPin, repos_dir: Path | None) -> Path:
    """The clone a `local:` pin names: a relative path is read from `repos_dir` (the folder
    of repos.yaml; None: the current folder). Raises WorkspaceError when it is no git
    repository."""
    src = Path(os.path.expanduser(pin.path))
    if not src.is_absolute() and repos_dir is not None:
        src = repos_dir / src
    if not (src / ".git").exists() and not (src / "HEAD").exists():
        raise WorkspaceError(f"local pin {pin.path} of {repo!r} ({src.resolve()}) is not a "
                             "git repository")
    return src


def _is_local_url(url: str) -> bool:
    return url.startswith(("/", "file://", "./", "../"))


def _rmtree(path: Path) -> None:
    import shutil

    if path.exists():
        shutil.rmtree(path, ignore_errors=True)


def _now() -> dt.datetime:
    return dt.datetime.now(dt.UTC).replace(microsecond=0)
