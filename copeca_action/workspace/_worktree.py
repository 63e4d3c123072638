"""Per-run worktrees: `git worktree add --detach` from a snapshot (tens of ms, no copy of
history), planted bugs committed *into* the snapshot commit so neither `git diff` nor
`git log` shows them, the agent's patch captured, and cleanup that survives crashes."""

from __future__ import annotations

import functools
import hashlib
import io
import shutil
import subprocess
import tarfile
from collections.abc import Mapping, Sequence
from pathlib import Path

from copeca_action._util.model import RecordModel
from copeca_action.errors import WorkspaceError
from copeca_action.scenario import Mutation
from copeca_action.workspace._git import git, git_command, git_env, worktree_view
from copeca_action.workspace._lock import file_lock
from copeca_action.workspace._sdist import extract_tar

INSTRUCTION_FILES = ("CLAUDE.md", "AGENTS.md", "CLAUDE.local.md", ".claude", "AGENTS.override.md")
"""Files an agent CLI reads as instructions on its own: their presence changes behaviour."""


class Worktree(RecordModel):
    """A checked-out run folder."""

    path: str
    git_dir: str
    """The snapshot's bare repo the worktree belongs to."""
    snapshot_commit: str
    """The pinned commit asked for."""
    commit: str
    """HEAD as the agent sees it (differs from snapshot_commit when bugs were planted)."""


def add_worktree(git_dir: Path, commit: str, dest: Path,
                 mutations: Sequence[Mutation] = ()) -> Worktree:
    """Check `commit` out at `dest` (detached) and plant `mutations`."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    if dest.exists() or dest.is_symlink():
        remove_worktree(git_dir, dest)
    dest.mkdir()
    new_view(dest, commit)
    git(["checkout", "--quiet", "--force", "--detach", commit], git_dir=git_dir,
        work_tree=dest)
    head = plant(dest, mutations, git_dir) if mutations else commit
    publish(git_dir, dest)
    return Worktree(path=str(dest), git_dir=str(git_dir), snapshot_commit=commit, commit=head)


def new_view(worktree: Path, head: str) -> None:
    """A fresh private GIT_DIR for `worktree` (see `worktree_view`): HEAD at `head`, no
    index yet."""
    view = worktree_view(worktree)
    remove_path(view)
    view.mkdir()
    (view / "HEAD").write_text(head + "\n")


def remove_path(path: Path) -> None:
    """Delete a file, a link (never what it leads to) or a folder, if there."""
    if path.is_symlink() or path.is_file():
        path.unlink(missing_ok=True)
    elif path.is_dir():
        shutil.rmtree(path, ignore_errors=True)


def _admin_dir(git_dir: Path, worktree: Path) -> Path:
    worktree = worktree.resolve()
    tag = hashlib.sha256(str(worktree).encode()).hexdigest()[:8]
    return git_dir.resolve() / "worktrees" / f"{worktree.name}-{tag}"


def publish(git_dir: Path, worktree: Path) -> None:
    """Give the agent's own git its way into the worktree afresh: a `.git` file naming an
    admin folder in the repository (`gitdir`, `commondir`, and HEAD and index as the
    harness's view has them). Whatever a run left in their place (a `.git` folder of its
    own, a rewritten `commondir`, its reflog and staged files) is gone. The harness itself
    never reads them."""
    admin = _admin_dir(git_dir, worktree)
    remove_path(admin)
    admin.mkdir(parents=True)
    view = worktree_view(worktree)
    (admin / "gitdir").write_text(f"{worktree.resolve() / '.git'}\n")
    (admin / "commondir").write_text("../..\n")
    shutil.copyfile(view / "HEAD", admin / "HEAD")
    if (view / "index").is_file():
        shutil.copyfile(view / "index", admin / "index")
    dotgit = worktree / ".git"
    remove_path(dotgit)
    dotgit.write_text(f"gitdir: {admin}\n")


def worktree_git_data(worktree: Path) -> tuple[Path, Path] | None:
    """The admin folder and the repository a worktree's `.git` names, when it names a
    folder `<repository>/worktrees/<name>` (None otherwise)."""
    try:
        text = (worktree / ".git").read_text()
    except OSError:
        return None
    if not text.startswith("gitdir: "):
        return None
    admin = Path(text[len("gitdir: "):].strip())
    if not admin.is_absolute() or admin.parent.name != "worktrees":
        return None
    return admin, admin.parent.parent


def check_mutations(text_of: dict[str, str], mutations: Sequence[Mutation]) -> list[str]:
    """Problems planting `mutations` into files whose text is given (preflight)."""
    problems = []
    for i, m in enumerate(mutations):
        text = text_of.get(m.file)
        if text is None:
            problems.append(f"mutations[{i}]: file {m.file} does not exist in the snapshot")
            continue
        count = text.count(m.search)
        if count != 1:
            problems.append(f"mutations[{i}]: `search` occurs {count} times in {m.file}; "
                            "it must occur exactly once")
    return problems


def read_file_at(git_dir: Path, commit: str, path: str) -> str | None:
    proc = git(["show", f"{commit}:{path}"], git_dir=git_dir, check=False)
    return proc.stdout if proc.returncode == 0 else None


def plant(worktree: Path, mutations: Sequence[Mutation], git_dir: Path) -> str:
    """Apply mutations and fold them into HEAD: a commit with HEAD's parents, message, author
    and dates, so history looks untouched. Returns the new HEAD (published: see `publish`)."""
    for i, m in enumerate(mutations):
        target = worktree / m.file
        try:
            text = target.read_text()
        except OSError as exc:
            raise WorkspaceError(f"mutations[{i}]: cannot read {m.file}: {exc}") from exc
        if text.count(m.search) != 1:
            raise WorkspaceError(f"mutations[{i}]: `search` occurs {text.count(m.search)} "
                                 f"times in {m.file}; it must occur exactly once")
        target.write_text(text.replace(m.search, m.replace, 1))
    files = sorted({m.file for m in mutations})
    at = functools.partial(git, git_dir=git_dir, work_tree=worktree)
    at(["add", "--", *files])
    tree = at(["write-tree"]).stdout.strip()
    fmt = "%an%x00%ae%x00%ad%x00%cn%x00%ce%x00%cd%x00%P"
    meta = at(["log", "-1", f"--format={fmt}", "--date=raw", "HEAD"])
    an, ae, ad, cn, ce, cd, parents = meta.stdout.rstrip("\n").split("\x00")
    message = at(["log", "-1", "--format=%B", "HEAD"]).stdout
    env = {"GIT_AUTHOR_NAME": an, "GIT_AUTHOR_EMAIL": ae, "GIT_AUTHOR_DATE": ad,
           "GIT_COMMITTER_NAME": cn, "GIT_COMMITTER_EMAIL": ce, "GIT_COMMITTER_DATE": cd}
    parent_args = [arg for p in parents.split() for arg in ("-p", p)]
    new = at(["commit-tree", tree, *parent_args, "-F", "-"], env=env,
             input_text=message).stdout.strip()
    at(["update-ref", "--no-deref", "HEAD", new])
    publish(git_dir, worktree)
    return new


def capture_patch(worktree: Path, base: str, git_dir: Path) -> str:
    """Everything the agent changed against `base`, new files included (binary-safe), read
    through the harness's view (`git_dir`: the repository the worktree was made from): no
    `.git`, config, attribute driver or hook the agent planted is obeyed. If new files
    cannot be staged, the tracked changes are still captured. A folder this process did
    not check out gets a view at `base` (every file is then hashed once)."""
    if not (worktree_view(worktree) / "HEAD").is_file():
        new_view(worktree, base)
    at = functools.partial(git, git_dir=git_dir, work_tree=worktree)
    added = at(["add", "-A", "--force", "."], check=False)
    if added.returncode != 0:
        at(["add", "-u", "."])
    patch = at(["diff", "--cached", "--binary", "--no-ext-diff", "--no-textconv", base]).stdout
    if added.returncode != 0:
        why = added.stderr.strip().splitlines()[0] if added.stderr.strip() else "unknown"
        patch = f"# copeca-action: new files not captured ({why})\n" + patch
    return patch


def head_of(worktree: Path, git_dir: Path) -> str:
    """HEAD as the harness last set it (an agent's own commits and checkouts aside)."""
    return git(["rev-parse", "--verify", "HEAD^{commit}"], git_dir=git_dir,
               work_tree=worktree).stdout.strip()


def instruction_files(worktree: Path) -> list[str]:
    """Agent instruction files at the top of the checkout (flagged on the run)."""
    return [name for name in INSTRUCTION_FILES if (worktree / name).exists()]


def files_in_tree(git_dir: Path | None, commit: str, files: Mapping[str, tuple[Path, str]],
                  *, cwd: Path | None = None) -> dict[str, str]:
    """Which of `files` (name → (file on disk, its path relative to the benchmark)) the
    commit's tree holds: the same content anywhere, or a file at that relative path (an
    older version of it). Name → the path in the tree. A repository that holds the
    benchmark's task files shows the agent the answers it is graded on. `git_dir`: a
    snapshot; else `cwd`, the user's clone of a `local:` pin (`validate`, before any
    snapshot is taken)."""
    if not files:
        return {}
    names = list(files)
    hashed = git(["hash-object", "--no-filters", "--stdin-paths"], git_dir=git_dir, cwd=cwd,
                 input_text="".join(f"{files[n][0]}\n" for n in names)).stdout.split()
    listing = git(["ls-tree", "-r", "-z", commit], git_dir=git_dir, cwd=cwd).stdout
    by_blob: dict[str, str] = {}
    paths: list[str] = []
    for entry in listing.split("\0"):
        meta, _, path = entry.partition("\t")
        parts = meta.split()
        if len(parts) == 3 and parts[1] == "blob":
            by_blob.setdefault(parts[2], path)
            paths.append(path)
    found: dict[str, str] = {}
    for name, blob in zip(names, hashed, strict=True):
        rel = files[name][1]
        same = by_blob.get(blob) or next(
            (p for p in paths if p == rel or p.endswith("/" + rel)), None)
        if same is not None:
            found[name] = same
    return found


def remove_worktree(git_dir: Path, path: Path) -> None:
    """Remove a run's worktree, its admin folder and its view; tolerant of half-made or
    already-deleted ones."""
    remove_path(path)
    remove_path(_admin_dir(git_dir, path))
    remove_path(worktree_view(path))


def prune_worktrees(git_dir: Path, under: Path | None = None) -> int:
    """Start-of-run cleanup after a crash: delete leftover run folders under `under` and
    forget worktrees whose folder is gone. Returns how many folders were removed."""
    removed = 0
    if under is not None and under.is_dir():
        for child in under.iterdir():
            remove_path(child)
            removed += 1
    with file_lock(git_dir / "copeca-worktree.lock"):
        git(["worktree", "prune"], git_dir=git_dir, check=False)
    return removed


def clean_tree(git_dir: Path, commit: str, root: Path) -> Path:
    """A read-only export of `commit` at `root/<commit>`, made once and shared (retrieval
    metrics read the tree the agent started from, not the one it edited)."""
    dest = root / commit
    if (dest / ".copeca-complete").is_file():
        return dest
    root.mkdir(parents=True, exist_ok=True)
    with file_lock(root / f"{commit}.lock"):
        if (dest / ".copeca-complete").is_file():
            return dest
        try:
            proc = subprocess.run([*git_command(git_dir), "archive", "--format=tar", commit],
                                  capture_output=True, check=False, env=git_env(),
                                  stdin=subprocess.DEVNULL)
        except FileNotFoundError as exc:
            raise WorkspaceError("git is not installed") from exc
        if proc.returncode != 0:
            raise WorkspaceError(f"git archive {commit} in {git_dir} failed: "
                                 f"{proc.stderr.decode(errors='replace').strip()}")
        if dest.exists():
            shutil.rmtree(dest)
        dest.mkdir()
        with tarfile.open(fileobj=io.BytesIO(proc.stdout)) as tar:
            extract_tar(tar, dest, git_dir)
        (dest / ".copeca-complete").touch()
    return dest
