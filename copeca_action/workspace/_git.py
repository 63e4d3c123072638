"""Running git: one place, a fixed environment, errors that say which command failed.

The harness's git never obeys configuration an agent could have written. An agent may write
its worktree (a `.git` of its own, a `.gitattributes`) and, through git, the snapshot's
repository; a `core.fsmonitor`, a hook, a `filter` driver or a `diff.external` planted there
would otherwise run as the harness, outside every sandbox. So:

- a snapshot's bare repository is reached only through a *view* (`store_view`): a folder of
  the harness's own, in a private place no sandbox shows, with a `config` the harness wrote
  and links to the repository's `objects`, `refs`, `packed-refs` and `worktrees`; the
  repository's own `config`, `hooks` and `info` are never read;
- a worktree is reached only as `GIT_DIR` = a view of its own (HEAD and index, in the same
  private place), `GIT_COMMON_DIR` = the store's view and `GIT_WORK_TREE` = the folder: never
  through the worktree's `.git` or the admin folder it names (`commondir`, `gitdir`);
- every call also switches off what runs commands (`HARDENING`), ignores the user's and the
  system's config, and gets an allow-listed environment (no API key, no token).
"""

from __future__ import annotations

import atexit
import contextlib
import hashlib
import json
import os
import shutil
import stat
import subprocess
import tempfile
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path

from copeca_action._util.scrub import register_private_dir
from copeca_action.errors import WorkspaceError

SNAPSHOT_IDENTITY = {
    "GIT_AUTHOR_NAME": "copeca-action",
    "GIT_AUTHOR_EMAIL": "snapshots@copeca-action.invalid",
    "GIT_AUTHOR_DATE": "2000-01-01T00:00:00+0000",
    "GIT_COMMITTER_NAME": "copeca-action",
    "GIT_COMMITTER_EMAIL": "snapshots@copeca-action.invalid",
    "GIT_COMMITTER_DATE": "2000-01-01T00:00:00+0000",
}
"""Fixed identity and date: the same files always give the same snapshot commit id."""

_BASE_CONFIG = ("-c", "core.autocrlf=false", "-c", "core.safecrlf=false",
                "-c", "core.filemode=true", "-c", "core.symlinks=true",
                "-c", "gc.auto=0", "-c", "advice.detachedHead=false",
                "-c", "init.defaultBranch=main", "-c", "commit.gpgsign=false")
HARDENING = ("-c", "core.fsmonitor=false", "-c", "core.hooksPath=/dev/null",
             "-c", "core.untrackedCache=false", "-c", "core.pager=cat",
             "-c", "core.attributesFile=/dev/null", "-c", "protocol.ext.allow=never",
             "-c", "submodule.recurse=false", "-c", "log.showSignature=false",
             "-c", "status.submoduleSummary=false")
"""What could run a command in a git call, off (a planted config cannot override `-c`). The
rest (`filter.<driver>.*`, `diff.<driver>.*`, includes) cannot be switched off by name: the
views' config, which only the harness writes, defines none of them; diffs also pass
`--no-ext-diff --no-textconv`."""
ENV_KEPT = ("PATH", "HOME", "TMPDIR", "TZ", "LANG", "SSH_AUTH_SOCK", "SSL_CERT_FILE",
            "SSL_CERT_DIR", "CURL_CA_BUNDLE", "http_proxy", "https_proxy", "HTTP_PROXY",
            "HTTPS_PROXY", "no_proxy", "NO_PROXY", "all_proxy", "ALL_PROXY")
"""The only variables of the harness's environment git gets: none of its keys or tokens."""


def git_env(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """`ENV_KEPT` of the host env (no secret, no GIT_* that would redirect git), without the
    user's and the system's git config."""
    env = {k: v for k, v in os.environ.items() if k in ENV_KEPT}
    env.update({"GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull,
                "GIT_TERMINAL_PROMPT": "0", "LC_ALL": "C"})
    env.update(extra or {})
    return env


_VIEW_CONFIG = "[core]\n\trepositoryformatversion = 0\n\tbare = true\n"
_STORE_LINKS = ("objects", "refs", "packed-refs", "worktrees")
_views: dict[str, Path] = {}
_views_lock = threading.Lock()


VIEWS_PREFIX = "copeca-git-"
_OWNER = "owner.json"


def views_root() -> Path:
    """This process's folder of views (private: blank in every sandbox; removed at exit).
    It records its owner (`owner.json`), and the first call sweeps the folders of owners
    that died without removing theirs (`sweep_stale_views`)."""
    with _views_lock:
        root = _views.get("")
        if root is None or not root.is_dir():
            if root is None:
                sweep_stale_views()
            root = Path(tempfile.mkdtemp(prefix=VIEWS_PREFIX))
            (root / f"{_OWNER}.tmp").write_text(json.dumps(_owner_id(os.getpid())))
            os.replace(root / f"{_OWNER}.tmp", root / _OWNER)
            register_private_dir(root)
            atexit.register(shutil.rmtree, root, True)
            _views[""] = root
        return root


def view_folders() -> list[Path]:
    """Every folder of git views of this user's harness processes (this one's included),
    real folders only: what sandboxed code must never write."""
    tmp = Path(tempfile.gettempdir())
    found = {views_root()}
    with contextlib.suppress(OSError):
        for entry in os.scandir(tmp):
            if entry.name.startswith(VIEWS_PREFIX) and entry.is_dir(follow_symlinks=False):
                with contextlib.suppress(OSError):
                    if entry.stat(follow_symlinks=False).st_uid == os.getuid():
                        found.add(Path(entry.path))
    return sorted(found)


def _read_text(path: str) -> str | None:
    try:
        with open(path, encoding="ascii", errors="replace") as fh:
            return fh.read()
    except OSError:
        return None


def _owner_id(pid: int) -> dict[str, str | int] | None:
    """What names a live process across pid reuse and reboots: its pid, its start time (in
    clock ticks since boot), the boot and its pid namespace; None when it is not running."""
    stat_text = _read_text(f"/proc/{pid}/stat")
    boot = _read_text("/proc/sys/kernel/random/boot_id")
    if stat_text is None or boot is None:
        return None
    fields = stat_text[stat_text.rfind(")") + 2:].split()
    try:
        pidns = os.readlink("/proc/self/ns/pid")
    except OSError:
        pidns = ""
    return {"pid": pid, "start": fields[19] if len(fields) > 19 else "",
            "boot": boot.strip(), "pidns": pidns}


def _owner_dead(owner: object) -> bool:
    """Whether the recorded owner is certainly gone: another boot, or (in our pid
    namespace) no process with that pid and start time. Anything unsure counts as alive."""
    if not isinstance(owner, dict) or not isinstance(owner.get("pid"), int):
        return False
    here = _owner_id(os.getpid())
    if here is None:
        return False
    if owner.get("boot") != here["boot"]:
        return True
    if owner.get("pidns") != here["pidns"] or owner["pid"] <= 0:
        return False
    now = _owner_id(owner["pid"])
    return now is None or now["start"] != owner.get("start")


def sweep_stale_views(tmp: Path | None = None) -> list[Path]:
    """Remove the view folders (`copeca-git-*` in the temporary folder) that harness
    processes killed before their exit (SIGKILL, OOM) left: only real folders (never a
    link, never followed), owned by this user, whose `owner.json` names a process that is
    certainly dead (`_owner_dead`). A folder without a readable owner is left alone (a run
    being set up, another version's). The folders removed."""
    tmp = Path(tempfile.gettempdir()) if tmp is None else tmp
    removed: list[Path] = []
    try:
        entries = list(os.scandir(tmp))
    except OSError:
        return removed
    for entry in entries:
        if not entry.name.startswith(VIEWS_PREFIX):
            continue
        try:
            info = entry.stat(follow_symlinks=False)
        except OSError:
            continue
        if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid():
            continue
        try:
            fd = os.open(os.path.join(entry.path, _OWNER), os.O_RDONLY | os.O_NOFOLLOW)
            with os.fdopen(fd, "rb") as fh:
                owner = json.loads(fh.read(4096))
        except (OSError, ValueError):
            continue
        if _owner_dead(owner):
            # rmtree never follows a link (the views' links lead into the snapshot cache)
            shutil.rmtree(entry.path, ignore_errors=True)
            removed.append(Path(entry.path))
    return removed


def _key(path: Path) -> str:
    return hashlib.sha256(str(path).encode()).hexdigest()[:16]


def store_view(git_dir: Path) -> Path:
    """The GIT_DIR the harness uses for the repository `git_dir` (see the module's doc):
    its data through links, its config and HEAD the harness's own."""
    git_dir = git_dir.resolve()
    view = views_root() / f"store-{_key(git_dir)}"
    if (view / "config").is_file():
        return view
    with _views_lock:
        if not (view / "config").is_file():
            view.mkdir(exist_ok=True)
            for name in _STORE_LINKS:
                link = view / name
                if not link.is_symlink():
                    link.symlink_to(git_dir / name)
            # the harness names its commits: the repository's own HEAD is never needed
            (view / "HEAD").write_text("ref: refs/heads/main\n")
            (view / "config.tmp").write_text(_VIEW_CONFIG)
            os.replace(view / "config.tmp", view / "config")
    return view


def worktree_view(work_tree: Path) -> Path:
    """The private GIT_DIR of the worktree at `work_tree` (its HEAD and index)."""
    return views_root() / f"worktree-{_key(work_tree.resolve())}"


def git_command(git_dir: Path | None = None) -> list[str]:
    """`git` with the fixed and hardening options (and the view of `git_dir`), for callers
    that run it themselves (binary output) with `git_env()`."""
    argv = ["git", *_BASE_CONFIG, *HARDENING]
    return argv if git_dir is None else [*argv, "--git-dir", str(store_view(git_dir))]


def git(args: Sequence[str], *, cwd: Path | None = None, git_dir: Path | None = None,
        work_tree: Path | None = None, env: Mapping[str, str] | None = None,
        input_text: str | None = None, check: bool = True) -> subprocess.CompletedProcess[str]:
    """Run `git ARGS`; a failure raises WorkspaceError quoting the command and its stderr.

    `git_dir`: a repository the harness made (a snapshot), reached through its view.
    `work_tree` (with `git_dir`): a worktree of it, reached through the worktree's own view
    and run in that folder. Without either, git finds its repository from `cwd` as usual
    (only for repositories no agent writes: the user's clone of a `local:` pin)."""
    extra = dict(env or {})
    if work_tree is not None:
        assert git_dir is not None, "a worktree is reached through its repository"
        extra.update(GIT_DIR=str(worktree_view(work_tree)),
                     GIT_COMMON_DIR=str(store_view(git_dir)), GIT_WORK_TREE=str(work_tree))
        cwd, git_dir = work_tree, None
    argv = [*git_command(git_dir), *args]
    try:
        proc = subprocess.run(argv, cwd=cwd, env=git_env(extra), input=input_text,
                              capture_output=True, text=True, check=False,
                              stdin=None if input_text is not None else subprocess.DEVNULL)
    except FileNotFoundError as exc:
        raise WorkspaceError("git is not installed (it is needed for snapshots and "
                             "worktrees; e.g. `apt-get install git`)") from exc
    if check and proc.returncode != 0:
        shown = " ".join(args)
        raise WorkspaceError(f"`git {shown}` failed (exit {proc.returncode}): "
                             f"{proc.stderr.strip() or proc.stdout.strip()}")
    return proc


def has_commit(git_dir: Path, commit: str) -> bool:
    return git(["cat-file", "-e", f"{commit}^{{commit}}"], git_dir=git_dir,
               check=False).returncode == 0


def rev_parse(ref: str, *, cwd: Path | None = None, git_dir: Path | None = None) -> str:
    return git(["rev-parse", "--verify", f"{ref}^{{commit}}"], cwd=cwd,
               git_dir=git_dir).stdout.strip()
